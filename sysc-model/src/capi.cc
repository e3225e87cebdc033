// SPDX-License-Identifier: MIT
// The C ABI of devmemsim/devmemsim.h. No exception crosses it.
#include "devmemsim/devmemsim.h"

#include <cstdio>
#include <cstdlib>
#include <exception>
#include <memory>
#include <string>

#include "devmemsim/pci_ids.h"

#include "config.h"
#include "node/node.h"
#include "sim/kernel.h"
#include "trace.h"

struct dms_node {
	std::unique_ptr<devmemsim::Node> node;
	struct Host {
		dms_dev_ops ops{};
		void *opaque = nullptr;
	} host[2];
	std::string stats;
	// The host's trace callback, and the sink the devices' tracers use
	// while it is set (its fn is NULL otherwise).
	void (*trace_fn)(void *opaque, enum dms_dev dev, const char *line) = nullptr;
	void *trace_opaque = nullptr;
	devmemsim::TraceSink trace_sink;
};

namespace
{

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

bool valid_dev(enum dms_dev dev)
{
	return dev == DMS_DEV_NIC || dev == DMS_DEV_GPU;
}

unsigned port_of(enum dms_dev dev)
{
	return dev == DMS_DEV_NIC ? devmemsim::pcie::kNic : devmemsim::pcie::kGpu;
}

void trace_to_host(void *opaque, unsigned dev, const char *line)
{
	auto *n = static_cast<dms_node *>(opaque);
	n->trace_fn(n->trace_opaque, static_cast<enum dms_dev>(dev), line);
}

} // namespace

