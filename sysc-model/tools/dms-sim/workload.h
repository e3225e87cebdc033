// SPDX-License-Identifier: MIT
// dms-sim's workload: what runs on the nodes and how they are joined (the
// node hardware is the model's node TOML). Read from a workload TOML
// (configs/sim/bulk.toml and rr.toml document every key and its default)
// and --set overrides.
#pragma once

#include <string>
#include <vector>

#include "nic_driver.h"
#include "tcp_stream.h"

namespace dms_sim
{

enum class TrafficKind { Stream, RequestResponse };
enum class NetworkKind { Wire, Switch };

// Request/response messages (traffic.kind = "rr").
struct RrParams {
	uint32_t request_bytes = 4096;
	uint32_t response_bytes = 4096;
	unsigned outstanding = 1; // messages a client keeps in flight
	uint64_t messages = 1000; // per flow
};

struct NetworkParams {
	NetworkKind kind = NetworkKind::Wire;
	unsigned nodes = 2;
	uint64_t propagation_ps = 10'000; // each cable
	uint64_t switch_latency_ps = 0;	  // switch: forwarding decision to egress
	bool cut_through = false;	  // switch: forward from the first bit on
};

// One flow of the pattern: node src's pair p talks to node dst's pair p,
// for every pair p of the nodes.
struct FlowSpec {
	unsigned src, dst;
};

struct Workload {
	uint64_t duration_ps = 500'000'000; // run.duration_us
	uint64_t warmup_ps = 100'000'000;   // run.warmup_us: not in the goodput
	uint64_t host_memory_bytes = 64u << 20;
	TrafficKind kind = TrafficKind::Stream;
	std::string flows = "0->1"; // traffic.flows: a pattern or a list
	StreamParams stream;
	DriverParams driver;
	RrParams rr;
	NetworkParams net;
};

// Workload sections: a --set key starting with one of them is a workload
// key; any other is a node configuration key.
bool is_workload_key(const std::string &key);

// Throws std::runtime_error with one line naming the file or override,
// the key and the problem.
Workload load_workload(const std::string &path, const std::vector<std::string> &overrides);

// traffic.flows for the workload's node count: "ring" (node i to node
// i + 1 mod N), "incast" (every other node to node 0) or a list
// "0->1, 2->1"; throws std::runtime_error with one line.
std::vector<FlowSpec> flow_specs(const Workload &w);

} // namespace dms_sim
