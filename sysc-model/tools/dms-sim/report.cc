// SPDX-License-Identifier: MIT
#include "report.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <sstream>

#include "json_lite.h"

namespace dms_sim
{

namespace
{

json::Value node_stats(const Simulation &sim, unsigned i)
{
	return json::parse(dms_node_stats_json(sim.model(i)));
}

// The analytic bound of an uncongested stream: line rate x MSS / (MTU +
// Ethernet header 14 + preamble/SFD 8 + FCS 4 + inter-frame gap 12).
double bound_bps(const Simulation &sim)
{
	const uint32_t mtu = sim.workload().stream.mtu;
	return sim.line_rate_gbps() * 1e9 * mss_of(mtu) / (mtu + 14 + kEthWireOverhead);
}

bool is_rr(const Simulation &sim)
{
	return sim.workload().kind == TrafficKind::RequestResponse;
}

void put_dir(std::ostream &o, const json::Value &d, double sim_ns)
{
	o << "{\"payload_bytes\": " << uint64_t(d["payload_bytes"].number())
	  << ", \"wire_bytes\": " << uint64_t(d["wire_bytes"].number())
	  << ", \"utilisation\": " << d["busy_ns"].number() / sim_ns << "}";
}

void put_links(std::ostream &o, const Simulation &sim, double sim_ns)
{
	o << "\"links\": {";
	for (unsigned i = 0; i < sim.nodes(); i++) {
		const json::Value s = node_stats(sim, i);
		for (const auto &[name, l] : s["pcie"]["links"].obj) {
			o << "\"node" << i << "." << name
			  << "\": {\"kind\": \"pcie\", \"gen\": " << l["gen"].number()
			  << ", \"width\": " << l["width"].number() << ", \"up\": ";
			put_dir(o, l["up"], sim_ns);
			o << ", \"down\": ";
			put_dir(o, l["down"], sim_ns);
			o << "}, ";
		}
	}
	const char *sep = "";
	for (const auto &net : sim.networks())
		for (const Network::Link &l : net->links()) {
			const WireCounters &c = l.c;
			o << sep << "\"" << l.name
			  << "\": {\"kind\": \"ethernet\", \"gbps\": " << l.gbps
			  << ", \"frames\": " << c.frames << ", \"held\": " << c.held
			  << ", \"bytes\": " << c.bytes << ", \"wire_bytes\": " << c.wire_bytes
			  << ", \"utilisation\": " << double(c.busy_ps) / 1e3 / sim_ns
			  << ", \"max_queue_ns\": " << double(c.max_queue_ps) / 1e3 << "}";
			sep = ", ";
		}
	o << "}";
}

// A node's drivers together (one per pair).
DriverCounters driver_sum(const Simulation &sim, unsigned node)
{
	DriverCounters sum;
	for (unsigned p = 0; p < sim.pairs(); p++) {
		const DriverCounters &d = sim.host(node, p).driver().counters();
		sum.irqs += d.irqs;
		sum.polls += d.polls;
		sum.rx_frames += d.rx_frames;
		sum.tx_frames += d.tx_frames;
		sum.rx_errors += d.rx_errors;
		sum.tx_errors += d.tx_errors;
		sum.stalls += d.stalls;
	}
	return sum;
}

// Each pair has its own core: the busiest one's time.
double busiest_cpu_ps(const Simulation &sim, unsigned node)
{
	uint64_t busy = 0;
	for (unsigned p = 0; p < sim.pairs(); p++)
		busy = std::max(busy, sim.host(node, p).node().cpu().busy_ps);
	return double(busy);
}

// Host writes and reads at the node's root complex per payload byte its
// flows sent or received.
double rc_per_payload(const Simulation &sim, unsigned node, const json::Value &stats)
{
	const json::Value &rc = stats["pcie"]["root_complex"];
	const double bytes = double(sim.node_payload_bytes(node));
	return bytes ? (rc["host_write_bytes"].number() + rc["host_read_bytes"].number()) / bytes
		     : 0.0;
}

void put_node(std::ostream &o, const Simulation &sim, unsigned i, double sim_ns)
{
	const json::Value s = node_stats(sim, i);
	const json::Value &rc = s["pcie"]["root_complex"];
	const DriverCounters d = driver_sum(sim, i);
	o << "\"node" << i << "\": {\"payload_bytes\": " << sim.node_payload_bytes(i)
	  << ", \"root_complex\": {\"host_write_bytes\": "
	  << uint64_t(rc["host_write_bytes"].number())
	  << ", \"host_read_bytes\": " << uint64_t(rc["host_read_bytes"].number())
	  << ", \"p2p_bytes\": " << uint64_t(rc["p2p_bytes"].number())
	  << ", \"utilisation\": " << rc["busy_ns"].number() / sim_ns
	  << ", \"bytes_per_payload_byte\": " << rc_per_payload(sim, i, s)
	  << "}, \"host_memory\": {\"bytes\": "
	  << uint64_t(s["pcie"]["host_memory"]["bytes"].number())
	  << ", \"utilisation\": " << s["pcie"]["host_memory"]["busy_ns"].number() / sim_ns
	  << "}, \"cpu_utilisation\": " << busiest_cpu_ps(sim, i) / 1e3 / sim_ns
	  << ", \"driver\": {\"irqs\": " << d.irqs << ", \"polls\": " << d.polls
	  << ", \"rx_frames\": " << d.rx_frames << ", \"tx_frames\": " << d.tx_frames
	  << ", \"rx_errors\": " << d.rx_errors << ", \"tx_errors\": " << d.tx_errors
	  << ", \"stalls\": " << d.stalls << "}, \"stats\": " << dms_node_stats_json(sim.model(i))
	  << "}";
}

void put_nodes(std::ostream &o, const Simulation &sim, double sim_ns)
{
	o << "\"nodes\": {";
	for (unsigned i = 0; i < sim.nodes(); i++) {
		o << (i ? ", " : "");
		put_node(o, sim, i, sim_ns);
	}
	o << "}";
}

// Nearest-rank percentiles of the flow's message latencies, in ns.
struct LatencyStats {
	size_t count = 0;
	double min = 0, max = 0, mean = 0, p50 = 0, p90 = 0, p99 = 0, p999 = 0;
};

LatencyStats latency_stats(std::vector<uint64_t> ps)
{
	LatencyStats s;
	s.count = ps.size();
	if (ps.empty())
		return s;
	std::sort(ps.begin(), ps.end());
	auto rank = [&](double q) {
		const size_t r = size_t(std::ceil(q * double(ps.size())));
		return double(ps[std::max<size_t>(r, 1) - 1]) / 1e3;
	};
	double sum = 0;
	for (uint64_t v : ps)
		sum += double(v);
	s.min = double(ps.front()) / 1e3;
	s.max = double(ps.back()) / 1e3;
	s.mean = sum / double(ps.size()) / 1e3;
	s.p50 = rank(0.50);
	s.p90 = rank(0.90);
	s.p99 = rank(0.99);
	s.p999 = rank(0.999);
	return s;
}

void put_rr(std::ostream &o, const Simulation &sim, const Flow &fl)
{
	const RrParams &rr = sim.workload().rr;
	const LatencyStats l = latency_stats(fl.rr->latencies_ps());
	const double secs = double(fl.rr->elapsed_ps()) * 1e-12;
	o << ", \"request_bytes\": " << rr.request_bytes
	  << ", \"response_bytes\": " << rr.response_bytes
	  << ", \"outstanding\": " << rr.outstanding << ", \"messages\": " << l.count
	  << ", \"messages_per_s\": " << (secs > 0 ? double(l.count) / secs : 0.0)
	  << ", \"latency_ns\": {\"count\": " << l.count << ", \"min\": " << l.min
	  << ", \"max\": " << l.max << ", \"mean\": " << l.mean << ", \"p50\": " << l.p50
	  << ", \"p90\": " << l.p90 << ", \"p99\": " << l.p99 << ", \"p999\": " << l.p999 << "}";
}

// Flow f: node src's pair to node dst's, the payload GPU to GPU.
void put_flow(std::ostream &o, const Simulation &sim, unsigned f)
{
	const Workload &w = sim.workload();
	const Flow &fl = sim.flow(f);
	const ReceiverCounters &r = fl.rx->counters();
	const std::string gpu = dms_dev_name(sim.model(0), DMS_GPU(fl.pair));
	// Both ends' copy-engine jobs, both ways.
	uint64_t copy_jobs = r.copy_jobs + fl.tx->copy_jobs();
	uint64_t copy_errors = r.copy_errors + fl.tx->copy_errors();
	if (fl.rr) {
		copy_jobs += fl.back_rx->counters().copy_jobs + fl.back_tx->copy_jobs();
		copy_errors += fl.back_rx->counters().copy_errors + fl.back_tx->copy_errors();
	}
	o << "{\"name\": \"node" << fl.spec.src << "." << gpu << "->node" << fl.spec.dst << "."
	  << gpu << "\", \"kind\": \"" << (fl.rr ? "rr" : "stream") << "\", \"mode\": \""
	  << (w.stream.mode == PayloadMode::Devmem ? "devmem" : "bounce")
	  << "\", \"src\": " << fl.spec.src << ", \"dst\": " << fl.spec.dst
	  << ", \"pair\": " << fl.pair << ", \"mtu\": " << w.stream.mtu
	  << ", \"mss\": " << mss_of(w.stream.mtu) << ", \"window_bytes\": " << w.stream.window
	  << ", \"bytes\": " << fl.sent() << ", \"delivered_bytes\": " << fl.delivered()
	  << ", \"goodput_bps\": " << sim.goodput_bps(f)
	  << ", \"line_rate_bps\": " << sim.line_rate_gbps() * 1e9
	  << ", \"analytic_bound_bps\": " << bound_bps(sim)
	  << ", \"completed\": " << (fl.done() ? "true" : "false")
	  << ", \"verified\": " << (fl.verified() ? "true" : "false")
	  << ", \"crc_sent\": " << fl.tx->crc() << ", \"crc_received\": " << fl.rx->crc()
	  << ", \"out_of_order\": " << r.out_of_order << ", \"csum_bad\": " << r.csum_bad
	  << ", \"acks\": " << r.acks << ", \"copy_jobs\": " << copy_jobs
	  << ", \"copy_errors\": " << copy_errors;
	if (fl.rr)
		put_rr(o, sim, fl);
	o << "}";
}

void put_flows(std::ostream &o, const Simulation &sim)
{
	o << "\"flows\": [";
	for (unsigned f = 0; f < sim.flows(); f++) {
		o << (f ? ", " : "");
		put_flow(o, sim, f);
	}
	o << "], \"goodput_bps\": " << sim.goodput_bps();
}

} // namespace

std::string report_json(const Simulation &sim, double wall_s)
{
	const double sim_ns = double(sim.sim_ps()) / 1e3;
	const Workload &w = sim.workload();
	std::ostringstream o;
	o.precision(10);
	o << "{\"schema\": \"devmemsim-sim/1\", \"seed\": " << w.stream.seed
	  << ", \"duration_ns\": " << w.duration_ps / 1000
	  << ", \"warmup_ns\": " << w.warmup_ps / 1000 << ", \"network\": {\"kind\": \""
	  << (w.net.kind == NetworkKind::Switch ? "switch" : "wire")
	  << "\", \"nodes\": " << sim.nodes() << ", \"pairs_per_node\": " << sim.pairs() << "}, ";
	put_flows(o, sim);
	o << ", ";
	put_links(o, sim, sim_ns);
	o << ", ";
	put_nodes(o, sim, sim_ns);
	const double events = double(sim.host_events() + sim.model_steps());
	o << ", \"sim_time_ns\": " << uint64_t(sim_ns) << ", \"wall_time_s\": " << wall_s
	  << ", \"host_events\": " << sim.host_events()
	  << ", \"model_steps\": " << sim.model_steps() << ", \"events_per_s\": " << events / wall_s
	  << ", \"sim_gbps_per_wall_s\": " << double(sim.sent_bytes()) * 8 / 1e9 / wall_s << "}\n";
	return o.str();
}

namespace
{

std::string headline(const Simulation &sim)
{
	const Workload &w = sim.workload();
	char buf[512];
	std::snprintf(buf, sizeof(buf),
		      "dms-sim: %s %s, %u flow(s) (%s), %u nodes on %s, MTU %u (MSS %u), "
		      "%.0f Gb/s\n",
		      w.stream.mode == PayloadMode::Devmem ? "devmem" : "bounce",
		      is_rr(sim) ? "request/response" : "stream", sim.flows(), w.flows.c_str(),
		      sim.nodes(), w.net.kind == NetworkKind::Switch ? "a switch" : "a wire",
		      w.stream.mtu, mss_of(w.stream.mtu), sim.line_rate_gbps());
	return buf;
}

// Per node, up to 8: root-complex bytes per payload byte and the busiest
// core, on two lines.
std::string node_lines(const Simulation &sim)
{
	std::string rc = "  root complex per payload byte:", cpu = "  busiest CPU:";
	char buf[64];
	for (unsigned i = 0; i < sim.nodes() && i < 8; i++) {
		std::snprintf(buf, sizeof(buf), " node%u %.3f", i,
			      rc_per_payload(sim, i, node_stats(sim, i)));
		rc += buf;
		std::snprintf(buf, sizeof(buf), " node%u %.0f %%", i,
			      100.0 * busiest_cpu_ps(sim, i) / double(sim.sim_ps()));
		cpu += buf;
	}
	const char *more = sim.nodes() > 8 ? " ...\n" : "\n";
	return rc + more + cpu + more;
}

std::string flow_line(const Simulation &sim, unsigned f)
{
	const Flow &fl = sim.flow(f);
	char buf[256];
	int n = std::snprintf(buf, sizeof(buf), "  flow %-3u %u->%u %8.3f Gb/s   %s", f,
			      fl.spec.src, fl.spec.dst, sim.goodput_bps(f) / 1e9,
			      fl.verified() ? "verified" : "NOT verified");
	if (fl.rr) {
		const LatencyStats l = latency_stats(fl.rr->latencies_ps());
		std::snprintf(buf + n, sizeof(buf) - size_t(n),
			      "; latency us p50 %.2f p90 %.2f p99 %.2f p99.9 %.2f "
			      "(min %.2f max %.2f mean %.2f, %zu messages)",
			      l.p50 / 1e3, l.p90 / 1e3, l.p99 / 1e3, l.p999 / 1e3, l.min / 1e3,
			      l.max / 1e3, l.mean / 1e3, l.count);
	}
	return std::string(buf) + "\n";
}

} // namespace

std::string report_summary(const Simulation &sim, double wall_s)
{
	const double bytes = double(sim.sent_bytes());
	char buf[512];
	std::string out = headline(sim);
	if (is_rr(sim)) {
		std::snprintf(buf, sizeof(buf),
			      "  request %u B, response %u B, %u outstanding, %llu messages per "
			      "flow\n  goodput       %8.3f Gb/s   (both ways)\n",
			      sim.workload().rr.request_bytes, sim.workload().rr.response_bytes,
			      sim.workload().rr.outstanding,
			      static_cast<unsigned long long>(sim.workload().rr.messages),
			      sim.goodput_bps() / 1e9);
	} else {
		const double bound = bound_bps(sim) * sim.flows();
		std::snprintf(buf, sizeof(buf),
			      "  goodput       %8.3f Gb/s   (analytic bound %.3f Gb/s: %.2f %%)\n",
			      sim.goodput_bps() / 1e9, bound / 1e9,
			      100.0 * sim.goodput_bps() / bound);
	}
	out += buf;
	std::snprintf(buf, sizeof(buf), "  delivered     %8.3f MB     %s, %s\n", bytes / 1e6,
		      sim.completed() ? "completed" : "STALLED",
		      sim.verified() ? "CRC verified" : "NOT verified");
	out += buf + node_lines(sim);
	std::snprintf(buf, sizeof(buf),
		      "  simulated     %8.3f ms     wall %.2f s: %.2f simulated Gb/s per wall "
		      "second\n",
		      double(sim.sim_ps()) / 1e9, wall_s, bytes * 8 / 1e9 / wall_s);
	out += buf;
	for (unsigned f = 0; f < sim.flows() && (sim.flows() > 1 || is_rr(sim)); f++)
		out += flow_line(sim, f);
	return out;
}

} // namespace dms_sim
