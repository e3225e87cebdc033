// SPDX-License-Identifier: MIT
#include "sim.h"

#include <stdexcept>

#include "eth_switch.h"
#include "wire.h"

namespace dms_sim
{

namespace
{

// A run that has not finished this long after the sender's stop has
// stalled (the window drains in microseconds).
constexpr uint64_t kDrainLimitPs = 100'000'000'000; // 100 ms

bool stream_verified(const TcpSender &tx, const TcpReceiver &rx)
{
	const ReceiverCounters &c = rx.counters();
	return tx.done() && rx.finished() && c.delivered == tx.sent() && rx.crc() == tx.crc() &&
	       !c.out_of_order && !c.csum_bad && !c.copy_errors && !tx.copy_errors();
}

} // namespace

bool Flow::done() const
{
	const bool fwd = tx->done() && rx->finished();
	return rr ? fwd && back_tx->done() && back_rx->finished() && rr->done() : fwd;
}

bool Flow::verified() const
{
	return stream_verified(*tx, *rx) && (!rr || stream_verified(*back_tx, *back_rx));
}

uint64_t Flow::sent() const
{
	return tx->sent() + (rr ? back_tx->sent() : 0);
}

uint64_t Flow::delivered() const
{
	return rx->counters().delivered + (rr ? back_rx->counters().delivered : 0);
}

Simulation::Simulation(const std::vector<std::string> &node_files, double line_rate_gbps,
		       const Workload &w)
    : w_(w), gbps_(line_rate_gbps)
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
	pairs_ = dms_node_num_pairs(models_[0]);
	for (dms_node *n : models_)
		if (dms_node_num_pairs(n) != pairs_)
			throw std::runtime_error(
				"every node needs the same number of NIC/GPU pairs");
	const std::vector<FlowSpec> specs = flow_specs(w_);
	build_hosts(specs);
	build_networks();
	// Sized once: the callbacks hold pointers into the flows.
	flows_.resize(specs.size() * pairs_);
	for (unsigned i = 0; i < flows_.size(); i++) {
		flows_[i].spec = specs[i / pairs_];
		flows_[i].pair = i % pairs_;
		build_flow(flows_[i], i);
	}
}

Simulation::~Simulation()
{
	flows_.clear();
	nets_.clear();
	hosts_.clear();
	for (dms_node *n : models_)
		dms_node_free(n);
}

// A host per pair; those that receive payloads take them into GPU memory
// in devmem mode (the others only ever receive ACKs: host memory).
void Simulation::build_hosts(const std::vector<FlowSpec> &specs)
{
	const bool rr = w_.kind == TrafficKind::RequestResponse;
	for (unsigned node = 0; node < nodes(); node++) {
		bool receives = false;
		for (const FlowSpec &s : specs)
			receives |= s.dst == node || (rr && s.src == node);
		const HostParams p{w_.driver, w_.host_memory_bytes,
				   receives && w_.stream.mode == PayloadMode::Devmem};
		for (unsigned pair = 0; pair < pairs_; pair++)
			hosts_.push_back(std::make_unique<Host>(models_[node], node, pair, ev_, p));
	}
}

std::string Simulation::nic_label(unsigned node, unsigned pair) const
{
	const std::string n = "node" + std::to_string(node);
	return pairs_ == 1 ? n : n + "." + dms_dev_name(models_[node], DMS_NIC(pair));
}

void Simulation::build_networks()
{
	const NetworkParams &np = w_.net;
	if (np.kind == NetworkKind::Switch) {
		nets_.push_back(std::make_unique<EthSwitch>(ev_, gbps_, np.propagation_ps,
							    np.switch_latency_ps, np.cut_through));
		for (unsigned node = 0; node < nodes(); node++)
			for (unsigned p = 0; p < pairs_; p++)
				host_of(node, p).connect(*nets_[0],
							 nets_[0]->attach(host_of(node, p).node(),
									  nic_label(node, p)));
		return;
	}
	for (unsigned p = 0; p < pairs_; p++) { // one wire per pair, as before a switch
		const std::string name =
			pairs_ == 1
				? "eth."
				: "eth." + std::string(dms_dev_name(models_[0], DMS_NIC(p))) + ".";
		nets_.push_back(std::make_unique<Wire>(ev_, gbps_, np.propagation_ps, name));
		for (unsigned node = 0; node < 2; node++)
			host_of(node, p).connect(
				*nets_.back(), nets_.back()->attach(host_of(node, p).node(),
								    "node" + std::to_string(node)));
	}
}