extern "C" {

dms_node *dms_node_new(const char *config_path, char *err, size_t errlen)
{
	// The library is a guest in its host's process: no banner on stdout.
	setenv("SYSTEMC_DISABLE_COPYRIGHT_MESSAGE", "1", 0);
	try {
		devmemsim::NodeConfig cfg = devmemsim::load_config(config_path ? config_path : "");
		auto n = std::make_unique<dms_node>();
		// Module names are unique in the kernel: a second node of the
		// process (dms-sim) gets a generated one.
		const char *name = sc_core::sc_find_object("node")
					   ? sc_core::sc_gen_unique_name("node")
					   : "node";
		n->node = std::make_unique<devmemsim::Node>(name, cfg);
		dms_node *raw = n.get();
		n->node->gpu.set_trace(&n->trace_sink);
		n->node->nic.set_trace(&n->trace_sink);
		n->node->fabric.set_host_dma([raw](unsigned port, uint64_t addr, void *buf,
						   uint64_t len, bool is_write) {
			const dms_node::Host &h =
				raw->host[port == devmemsim::pcie::kNic ? DMS_DEV_NIC
									: DMS_DEV_GPU];
			if (raw->node->faults.dma_error(port == devmemsim::pcie::kNic
								? devmemsim::kFaultNic
								: devmemsim::kFaultGpu,
							addr, len))
				return false;
			return h.ops.dma && h.ops.dma(h.opaque, addr, buf, len, is_write) == 0;
		});
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
	// Bounded: stops after sim::kStepBudget kernel steps, leaving the
	// deadline at or before now_ns (devmemsim.h, "Time").
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

uint64_t dms_reg_read(dms_node *node, enum dms_dev dev, uint64_t off, unsigned size)
{
	devmemsim::RegFile *r = regs(node, dev);
	return r ? r->read(off, size) : UINT64_MAX;
}

void dms_reg_write(dms_node *node, enum dms_dev dev, uint64_t off, uint64_t val, unsigned size)
{
	if (devmemsim::RegFile *r = regs(node, dev))
		r->write(off, val, size);
}

void dms_dev_attach(dms_node *node, enum dms_dev dev, const struct dms_dev_ops *ops, void *opaque)
{
	if (!valid_dev(dev))
		return;
	node->host[dev] = {*ops, opaque};
	dms_node::Host *h = &node->host[dev];
	// MSIs and sent frames pass the fault injector (node/faults.h).
	devmemsim::Faults *faults = &node->node->faults;
	const unsigned fdev = dev == DMS_DEV_NIC ? devmemsim::kFaultNic : devmemsim::kFaultGpu;
	if (ops->irq)
		faults->set_irq_sink(fdev, [h](unsigned v) {
			// A late MSI may come due after dms_dev_detach().
			if (h->ops.irq)
				h->ops.irq(h->opaque, v);
		});
	if (dev == DMS_DEV_GPU && ops->irq) {
		node->node->gpu.set_irq(
			[faults](unsigned v) { faults->irq(devmemsim::kFaultGpu, v); });
	} else if (dev == DMS_DEV_NIC) {
		devmemsim::Nic::Host nh;
		if (ops->irq)
			nh.irq = [faults](unsigned v) { faults->irq(devmemsim::kFaultNic, v); };
		if (ops->send)
			nh.send = [h, faults](const uint8_t *f, size_t n) {
				if (const uint8_t *out = faults->tx_frame(f, n))
					h->ops.send(h->opaque, out, n);
			};
		if (ops->rx_ready)
			nh.rx_ready = [h] { h->ops.rx_ready(h->opaque); };
		node->node->nic.set_host(std::move(nh));
	}
}

void dms_dev_detach(dms_node *node, enum dms_dev dev)
{
	if (!valid_dev(dev))
		return;
	devmemsim::Node &n = *node->node;
	n.fabric.set_window(port_of(dev), 0, 0);
	n.fabric.set_bus_master(port_of(dev), false);
	if (dev == DMS_DEV_GPU) {
		n.gpu.reset();
		n.gpu.set_irq(nullptr);
		n.gpu.set_memory(nullptr);
	} else {
		n.nic.reset();
		n.nic.set_host(devmemsim::Nic::Host{});
	}
	node->host[dev] = {};
}

void dms_set_bus_master(dms_node *node, enum dms_dev dev, int on)
{
	if (valid_dev(dev))
		node->node->fabric.set_bus_master(port_of(dev), on != 0);
}

void dms_node_set_trace(dms_node *node,
			void (*fn)(void *opaque, enum dms_dev dev, const char *line), void *opaque)
{
	node->trace_fn = fn;
	node->trace_opaque = opaque;
	node->trace_sink.opaque = node;
	node->trace_sink.fn = fn ? trace_to_host : nullptr;
}

void dms_set_bar(dms_node *node, enum dms_dev dev, unsigned bar, uint64_t addr, uint64_t size)
{
	// Only device memory is a peer-to-peer target.
	if (dev == DMS_DEV_GPU && bar == DMS_GPU_BAR_MEM)
		node->node->fabric.set_window(devmemsim::pcie::kGpu, addr, size);
}

void dms_gpu_set_memory(dms_node *node, void *mem)
{
	node->node->gpu.set_memory(static_cast<uint8_t *>(mem));
}

const char *dms_node_stats_json(dms_node *node)
{
	node->stats = node->node->stats_json();
	return node->stats.c_str();
}

void dms_node_reset_stats(dms_node *node)
{
	node->node->reset_counters();
}

int dms_node_set_faults(dms_node *node, const char *settings, char *err, size_t errlen)
{
	try {
		node->node->faults.configure(
			devmemsim::parse_fault_settings(settings ? settings : ""));
		return 0;
	} catch (const std::exception &e) {
		set_err(err, errlen, e.what());
	}
	return -1;
}

int dms_nic_receive(dms_node *node, const uint8_t *frame, size_t len)
{
	devmemsim::Nic &nic = node->node->nic;
	return node->node->faults.rx_frame(
		       frame, len, [&nic](const uint8_t *f, size_t n) { return nic.receive(f, n); })
		       ? 1
		       : 0;
}

void dms_nic_set_link(dms_node *node, int up)
{
	node->node->faults.set_host_link(up != 0);
}

void dms_nic_reset(dms_node *node)
{
	node->node->nic.reset();
}

void dms_gpu_reset(dms_node *node)
{
	node->node->gpu.reset();
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
