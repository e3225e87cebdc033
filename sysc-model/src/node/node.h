// SPDX-License-Identifier: MIT
// A node: the hardware of one emulated machine, its K NIC/GPU pairs on a
// PCIe fabric built from the node's topology.
#pragma once

#include <iosfwd>
#include <string>
#include <systemc>

#include "config.h"
#include "gpu/gpu.h"
#include "nic/nic.h"
#include "node/faults.h"
#include "node/msi.h"
#include "pcie/fabric.h"

namespace devmemsim
{

class Node : public sc_core::sc_module
{
public:
	// Which topologies a node accepts. Qemu: the trees QEMU can lay out
	// for the guest (at most 16 root ports in use, at most 32 devices
	// under a switch; node.cc, check_shape); Any: every tree the
	// [topology] schema allows, for hosts without QEMU (dms-sim).
	enum class Shape { Qemu, Any };

	// Throws ConfigError for a topology the shape refuses, and
	// std::logic_error once the model has run: the SystemC kernel is
	// global and cannot elaborate modules after its first step.
	Node(sc_core::sc_module_name name, const NodeConfig &cfg, Shape shape = Shape::Qemu);
	~Node() override;

	const NodeConfig &config() const { return cfg_; }
	unsigned pairs() const { return static_cast<unsigned>(nics.size()); }

	pcie::Fabric fabric;
	// Pair i is NIC i and GPU i, on fabric ports nic_port(i), gpu_port(i).
	sc_core::sc_vector<Nic> nics;
	sc_core::sc_vector<Gpu> gpus;
	// Between pair i's devices and their host (capi.cc): one injector per
	// pair, seeded with faults.seed + i, so pairs fail independently.
	sc_core::sc_vector<Faults> faults;
	// Every device's MSIs after its fault injector, on their way to the
	// host (capi.cc gives it the sink and says which a host call raised).
	MsiPost msi;

	// New fault settings for every pair (pair i's seed: cfg.seed + i).
	void configure_faults(const FaultConfig &cfg);

	// Counters of the whole node as one JSON object (docs/stats.md).
	std::string stats_json() const;
	void reset_counters();
	// The most work units one dms_node_step() can do on this node.
	uint64_t step_units_bound() const;

private:
	void bind_pair(unsigned i);
	void put_devices(std::ostream &o) const;

	NodeConfig cfg_;
};

} // namespace devmemsim
