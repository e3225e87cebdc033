// SPDX-License-Identifier: MIT
// The C ABI of devmemsim/devmemsim.h. No exception crosses it.
#include "devmemsim/devmemsim.h"

#include <cstdio>
#include <cstdlib>
#include <exception>
#include <memory>

#include "config.h"
#include "node/node.h"
#include "sim/kernel.h"

struct dms_node {
	std::unique_ptr<devmemsim::Node> node;
};

namespace {

void set_err(char *err, size_t errlen, const char *msg)
{
	if (err && errlen)
		std::snprintf(err, errlen, "%s", msg);
}

devmemsim::RegFile *regs(dms_node *n, enum dms_dev dev)
{
	switch (dev) {
	case DMS_DEV_NIC:
		return &n->node->nic;
	case DMS_DEV_GPU:
		return &n->node->gpu;
	}
	return nullptr;
}

} // namespace

extern "C" {

dms_node *dms_node_new(const char *config_path, char *err, size_t errlen)
{
	// The library is a guest in its host's process: no banner on stdout.
	setenv("SYSTEMC_DISABLE_COPYRIGHT_MESSAGE", "1", 0);
	try {
		devmemsim::NodeConfig cfg =
			devmemsim::load_config(config_path ? config_path : "");
		auto n = std::make_unique<dms_node>();
		n->node = std::make_unique<devmemsim::Node>("node", cfg);
		return n.release();
	} catch (const std::exception &e) {
		set_err(err, errlen, e.what());
	} catch (...) {
		set_err(err, errlen, "unknown error while building the node");
	}
	return nullptr;
}

void dms_node_free(dms_node *node)
{
	delete node;
}

void dms_node_step(dms_node *, uint64_t now_ns)
{
	try {
		devmemsim::sim::step_to(now_ns);
	} catch (const std::exception &e) {
		std::fprintf(stderr, "devmemsim: model error: %s\n", e.what());
		std::abort();
	}
}

uint64_t dms_node_deadline_ns(const dms_node *)
{
	return devmemsim::sim::deadline_ns();
}

uint64_t dms_reg_read(dms_node *node, enum dms_dev dev, uint64_t off,
		      unsigned size)
{
	devmemsim::RegFile *r = regs(node, dev);
	return r ? r->read(off, size) : UINT64_MAX;
}

void dms_reg_write(dms_node *node, enum dms_dev dev, uint64_t off,
		   uint64_t val, unsigned size)
{
	if (devmemsim::RegFile *r = regs(node, dev))
		r->write(off, val, size);
}

void dms_nic_set_mac(dms_node *node, const uint8_t mac[6])
{
	node->node->nic.set_mac(mac);
}

uint64_t dms_gpu_mem_size(const dms_node *node)
{
	return node->node->gpu.mem_size();
}

unsigned dms_nic_num_queues(const dms_node *node)
{
	return node->node->nic.num_queues();
}

unsigned dms_nic_num_vectors(const dms_node *node)
{
	return node->node->nic.num_vectors();
}

unsigned dms_gpu_num_vectors(const dms_node *node)
{
	return node->node->gpu.num_vectors();
}

const char *dms_node_mode(const dms_node *node)
{
	return devmemsim::mode_name(node->node->config().mode);
}

} // extern "C"
