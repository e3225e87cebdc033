// SPDX-License-Identifier: MIT
// A node: the hardware of one emulated machine (NIC and GPU for now).
#pragma once

#include <systemc>

#include "config.h"
#include "gpu/gpu.h"
#include "nic/nic.h"

namespace devmemsim {

class Node : public sc_core::sc_module {
  public:
	// Throws std::logic_error if this process already built a node: the
	// SystemC kernel is global and cannot be elaborated twice.
	Node(sc_core::sc_module_name name, const NodeConfig &cfg);
	~Node() override;

	const NodeConfig &config() const { return cfg_; }
	Nic nic;
	Gpu gpu;

  private:
	NodeConfig cfg_;
};

} // namespace devmemsim
