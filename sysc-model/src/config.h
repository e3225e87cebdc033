// SPDX-License-Identifier: MIT
// Node configuration: the one schema for a node's hardware, read from TOML.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "node/faults.h"
#include "pcie/link.h"

namespace devmemsim
{

// A configuration problem. what() is one line naming the file (or the
// override), the key and the problem.
class ConfigError : public std::runtime_error
{
public:
	using std::runtime_error::runtime_error;
};

enum class Mode { Functional, Timed };

// The node's PCIe tree ([topology] in configs/node/default.toml;
// docs/architecture.md, "Node topology"). Resolved: every value is set,
// the ones the file left out taken from the [pcie] and [host] keys.
constexpr unsigned kMaxSockets = 2;
constexpr unsigned kMaxDevices = 32; // NICs, and as many GPUs

struct SocketConfig {
	std::string name;
	uint64_t mem_base = 0; // its host memory: from here to the next socket's base
	unsigned mem_gbps = 0; // host-memory bandwidth left to device DMA
	// what the root complex moves to and from host memory, per direction
	unsigned root_complex_gbps = 0;
};

// A root port: a named port of a socket's root complex. It carries one link.
struct RootPort {
	unsigned socket = 0;
	std::string name;
};

struct SwitchConfig {
	std::string name;
	RootPort on;
	pcie::LinkParams uplink; // switch <-> root port
	unsigned gbps = 0;	 // what its core forwards, all ports together; 0: no limit
};

struct DeviceConfig {
	std::string name;
	int on_switch = -1; // index into switches; -1: on root port `port`
	RootPort port;
	pcie::LinkParams link; // device <-> switch or root port
};

struct Topology {
	std::vector<SocketConfig> sockets; // 1 or 2
	unsigned inter_socket_gbps = 0;	   // per direction; with two sockets
	unsigned inter_socket_latency_ns = 0;
	std::vector<SwitchConfig> switches;
	std::vector<DeviceConfig> nics, gpus; // as many GPUs as NICs
};
enum class NicParser { Behavioural, Rtl };

struct NodeConfig {
	Mode mode = Mode::Functional;
	unsigned index = 0;		      // node.index
	unsigned nic_queues = 16;	      // nic.queues
	double nic_line_rate_gbps = 100;      // nic.line_rate_gbps (timed mode)
	uint64_t gpu_mem_size = 256ull << 20; // gpu.mem_size
	pcie::LinkParams link;		      // pcie.gen, .width, .mps, .mrrs, .rcb
	bool acs_redirect = false;	      // pcie.acs_redirect
	unsigned hop_latency_ns = 150;	      // pcie.hop_latency_ns (timed mode)
	// Capacities of the fabric's shared resources in Gbit/s (timed mode):
	// pcie.switch_gbps (0: non-blocking), pcie.root_complex_gbps,
	// host.mem_bandwidth_gbps.
	unsigned switch_gbps = 0;
	unsigned root_complex_gbps = 1024;
	unsigned host_mem_gbps = 1638;
	// nic.parser, nic.parser_clock_mhz (the RTL parser's clock)
	NicParser nic_parser = NicParser::Behavioural;
	unsigned nic_parser_clock_mhz = 500;
	// iommu.enabled, iommu.translation_ns: DMA remapping for transfers
	// that cross a root complex.
	bool iommu = false;
	unsigned iommu_ns = 100;
	FaultConfig faults; // [faults]: fault injection, all off by default
	// [topology]; empty: the default (topology_of() spells it out).
	Topology topology;
};

// The node's tree: cfg.topology, or when the configuration gives none,
// today's default: one socket "s0", switch "sw0" on its root port "rp0",
// one NIC "nic" and one GPU "gpu" under the switch, every link [pcie].
Topology topology_of(const NodeConfig &cfg);

// Read path (empty: defaults only), then apply overrides, each "key=value"
// with a dotted key and a TOML value (bare words are taken as strings).
// Unknown keys, wrong types and out-of-range values throw ConfigError.
NodeConfig load_config(const std::string &path, const std::vector<std::string> &overrides = {});

// Fault settings given at run time: "key=value" pairs separated by commas
// or blanks, keys of the [faults] table with or without the "faults."
// prefix. Keys not given take their defaults (off); "" turns every fault
// off. Throws ConfigError naming the key and the problem.
FaultConfig parse_fault_settings(const std::string &settings);

// The configuration as TOML that load_config reads back unchanged.
std::string to_toml(const NodeConfig &cfg);

const char *mode_name(Mode m);
const char *parser_name(NicParser p);

} // namespace devmemsim
