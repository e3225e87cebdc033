// SPDX-License-Identifier: MIT
// The C ABI of devmemsim/devmemsim.h. No exception crosses it, and every
// device id a host gives is checked before it indexes anything.
#include "devmemsim/devmemsim.h"

#include <cstdio>
#include <cstdlib>
#include <exception>
#include <memory>
#include <string>
#include <vector>

#include "devmemsim/pci_ids.h"

#include "config.h"
#include "node/node.h"
#include "sim/kernel.h"
#include "trace.h"

struct dms_node {
	// A device's host side: its callbacks, and the trace sink that tags
	// its lines with its id. Indexed by fabric port (NICs, then GPUs);
	// never resized once built, as the model holds pointers into it.
	struct Host {
		dms_node *node = nullptr;
		enum dms_dev id = DMS_DEV_NIC;
		dms_dev_ops ops{};
		void *opaque = nullptr;
		devmemsim::TraceSink trace;
	};
	std::unique_ptr<devmemsim::Node> node;
	std::vector<Host> host;
	std::string stats;
	// The host's trace callback.
	void (*trace_fn)(void *opaque, enum dms_dev dev, const char *line) = nullptr;
	void *trace_opaque = nullptr;
	// Inside dms_node_step(); inside host calls that may raise an MSI
	// (their MSIs are posted: devmemsim.h, "Interrupts").
	bool stepping = false;
	unsigned host_calls = 0;
};

namespace
{

using devmemsim::Node;

void set_err(char *err, size_t errlen, const char *msg)
{
	if (err && errlen)
		std::snprintf(err, errlen, "%s", msg);
}

// The fabric port of the device an id names, or -1 if it names none.
int port_of(const dms_node *n, enum dms_dev dev)
{
	const unsigned id = static_cast<unsigned>(dev);
	const unsigned i = DMS_DEV_INDEX(id);
	if (i >= n->node->pairs())
		return -1;
	const auto &f = n->node->fabric;
	return static_cast<int>(DMS_DEV_IS_GPU(id) ? f.gpu_port(i) : f.nic_port(i));
}

// The NIC or GPU an id names, or nullptr when it names no device of
// that kind.
devmemsim::Nic *nic_of(const dms_node *n, enum dms_dev dev)
{
	if (DMS_DEV_IS_GPU(dev) || port_of(n, dev) < 0)
		return nullptr;
	return &n->node->nics[DMS_DEV_INDEX(dev)];
}

devmemsim::Gpu *gpu_of(const dms_node *n, enum dms_dev dev)
{
	if (!DMS_DEV_IS_GPU(dev) || port_of(n, dev) < 0)
		return nullptr;
	return &n->node->gpus[DMS_DEV_INDEX(dev)];
}

devmemsim::RegFile *regs(const dms_node *n, enum dms_dev dev)
{
	if (devmemsim::Nic *nic = nic_of(n, dev))
		return nic;
	return gpu_of(n, dev);
}

// Pair i's fault injector numbers its devices kFaultNic and kFaultGpu.
unsigned fault_dev(enum dms_dev dev)
{
	return DMS_DEV_IS_GPU(dev) ? devmemsim::kFaultGpu : devmemsim::kFaultNic;
}

void trace_to_host(void *opaque, unsigned, const char *line)
{
	auto *h = static_cast<dms_node::Host *>(opaque);
	h->node->trace_fn(h->node->trace_opaque, h->id, line);
}

// One host side per device, each device's trace lines through its own.
void make_hosts(dms_node *n)
{
	Node &node = *n->node;
	n->host.resize(node.fabric.ports());
	for (unsigned i = 0; i < node.pairs(); i++) {
		n->host[node.fabric.nic_port(i)].id = DMS_NIC(i);
		n->host[node.fabric.gpu_port(i)].id = DMS_GPU(i);
	}
	for (dms_node::Host &h : n->host) {
		h.node = n;
		h.trace.opaque = &h;
	}
	for (unsigned i = 0; i < node.pairs(); i++) {
		node.nics[i].set_trace(&n->host[node.fabric.nic_port(i)].trace);
		node.gpus[i].set_trace(&n->host[node.fabric.gpu_port(i)].trace);
	}
}

// A host call that may raise MSIs (a register write, a link change, new
// fault settings): while it runs, raised vectors are posted.
struct HostCall {
	explicit HostCall(dms_node *n) : node(n) { node->host_calls++; }
	~HostCall() { node->host_calls--; }
	HostCall(const HostCall &) = delete;
	HostCall &operator=(const HostCall &) = delete;
	dms_node *node;
};

// Every device's MSIs, past its pair's fault injector, through the node's
// poster to the device's host side.
void route_msis(dms_node *n)
{
	n->node->msi.set_sink([n](unsigned port, unsigned v) {
		const dms_node::Host &h = n->host[port];
		// A late or posted MSI may come due after dms_dev_detach().
		if (h.ops.irq)
			h.ops.irq(h.opaque, v);
	});
}

// Host memory through the requester's host side, after its pair's fault
// injector had its say.
void route_host_dma(dms_node *n)
{
	n->node->fabric.set_host_dma(
		[n](unsigned port, uint64_t addr, void *buf, uint64_t len, bool is_write) {
			if (port >= n->host.size())
				return false;
			const dms_node::Host &h = n->host[port];
			const unsigned pair = DMS_DEV_INDEX(h.id);
			if (n->node->faults[pair].dma_error(fault_dev(h.id), addr, len))
				return false;
			return h.ops.dma && h.ops.dma(h.opaque, addr, buf, len, is_write) == 0;
		});
}

dms_node *new_node(const char *config_path, Node::Shape shape, char *err, size_t errlen)
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
		n->node = std::make_unique<Node>(name, cfg, shape);
		make_hosts(n.get());
		route_host_dma(n.get());
		route_msis(n.get());
		return n.release();
	} catch (const std::exception &e) {
		set_err(err, errlen, e.what());
	} catch (...) {
		set_err(err, errlen, "unknown error while building the node");
	}
	return nullptr;
}

