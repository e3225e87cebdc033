// SPDX-License-Identifier: MIT
#include "node/node.h"

#include <ostream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "sim/kernel.h"

namespace devmemsim
{
namespace
{

// Nodes share the process's SystemC kernel, which cannot elaborate new
// modules once it has run: every node of a process (dms-sim runs several)
// is built before the first step.
void check_elaborating()
{
	if (sc_core::sc_get_status() != sc_core::SC_ELABORATION)
		throw std::logic_error("this process's devmemsim model has already run: build "
				       "every node before the first step");
}

// The root bus has 32 slots: q35's own devices take two, the CLI's other
// devices up to seven (tools/devmemsim/cluster.py).
constexpr size_t kQemuRootPorts = 16;
constexpr size_t kQemuSwitchPorts = 32; // slots of a switch's internal bus

// QEMU lays out the node's [topology] for the guest
// (tools/devmemsim/topology.py): every switch, and every device on a root
// port, takes a root port in a slot of q35's one PCIe root bus; a switch
// is an upstream port with one downstream port per device, in the slots
// of its internal bus. The guest sees one root complex: the model's
// sockets, link widths and capacities are its own. What QEMU cannot lay
// out is refused here, before the node claims the process. Hosts that
// address device instances without QEMU ask for Shape::Any
// (dms_node_new_topology).
void check_shape(const NodeConfig &cfg, Node::Shape shape)
{
	if (shape == Node::Shape::Any)
		return;
	const Topology t = topology_of(cfg);
	std::vector<size_t> under(t.switches.size());
	size_t root_ports = t.switches.size();
	for (const auto *kind : {&t.nics, &t.gpus})
		for (const DeviceConfig &d : *kind)
			if (d.on_switch >= 0)
				under[d.on_switch]++;
			else
				root_ports++;
	if (root_ports > kQemuRootPorts)
		throw ConfigError(
			"topology: " + std::to_string(root_ports) +
			" root ports in use; a QEMU node has at most " +
			std::to_string(kQemuRootPorts) +
			" (a slot of its one PCIe root bus each): put devices under switches");
	for (size_t i = 0; i < under.size(); i++)
		if (under[i] > kQemuSwitchPorts)
			throw ConfigError("topology: switch \"" + t.switches[i].name + "\" has " +
					  std::to_string(under[i]) +
					  " devices; under QEMU a switch has at most " +
					  std::to_string(kQemuSwitchPorts) +
					  " (a downstream port each)");
}

const sc_core::sc_module_name &checked_name(const NodeConfig &cfg, Node::Shape shape,
					    const sc_core::sc_module_name &name)
{
	check_shape(cfg, shape);
	check_elaborating();
	return name;
}

} // namespace

Node::Node(sc_core::sc_module_name name, const NodeConfig &cfg, Shape shape)
    : sc_core::sc_module(checked_name(cfg, shape, name)), fabric("fabric", cfg), nics("nic"),
      gpus("gpu"), faults("faults"), msi("msi"), cfg_(cfg)
{
	const size_t k = fabric.topology().nics.size();
	nics.init(k, [&cfg](const char *n, size_t) { return new Nic(n, cfg); });
	gpus.init(k, [&cfg](const char *n, size_t) { return new Gpu(n, cfg); });
	faults.init(k, [&cfg](const char *n, size_t i) {
		FaultConfig f = cfg.faults;
		f.seed += i;
		return new Faults(n, f);
	});
	// The fabric's target socket numbers its ports in binding order:
	// the NICs, then the GPUs (pcie::Fabric::nic_port, gpu_port).
	for (unsigned i = 0; i < k; i++)
		nics[i].dma.bind(fabric.dma);
	for (unsigned i = 0; i < k; i++)
		gpus[i].dma.bind(fabric.dma);
	for (unsigned i = 0; i < k; i++)
		bind_pair(i);
}

Node::~Node() = default;

// Pair i's peer-to-peer targets, and its fault injector between the NIC's
// link, the GPU's engines and their host.
void Node::bind_pair(unsigned i)
{
	Nic &nic = nics[i];
	Gpu &gpu = gpus[i];
	Faults &f = faults[i];
	fabric.bar_mem[fabric.nic_port(i)].bind(nic.bar_mem);
	fabric.bar_mem[fabric.gpu_port(i)].bind(gpu.bar_mem);
	f.set_link_sink([&nic](bool up) { nic.set_link(up); });
	gpu.set_engine_fault([&f] { return f.gpu_engine_error(); });
	gpu.set_status_lie([&f](bool can_skip) {
		unsigned code = 0;
		switch (f.gpu_lie(can_skip, &code)) {
		case GpuLie::Skip:
			return Gpu::kLieSkip;
		case GpuLie::Code:
			return code;
		case GpuLie::Truth:
			break;
		}
		return 0u;
	});
	static_assert(unsigned(Nic::RxLie::Pack) == kLiePack, "Nic::RxLie follows NicLie");
	nic.set_rx_lie(
		[&f](Nic::RxLie kind, uint64_t *bits) { return f.nic_lie(unsigned(kind), bits); });
	f.set_ring_check([&nic](uint64_t a, uint64_t n) { return nic.in_rings(a, n); });
}

void Node::configure_faults(const FaultConfig &cfg)
{
	for (unsigned i = 0; i < pairs(); i++) {
		FaultConfig f = cfg;
		f.seed += i;
		faults[i].configure(f);
	}
}

std::string Node::stats_json() const
{
	std::ostringstream o;
	o << "{\"schema\": \"devmemsim-stats/1\", \"node\": " << cfg_.index
	  << ", \"time_ns\": " << sim::now_ns() << ", \"pcie\": " << fabric.stats_json() << ", ";
	put_devices(o);
	const sim::StepStats &w = sim::step_stats();
	o << ", \"work\": {\"steps\": " << w.steps << ", \"units\": " << w.units
	  << ", \"max_step_units\": " << w.max_step_units << ", \"cut_steps\": " << w.cut_steps
	  << ", \"msis\": " << msi.sent() << ", \"posted_msis\": " << msi.posted()
	  << ", \"step_units_bound\": " << step_units_bound() << "}}";
	return o.str();
}

// What one step can do at most (devmemsim.h, "Work budget"): the step's
// budget, then one activation of each engine (NIC receive and transmit,
// GPU copy and CRC: each its budget and one frame or burst past it), and
// the MSIs one kernel step can deliver (each vector's moderation timer or
// posted message, and a late one per vector from the fault injector).
uint64_t Node::step_units_bound() const
{
	uint64_t vectors = 0;
	for (unsigned i = 0; i < pairs(); i++)
		vectors += nics[i].num_vectors() + gpus[i].num_vectors();
	return sim::kStepWork + 4 * uint64_t(pairs()) * (DMS_ENGINE_WORK + DMS_FRAME_WORK_MAX) +
	       2 * vectors;
}

// One pair: "nic", "gpu" and "faults" as they always were. More pairs:
// "nics" and "gpus" by the topology's device names (as pcie.links names
// their links) and "pair_faults", one entry per pair in pair order.
void Node::put_devices(std::ostream &o) const
{
	if (pairs() == 1) {
		o << "\"nic\": " << nics[0].stats_json() << ", \"gpu\": " << gpus[0].stats_json()
		  << ", \"faults\": " << faults[0].stats_json();
		return;
	}
	const Topology &t = fabric.topology();
	o << "\"nics\": {";
	for (unsigned i = 0; i < pairs(); i++)
		o << (i ? ", " : "") << "\"" << t.nics[i].name << "\": " << nics[i].stats_json();
	o << "}, \"gpus\": {";
	for (unsigned i = 0; i < pairs(); i++)
		o << (i ? ", " : "") << "\"" << t.gpus[i].name << "\": " << gpus[i].stats_json();
	o << "}, \"pair_faults\": [";
	for (unsigned i = 0; i < pairs(); i++)
		o << (i ? ", " : "") << faults[i].stats_json();
	o << "]";
}

void Node::reset_counters()
{
	fabric.reset_counters();
	msi.reset_counters();
	sim::reset_step_stats(); // the process's: QEMU has one node
	for (unsigned i = 0; i < pairs(); i++) {
		nics[i].reset_counters();
		gpus[i].reset_counters();
		faults[i].reset_counters();
	}
}

} // namespace devmemsim
