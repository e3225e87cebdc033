// SPDX-License-Identifier: MIT
// A node: the hardware of one emulated machine, its NIC and GPU on a PCIe
// fabric.
#pragma once

#include <string>
#include <systemc>

#include "config.h"
#include "gpu/gpu.h"
#include "nic/nic.h"
#include "node/faults.h"
#include "pcie/fabric.h"

namespace devmemsim
{

class Node : public sc_core::sc_module
{
public:
	// Throws std::logic_error once the model has run: the SystemC kernel
	// is global and cannot elaborate modules after its first step.
	Node(sc_core::sc_module_name name, const NodeConfig &cfg);
	~Node() override;

	const NodeConfig &config() const { return cfg_; }
	pcie::Fabric fabric;
	Nic nic;
	Gpu gpu;
	Faults faults; // between the devices and their host (capi.cc)

	// Counters of the whole node as one JSON object (docs/stats.md).
	std::string stats_json() const;
	void reset_counters();

private:
	NodeConfig cfg_;
};

} // namespace devmemsim
