// SPDX-License-Identifier: MIT
#include "sim.h"

#include <stdexcept>

namespace dms_sim
{

namespace
{

// A run that has not finished this long after the sender's stop has
// stalled (the window drains in microseconds).
constexpr uint64_t kDrainLimitPs = 100'000'000'000; // 100 ms

} // namespace

Simulation::Simulation(const std::vector<std::string> &node_files, double line_rate_gbps,
		       const Workload &w)
    : w_(w)
{
	// Every node exists before the first step: the kernel is shared.
	for (const std::string &f : node_files) {
		char err[256] = "";
		dms_node *n = dms_node_new(f.c_str(), err, sizeof(err));
		if (!n)
			throw std::runtime_error(err);
		models_.push_back(n);
	}
	wire_ = std::make_unique<Wire>(ev_, line_rate_gbps, w.propagation_ps);
	for (unsigned i = 0; i < 2; i++)
		nodes_.push_back(
			std::make_unique<SimNode>(models_[i], i, ev_, w.host_memory_bytes));
	wire_->connect(nodes_[0].get(), nodes_[1].get());
	const Endpoint e0{nodes_[0]->mac(), 0x0a000001, 40000},
		e1{nodes_[1]->mac(), 0x0a000002, 5201};
	// The sender's RX buffers (ACKs only) are host memory in both modes.
	StreamParams host_rx = w.stream;
	host_rx.mode = PayloadMode::Bounce;
	drv_.push_back(std::make_unique<NicDriver>(
		*nodes_[0], w.driver, TcpReceiver::payload_pool(*nodes_[0], host_rx, w.driver)));
	drv_.push_back(std::make_unique<NicDriver>(
		*nodes_[1], w.driver, TcpReceiver::payload_pool(*nodes_[1], w.stream, w.driver)));
	StreamParams sp = w.stream;
	sp.stop_ps = w.duration_ps;
	tx_ = std::make_unique<TcpSender>(*nodes_[0], *drv_[0], sp, e0, e1);
	rx_ = std::make_unique<TcpReceiver>(*nodes_[1], *drv_[1], sp, e1, e0);
	for (unsigned i = 0; i < 2; i++)
		wire_up(i);
}

Simulation::~Simulation()
{
	tx_.reset();
	rx_.reset();
	drv_.clear();
	nodes_.clear();
	for (dms_node *n : models_)
		dms_node_free(n);
}

void Simulation::wire_up(unsigned i)
{
	SimNode::Hooks h;
	h.nic_irq = [this, i](unsigned v) { drv_[i]->on_irq(v); };
	h.gpu_irq = [this, i](unsigned) {
		if (i == 1)
			rx_->on_gpu_irq();
	};
	h.send = [this, i](const uint8_t *f, size_t n) { wire_->send(i, f, n); };
	h.rx_ready = [this, i] { wire_->rx_ready(i); };
	nodes_[i]->set_hooks(std::move(h));
}

// One trace line: simulated time (ns), node, device, the model's text.
void Simulation::trace_line(void *opaque, enum dms_dev dev, const char *line)
{
	auto *c = static_cast<TraceCtx *>(opaque);
	std::fprintf(c->sim->trace_, "%.3f node%u.%s %s\n", double(c->sim->ev_.now_ps()) / 1e3,
		     c->node, dev == DMS_DEV_NIC ? "nic" : "gpu", line);
}

void Simulation::set_trace(std::FILE *out)
{
	trace_ = out;
	for (unsigned i = 0; i < 2; i++) {
		trace_ctx_[i] = {this, i};
		dms_node_set_trace(models_[i], out ? trace_line : nullptr, &trace_ctx_[i]);
	}
}

void Simulation::step_model_to(uint64_t ns)
{
	dms_node_step(models_[0], ns); // the kernel is shared: this steps both nodes
	steps_++;
}

bool Simulation::run()
{
	step_model_to(0); // elaboration ends: no node can be added from here on
	drv_[0]->start();
	drv_[1]->start();
	rx_->start();
	tx_->start();
	ev_.at(w_.warmup_ps, [this] { delivered_at_warmup_ = rx_->counters().delivered; });
	ev_.at(w_.duration_ps, [this] { delivered_at_stop_ = rx_->counters().delivered; });
	const uint64_t limit = w_.duration_ps + kDrainLimitPs;
	while (!(tx_->done() && rx_->finished())) {
		const uint64_t d = dms_node_deadline_ns(models_[0]);
		const bool host = !ev_.empty();
		if (d == DMS_NO_DEADLINE && !host)
			break; // nothing will ever happen again: stalled
		if (d != DMS_NO_DEADLINE && (!host || d * kPsPerNs <= ev_.next_ps())) {
			if (d * kPsPerNs > limit)
				break;
			ev_.advance(d * kPsPerNs); // model callbacks happen at d
			step_model_to(d);
			continue;
		}
		if (ev_.next_ps() > limit)
			break;
		// The model catches up with the host event before it runs.
		step_model_to((ev_.next_ps() + kPsPerNs - 1) / kPsPerNs);
		ev_.run_next();
	}
	completed_ = tx_->done() && rx_->finished();
	return completed_ && verified();
}

bool Simulation::verified() const
{
	return completed_ && rx_->counters().delivered == tx_->sent() && rx_->crc() == tx_->crc() &&
	       !rx_->counters().out_of_order && !rx_->counters().csum_bad;
}

double Simulation::goodput_bps() const
{
	const double secs = double(w_.duration_ps - w_.warmup_ps) * 1e-12;
	return double(delivered_at_stop_ - delivered_at_warmup_) * 8.0 / secs;
}

} // namespace dms_sim