// Stream index s's parameters: its own data, its message size.
StreamParams Simulation::stream_params(unsigned s, uint32_t message_bytes) const
{
	StreamParams sp = w_.stream;
	sp.stop_ps = w_.duration_ps;
	sp.seed += s;
	sp.message_bytes = message_bytes;
	return sp;
}

// Flow i: stream 2i (and, rr, 2i + 1 back), each with its own ports.
void Simulation::build_flow(Flow &f, unsigned i)
{
	Host &src = host_of(f.spec.src, f.pair), &dst = host_of(f.spec.dst, f.pair);
	auto ends = [&](Host &from, Host &to, unsigned s) {
		const uint32_t net = 0x0a000000 | f.pair << 8;
		return std::pair<Endpoint, Endpoint>{
			{from.node().mac(), net | (from.node().index() + 1), uint16_t(40000 + s)},
			{to.node().mac(), net | (to.node().index() + 1), uint16_t(5201 + s)}};
	};
	const bool rr = w_.kind == TrafficKind::RequestResponse;
	const auto [a, b] = ends(src, dst, 2 * i);
	const StreamParams sp = stream_params(2 * i, rr ? w_.rr.request_bytes : 0);
	f.tx = std::make_unique<TcpSender>(src, sp, a, b);
	f.rx = std::make_unique<TcpReceiver>(dst, sp, b, a);
	if (!rr)
		return;
	const auto [c, d] = ends(dst, src, 2 * i + 1);
	const StreamParams back = stream_params(2 * i + 1, w_.rr.response_bytes);
	f.back_tx = std::make_unique<TcpSender>(dst, back, c, d);
	f.back_rx = std::make_unique<TcpReceiver>(src, back, d, c);
	f.rr = std::make_unique<RrApp>(src.node(), w_.rr.request_bytes, w_.rr.response_bytes,
				       w_.rr.outstanding, w_.rr.messages,
				       RrStreams{*f.tx, *f.rx, *f.back_tx, *f.back_rx});
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
	trace_ctx_.assign(nodes(), {});
	for (unsigned i = 0; i < nodes(); i++) {
		trace_ctx_[i] = {this, i};
		dms_node_set_trace(models_[i], out ? trace_line : nullptr, &trace_ctx_[i]);
	}
}

void Simulation::step_model_to(uint64_t ns)
{
	dms_node_step(models_[0], ns); // the kernel is shared: this steps every node
	steps_++;
}

bool Simulation::all_done() const
{
	for (const Flow &f : flows_)
		if (!f.done())
			return false;
	return true;
}

void Simulation::start()
{
	step_model_to(0); // elaboration ends: no node can be added from here on
	for (auto &h : hosts_)
		h->start();
	for (Flow &f : flows_) {
		if (f.rr) {
			f.rr->start();
			continue;
		}
		f.tx->start();
		Flow *fp = &f;
		ev_.at(w_.warmup_ps,
		       [fp] { fp->delivered_at_warmup = fp->rx->counters().delivered; });
		ev_.at(w_.duration_ps,
		       [fp] { fp->delivered_at_stop = fp->rx->counters().delivered; });
	}
}

bool Simulation::run()
{
	start();
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
	const Flow &fl = flows_[f];
	if (fl.rr) {
		const uint64_t ps = fl.rr->elapsed_ps();
		return ps ? double(fl.delivered()) * 8.0 / (double(ps) * 1e-12) : 0.0;
	}
	const double secs = double(w_.duration_ps - w_.warmup_ps) * 1e-12;
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
		sum += f.sent();
	return sum;
}

uint64_t Simulation::node_payload_bytes(unsigned node) const
{
	uint64_t sum = 0;
	for (const Flow &f : flows_)
		if (f.spec.src == node || f.spec.dst == node)
			sum += f.sent();
	return sum;
}

} // namespace dms_sim
