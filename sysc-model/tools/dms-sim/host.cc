// SPDX-License-Identifier: MIT
#include "host.h"

namespace dms_sim
{

Host::Host(dms_node *node, unsigned index, unsigned pair, Events &ev, const HostParams &p)
    : node_(node, index, pair, ev, p.host_memory_bytes), copier_(node_, p.driver.irq_ps),
      drv_(std::make_unique<NicDriver>(node_, p.driver, payload_pool(p)))
{
	NicDriver::Handlers h;
	h.can_take = [this] {
		for (const auto &[port, c] : conns_)
			if (!c->can_take())
				return false;
		return true;
	};
	h.rx = [this](const RxFrame &f) { on_rx(f); };
	h.tx_room = [this] {
		for (const auto &[port, c] : conns_)
			c->on_tx_room();
	};
	h.poll_done = [this] {
		for (const auto &[port, c] : conns_)
			c->on_poll_done();
	};
	drv_->set_handlers(std::move(h));
}

// The NIC's payload buffers: at the top of GPU memory (devmem), or host
// memory (bounce, and hosts that receive only ACKs).
PayloadPool Host::payload_pool(const HostParams &p)
{
	const uint64_t bytes = uint64_t{p.driver.pbuf_size} << p.driver.rx_ring_log2;
	if (p.gpu_payload) {
		const uint64_t off = node_.gpu_alloc(bytes, true);
		return {node_.gpu_bar() + off, node_.gpu_mem() + off};
	}
	const uint64_t bus = node_.mem().alloc(bytes, 4096);
	return {bus, node_.mem().at(bus)};
}

void Host::connect(Network &net, unsigned port)
{
	SimNode::Hooks h;
	h.nic_irq = [this](unsigned v) { drv_->on_irq(v); };
	h.gpu_irq = [this](unsigned) { copier_.on_irq(); };
	h.send = [&net, port](const uint8_t *frame, size_t len) { net.send(port, frame, len); };
	h.rx_ready = [&net, port] { net.rx_ready(port); };
	node_.set_hooks(std::move(h));
}

void Host::start()
{
	drv_->start();
	copier_.start();
}

void Host::on_rx(const RxFrame &f)
{
	Segment s;
	auto it = conns_.end();
	if (parse_segment(f, &s))
		it = conns_.find(s.dst_port);
	if (it == conns_.end()) {
		unknown_++;
		for (const RxFrag &frag : f.frags)
			drv_->return_pbuf(frag.id);
		return;
	}
	it->second->on_segment(f, s);
}

} // namespace dms_sim
