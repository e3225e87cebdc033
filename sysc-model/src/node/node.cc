// SPDX-License-Identifier: MIT
#include "node/node.h"

#include <sstream>
#include <stdexcept>

#include "sim/kernel.h"

namespace devmemsim
{
namespace
{

// Nodes share the process's SystemC kernel, which cannot elaborate new
// modules once it has run: every node of a process (dms-sim runs several)
// is built before the first step.
bool check_elaborating()
{
	if (sc_core::sc_get_status() != sc_core::SC_ELABORATION)
		throw std::logic_error("this process's devmemsim model has already run: build "
				       "every node before the first step");
	return true;
}

// A node's devices are one NIC and one GPU (capi.cc addresses them as
// "the NIC" and "the GPU") under one switch: the PCIe tree QEMU builds
// for the guest (tools/devmemsim/topology.py), which the model's routing
// must match. Sockets, link widths and capacities are the model's own.
// Other shapes wait for device-instance addressing in the C ABI.
bool check_qemu_shape(const NodeConfig &cfg)
{
	const Topology t = topology_of(cfg);
	if (t.nics.size() != 1 || t.switches.size() != 1 || t.nics[0].on_switch != 0 ||
	    t.gpus[0].on_switch != 0)
		throw ConfigError("topology: a node holds one NIC and one GPU under one switch "
				  "(as the guest sees it); other shapes are for the standalone "
				  "fabric until the C ABI addresses device instances");
	return true;
}

} // namespace

Node::Node(sc_core::sc_module_name name, const NodeConfig &cfg)
    : sc_core::sc_module((check_qemu_shape(cfg), check_elaborating(), name)), fabric("fabric", cfg),
      nic("nic", cfg), gpu("gpu", cfg), faults("faults", cfg.faults), cfg_(cfg)
{
	// Fabric ports in pcie::Port order.
	nic.dma.bind(fabric.dma);
	gpu.dma.bind(fabric.dma);
	fabric.bar_mem[pcie::kNic].bind(nic.bar_mem);
	fabric.bar_mem[pcie::kGpu].bind(gpu.bar_mem);
	faults.set_link_sink([this](bool up) { nic.set_link(up); });
	gpu.set_engine_fault([this] { return faults.gpu_engine_error(); });
	faults.set_ring_check([this](uint64_t a, uint64_t n) { return nic.in_rings(a, n); });
}

Node::~Node() = default;

std::string Node::stats_json() const
{
	std::ostringstream o;
	o << "{\"schema\": \"devmemsim-stats/1\", \"node\": " << cfg_.index
	  << ", \"time_ns\": " << sim::now_ns() << ", \"pcie\": " << fabric.stats_json()
	  << ", \"nic\": " << nic.stats_json() << ", \"gpu\": " << gpu.stats_json()
	  << ", \"faults\": " << faults.stats_json() << "}";
	return o.str();
}

void Node::reset_counters()
{
	fabric.reset_counters();
	nic.reset_counters();
	gpu.reset_counters();
	faults.reset_counters();
}

} // namespace devmemsim
