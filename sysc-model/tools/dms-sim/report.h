// SPDX-License-Identifier: MIT
// dms-sim's output: one JSON document (docs/architecture.md, "dms-sim",
// describes it) and a one-screen human summary.
#pragma once

#include <string>

#include "sim.h"

namespace dms_sim
{

std::string report_json(const Simulation &sim, double wall_s);
std::string report_summary(const Simulation &sim, double wall_s);

} // namespace dms_sim
