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

bool Flow::verified() const
{
	return done() && rx->counters().delivered == tx->sent() && rx->crc() == tx->crc() &&
	       !rx->counters().out_of_order && !rx->counters().csum_bad;
}

Simulation::Simulation(const std::vector<std::string> &node_files, double line_rate_gbps,
		       const Workload &w)
    : w_(w)
{
	// Every node exists before the first step: the kernel is shared. The
	// nodes may have several pairs: dms-sim addresses device instances.
	for (const std::string &f : node_files) {
		char err[256] = "";
		dms_node *n = dms_node_new_topology(f.c_str(), err, sizeof(err));
		if (!n)
			throw std::runtime_error(err);
		models_.push_back(n);
	}
	const unsigned pairs = dms_node_num_pairs(models_[0]);
	if (dms_node_num_pairs(models_[1]) != pairs)
		throw std::runtime_error("both nodes need the same number of NIC/GPU pairs");
	// Sized once: the callbacks hold pointers into the flows.
	flows_.resize(pairs);
	for (unsigned p = 0; p < pairs; p++)
		build_flow(p, line_rate_gbps);
}

Simulation::~Simulation()
{
	flows_.clear();
	for (dms_node *n : models_)
		dms_node_free(n);
}

// Flow p: node0's pair p sends to node1's pair p, with its own ports.
void Simulation::build_flow(unsigned p, double line_rate_gbps)
{
	Flow &f = flows_[p];
	f.wire = std::make_unique<Wire>(ev_, line_rate_gbps, w_.propagation_ps);
	for (unsigned i = 0; i < 2; i++)
		f.end[i] = std::make_unique<SimNode>(models_[i], i, p, ev_, w_.host_memory_bytes);
	f.wire->connect(f.end[0].get(), f.end[1].get());
	const Endpoint e0{f.end[0]->mac(), 0x0a000001, uint16_t(40000 + p)},
		e1{f.end[1]->mac(), 0x0a000002, uint16_t(5201 + p)};
	// The sender's RX buffers (ACKs only) are host memory in both modes.
	StreamParams host_rx = w_.stream;
	host_rx.mode = PayloadMode::Bounce;
	f.drv[0] = std::make_unique<NicDriver>(
		*f.end[0], w_.driver, TcpReceiver::payload_pool(*f.end[0], host_rx, w_.driver));
	f.drv[1] = std::make_unique<NicDriver>(
		*f.end[1], w_.driver, TcpReceiver::payload_pool(*f.end[1], w_.stream, w_.driver));
	StreamParams sp = w_.stream;
	sp.stop_ps = w_.duration_ps;
	sp.seed += p; // each flow its own data
	f.tx = std::make_unique<TcpSender>(*f.end[0], *f.drv[0], sp, e0, e1);
	f.rx = std::make_unique<TcpReceiver>(*f.end[1], *f.drv[1], sp, e1, e0);
	wire_up(f);
}

void Simulation::wire_up(Flow &f)
{
	for (unsigned i = 0; i < 2; i++) {
		SimNode::Hooks h;
		NicDriver *drv = f.drv[i].get();
		h.nic_irq = [drv](unsigned v) { drv->on_irq(v); };
		TcpReceiver *rx = f.rx.get();
		h.gpu_irq = [rx, i](unsigned) {
			if (i == 1)
				rx->on_gpu_irq();
		};
		Wire *wire = f.wire.get();
		h.send = [wire, i](const uint8_t *frame, size_t n) { wire->send(i, frame, n); };
		h.rx_ready = [wire, i] { wire->rx_ready(i); };
		f.end[i]->set_hooks(std::move(h));
	}
}

// One trace line: simulated time (ns), node, device, the model's text.
void Simulation::trace_line(void *opaque, enum dms_dev dev, const char *line)
{
	auto *c = static_cast<TraceCtx *>(opaque);
	const char *name = dms_dev_name(c->sim->models_[c->node], dev);
	std::fprintf(c->sim->trace_, "%.3f node%u.%s %s\n", double(c->sim->ev_.now_ps()) / 1e3,
		     c->node, name ? name : "?", line);
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

bool Simulation::all_done() const
{
	for (const Flow &f : flows_)
		if (!f.done())
			return false;
	return true;
}

bool Simulation::run()
{
	step_model_to(0); // elaboration ends: no node can be added from here on
	for (Flow &f : flows_) {
		f.drv[0]->start();
		f.drv[1]->start();
		f.rx->start();
		f.tx->start();
		Flow *fp = &f;
		ev_.at(w_.warmup_ps,
		       [fp] { fp->delivered_at_warmup = fp->rx->counters().delivered; });
		ev_.at(w_.duration_ps,
		       [fp] { fp->delivered_at_stop = fp->rx->counters().delivered; });
	}
	const uint64_t limit = w_.duration_ps + kDrainLimitPs;
	while (!all_done()) {
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
	completed_ = all_done();
	return completed_ && verified();
}

bool Simulation::verified() const
{
	for (const Flow &f : flows_)
		if (!f.verified())
			return false;
	return completed_;
}

double Simulation::goodput_bps(unsigned f) const
{
	const double secs = double(w_.duration_ps - w_.warmup_ps) * 1e-12;
	const Flow &fl = flows_[f];
	return double(fl.delivered_at_stop - fl.delivered_at_warmup) * 8.0 / secs;
}

double Simulation::goodput_bps() const
{
	double sum = 0;
	for (unsigned f = 0; f < flows(); f++)
		sum += goodput_bps(f);
	return sum;
}

uint64_t Simulation::sent_bytes() const
{
	uint64_t sum = 0;
	for (const Flow &f : flows_)
		sum += f.tx->sent();
	return sum;
}

} // namespace dms_sim
