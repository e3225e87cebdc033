// SPDX-License-Identifier: MIT
// dms-sim's workload: what runs on the nodes (the node hardware is the
// model's node TOML). Read from a workload TOML (configs/sim/bulk.toml
// documents every key and its default) and --set overrides.
#pragma once

#include <string>
#include <vector>

#include "nic_driver.h"
#include "tcp_stream.h"

namespace dms_sim
{

struct Workload {
	uint64_t duration_ps = 500'000'000; // run.duration_us
	uint64_t warmup_ps = 100'000'000;   // run.warmup_us: not in the goodput
	uint64_t host_memory_bytes = 64u << 20;
	uint64_t propagation_ps = 10'000; // wire.propagation_ns
	StreamParams stream;
	DriverParams driver;
};

// Workload sections: a --set key starting with one of them is a workload
// key; any other is a node configuration key.
bool is_workload_key(const std::string &key);

// Throws std::runtime_error with one line naming the file or override,
// the key and the problem.
Workload load_workload(const std::string &path, const std::vector<std::string> &overrides);

} // namespace dms_sim
