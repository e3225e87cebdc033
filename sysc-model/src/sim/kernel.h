// SPDX-License-Identifier: MIT
// The process's SystemC kernel, stepped by the host (QEMU's virtual clock).
#pragma once

#include <cstdint>

namespace devmemsim::sim
{

// Run the kernel up to now_ns of host time; earlier times are ignored.
void step_to(uint64_t now_ns);
// Absolute host time (ns) of the next pending activity, or UINT64_MAX.
uint64_t deadline_ns();
// Current simulated time in ns.
uint64_t now_ns();

} // namespace devmemsim::sim