// The host callbacks of NIC i: MSIs and sent frames pass pair i's fault
// injector (node/faults.h).
void attach_nic(dms_node *node, unsigned i, dms_node::Host *h)
{
	devmemsim::Faults *faults = &node->node->faults[i];
	devmemsim::Nic::Host nh;
	if (h->ops.irq)
		nh.irq = [faults](unsigned v) { faults->irq(devmemsim::kFaultNic, v); };
	if (h->ops.send)
		nh.send = [h, faults](const uint8_t *f, size_t n) {
			if (const uint8_t *out = faults->tx_frame(f, n))
				h->ops.send(h->opaque, out, n);
		};
	if (h->ops.rx_ready)
		nh.rx_ready = [h] { h->ops.rx_ready(h->opaque); };
	node->node->nics[i].set_host(std::move(nh));
}

} // namespace

extern "C" {

dms_node *dms_node_new(const char *config_path, char *err, size_t errlen)
{
	return new_node(config_path, Node::Shape::Qemu, err, errlen);
}

dms_node *dms_node_new_topology(const char *config_path, char *err, size_t errlen)
{
	return new_node(config_path, Node::Shape::Any, err, errlen);
}

void dms_node_free(dms_node *node)
{
	delete node;
}

unsigned dms_node_num_pairs(const dms_node *node)
{
	return node->node->pairs();
}

const char *dms_dev_name(const dms_node *node, enum dms_dev dev)
{
	if (port_of(node, dev) < 0)
		return nullptr;
	const devmemsim::Topology &t = node->node->fabric.topology();
	const auto &kind = DMS_DEV_IS_GPU(dev) ? t.gpus : t.nics;
	return kind[DMS_DEV_INDEX(dev)].name.c_str();
}

void dms_node_step(dms_node *node, uint64_t now_ns)
{
	// Bounded: stops after sim::kStepBudget kernel steps or sim::kStepWork
	// units of work, leaving the deadline at or before now_ns (devmemsim.h,
	// "Work budget").
	try {
		node->stepping = true;
		devmemsim::sim::step_to(now_ns);
		node->stepping = false;
	} catch (const std::exception &e) {
		std::fprintf(stderr, "devmemsim: model error: %s\n", e.what());
		std::abort();
	}
}

uint64_t dms_node_deadline_ns(const dms_node *)
{
	return devmemsim::sim::deadline_ns();
}

void dms_node_set_time(dms_node *, uint64_t now_ns)
{
	devmemsim::sim::note_host_ns(now_ns);
}

uint64_t dms_reg_read(dms_node *node, enum dms_dev dev, uint64_t off, unsigned size)
{
	devmemsim::RegFile *r = regs(node, dev);
	return r ? r->read(off, size) : UINT64_MAX;
}

void dms_reg_write(dms_node *node, enum dms_dev dev, uint64_t off, uint64_t val, unsigned size)
{
	HostCall call(node);
	if (devmemsim::RegFile *r = regs(node, dev))
		r->write(off, val, size);
}

void dms_node_work(const dms_node *node, struct dms_work_stats *out)
{
	const devmemsim::sim::StepStats &s = devmemsim::sim::step_stats();
	const devmemsim::Node &n = *node->node;
	out->steps = s.steps;
	out->units = s.units;
	out->max_step_units = s.max_step_units;
	out->cut_steps = s.cut_steps;
	out->msis = n.msi.sent();
	out->posted_msis = n.msi.posted();
	out->step_units_bound = n.step_units_bound();
}

int dms_dev_attach(dms_node *node, enum dms_dev dev, const struct dms_dev_ops *ops, void *opaque)
{
	const int port = port_of(node, dev);
	if (port < 0 || !ops)
		return -1;
	dms_node::Host *h = &node->host[static_cast<unsigned>(port)];
	h->ops = *ops;
	h->opaque = opaque;
	const unsigned i = DMS_DEV_INDEX(dev);
	devmemsim::Faults *faults = &node->node->faults[i];
	if (ops->irq)
		faults->set_irq_sink(fault_dev(dev), [node, port](unsigned v) {
			node->node->msi.raise(static_cast<unsigned>(port), v,
					      !node->stepping || node->host_calls);
		});
	if (!DMS_DEV_IS_GPU(dev))
		attach_nic(node, i, h);
	else if (ops->irq)
		node->node->gpus[i].set_irq(
			[faults](unsigned v) { faults->irq(devmemsim::kFaultGpu, v); });
	return 0;
}

void dms_dev_detach(dms_node *node, enum dms_dev dev)
{
	const int port = port_of(node, dev);
	if (port < 0)
		return;
	devmemsim::Node &n = *node->node;
	n.fabric.set_window(static_cast<unsigned>(port), 0, 0);
	n.fabric.set_bus_master(static_cast<unsigned>(port), false);
	n.msi.forget(static_cast<unsigned>(port));
	if (devmemsim::Gpu *gpu = gpu_of(node, dev)) {
		gpu->reset();
		gpu->set_irq(nullptr);
		gpu->set_memory(nullptr);
	} else if (devmemsim::Nic *nic = nic_of(node, dev)) {
		nic->reset();
		nic->set_host(devmemsim::Nic::Host{});
	}
	dms_node::Host &h = node->host[static_cast<unsigned>(port)];
	h.ops = {};
	h.opaque = nullptr;
}

void dms_set_bus_master(dms_node *node, enum dms_dev dev, int on)
{
	const int port = port_of(node, dev);
	if (port >= 0)
		node->node->fabric.set_bus_master(static_cast<unsigned>(port), on != 0);
}

void dms_node_set_trace(dms_node *node,
			void (*fn)(void *opaque, enum dms_dev dev, const char *line), void *opaque)
{
	node->trace_fn = fn;
	node->trace_opaque = opaque;
	for (dms_node::Host &h : node->host)
		h.trace.fn = fn ? trace_to_host : nullptr;
}

void dms_set_bar(dms_node *node, enum dms_dev dev, unsigned bar, uint64_t addr, uint64_t size)
{
	// Only device memory is a peer-to-peer target.
	if (gpu_of(node, dev) && bar == DMS_GPU_BAR_MEM)
		node->node->fabric.set_window(static_cast<unsigned>(port_of(node, dev)), addr,
					      size);
}

int dms_dev_set_memory(dms_node *node, enum dms_dev dev, void *mem)
{
	devmemsim::Gpu *gpu = gpu_of(node, dev);
	if (!gpu)
		return -1;
	gpu->set_memory(static_cast<uint8_t *>(mem));
	return 0;
}

void dms_gpu_set_memory(dms_node *node, void *mem)
{
	dms_dev_set_memory(node, DMS_DEV_GPU, mem);
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
	HostCall call(node); // a link the faults held down may come up
	try {
		node->node->configure_faults(
			devmemsim::parse_fault_settings(settings ? settings : ""));
		return 0;
	} catch (const std::exception &e) {
		set_err(err, errlen, e.what());
	}
	return -1;
}

int dms_dev_receive(dms_node *node, enum dms_dev dev, const uint8_t *frame, size_t len)
{
	devmemsim::Nic *nic = nic_of(node, dev);
	if (!nic)
		return -1;
	devmemsim::Faults &faults = node->node->faults[DMS_DEV_INDEX(dev)];
	return faults.rx_frame(frame, len,
			       [nic](const uint8_t *f, size_t n) { return nic->receive(f, n); })
		       ? 1
		       : 0;
}

int dms_nic_receive(dms_node *node, const uint8_t *frame, size_t len)
{
	return dms_dev_receive(node, DMS_DEV_NIC, frame, len);
}

int dms_dev_set_link(dms_node *node, enum dms_dev dev, int up)
{
	if (!nic_of(node, dev))
		return -1;
	HostCall call(node);
	node->node->faults[DMS_DEV_INDEX(dev)].set_host_link(up != 0);
	return 0;
}

void dms_nic_set_link(dms_node *node, int up)
{
	dms_dev_set_link(node, DMS_DEV_NIC, up);
}

int dms_dev_reset(dms_node *node, enum dms_dev dev)
{
	if (devmemsim::Nic *nic = nic_of(node, dev))
		nic->reset();
	else if (devmemsim::Gpu *gpu = gpu_of(node, dev))
		gpu->reset();
	else
		return -1;
	return 0;
}

void dms_nic_reset(dms_node *node)
{
	dms_dev_reset(node, DMS_DEV_NIC);
}

void dms_gpu_reset(dms_node *node)
{
	dms_dev_reset(node, DMS_DEV_GPU);
}

int dms_dev_set_mac(dms_node *node, enum dms_dev dev, const uint8_t mac[6])
{
	devmemsim::Nic *nic = nic_of(node, dev);
	if (!nic || !mac)
		return -1;
	nic->set_mac(mac);
	return 0;
}

void dms_nic_set_mac(dms_node *node, const uint8_t mac[6])
{
	dms_dev_set_mac(node, DMS_DEV_NIC, mac);
}

uint64_t dms_dev_mem_size(const dms_node *node, enum dms_dev dev)
{
	const devmemsim::Gpu *gpu = gpu_of(node, dev);
	return gpu ? gpu->mem_size() : 0;
}

uint64_t dms_gpu_mem_size(const dms_node *node)
{
	return dms_dev_mem_size(node, DMS_DEV_GPU);
}

unsigned dms_dev_num_queues(const dms_node *node, enum dms_dev dev)
{
	const devmemsim::Nic *nic = nic_of(node, dev);
	return nic ? nic->num_queues() : 0;
}

unsigned dms_nic_num_queues(const dms_node *node)
{
	return dms_dev_num_queues(node, DMS_DEV_NIC);
}

unsigned dms_dev_num_vectors(const dms_node *node, enum dms_dev dev)
{
	if (const devmemsim::Nic *nic = nic_of(node, dev))
		return nic->num_vectors();
	const devmemsim::Gpu *gpu = gpu_of(node, dev);
	return gpu ? gpu->num_vectors() : 0;
}

unsigned dms_nic_num_vectors(const dms_node *node)
{
	return dms_dev_num_vectors(node, DMS_DEV_NIC);
}

unsigned dms_gpu_num_vectors(const dms_node *node)
{
	return dms_dev_num_vectors(node, DMS_DEV_GPU);
}

const char *dms_node_mode(const dms_node *node)
{
	return devmemsim::mode_name(node->node->config().mode);
}

} // extern "C"
