// SPDX-License-Identifier: MIT
#include "node/node.h"

#include <stdexcept>

namespace devmemsim {
namespace {

bool claim_process()
{
	static bool taken = false;
	if (taken)
		throw std::logic_error(
			"this process already has a devmemsim node (one node per process)");
	taken = true;
	return true;
}

} // namespace

Node::Node(sc_core::sc_module_name name, const NodeConfig &cfg)
	: sc_core::sc_module((claim_process(), name)), nic("nic", cfg),
	  gpu("gpu", cfg), cfg_(cfg)
{
}

Node::~Node() = default;

} // namespace devmemsim
