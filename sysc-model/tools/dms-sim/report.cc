// SPDX-License-Identifier: MIT
#include "report.h"

#include <algorithm>
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
	return sim.flow(0).wire->line_rate_gbps() * 1e9 * mss_of(mtu) /
	       (mtu + 14 + kEthWireOverhead);
}

void put_dir(std::ostream &o, const json::Value &d, double sim_ns)
{
	o << "{\"payload_bytes\": " << uint64_t(d["payload_bytes"].number())
	  << ", \"wire_bytes\": " << uint64_t(d["wire_bytes"].number())
	  << ", \"utilisation\": " << d["busy_ns"].number() / sim_ns << "}";
}

// The wire of flow f: "eth" with one pair, else "eth.NIC" (node0's NIC name).
std::string eth_name(const Simulation &sim, unsigned f)
{
	return sim.flows() == 1 ? "eth"
				: std::string("eth.") + dms_dev_name(sim.model(0), DMS_NIC(f));
}

void put_links(std::ostream &o, const Simulation &sim, double sim_ns)
{
	o << "\"links\": {";
	for (unsigned i = 0; i < 2; i++) {
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
	for (unsigned f = 0; f < sim.flows(); f++)
		for (unsigned from = 0; from < 2; from++) {
			const Wire &wire = *sim.flow(f).wire;
			const WireCounters &c = wire.counters(from);
			o << (f || from ? ", " : "") << "\"" << eth_name(sim, f) << ".node" << from
			  << "-node" << 1 - from
			  << "\": {\"kind\": \"ethernet\", \"gbps\": " << wire.line_rate_gbps()
			  << ", \"frames\": " << c.frames << ", \"held\": " << c.held
			  << ", \"bytes\": " << c.bytes << ", \"wire_bytes\": " << c.wire_bytes
			  << ", \"utilisation\": " << double(c.busy_ps) / 1e3 / sim_ns << "}";
		}
	o << "}";
}

// A node's drivers together (one per pair).
DriverCounters driver_sum(const Simulation &sim, unsigned node)
{
	DriverCounters sum;
	for (unsigned f = 0; f < sim.flows(); f++) {
		const DriverCounters &d = sim.flow(f).drv[node]->counters();
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
	for (unsigned f = 0; f < sim.flows(); f++)
		busy = std::max(busy, sim.flow(f).end[node]->cpu().busy_ps);
	return double(busy);
}

void put_nodes(std::ostream &o, const Simulation &sim, double sim_ns)
{
	o << "\"nodes\": {";
	for (unsigned i = 0; i < 2; i++) {
		const json::Value s = node_stats(sim, i);
		const json::Value &rc = s["pcie"]["root_complex"];
		const DriverCounters d = driver_sum(sim, i);
		o << (i ? ", " : "") << "\"node" << i
		  << "\": {\"root_complex\": {\"host_write_bytes\": "
		  << uint64_t(rc["host_write_bytes"].number())
		  << ", \"host_read_bytes\": " << uint64_t(rc["host_read_bytes"].number())
		  << ", \"p2p_bytes\": " << uint64_t(rc["p2p_bytes"].number())
		  << ", \"utilisation\": " << rc["busy_ns"].number() / sim_ns
		  << "}, \"host_memory\": {\"bytes\": "
		  << uint64_t(s["pcie"]["host_memory"]["bytes"].number())
		  << ", \"utilisation\": " << s["pcie"]["host_memory"]["busy_ns"].number() / sim_ns
		  << "}, \"cpu_utilisation\": " << busiest_cpu_ps(sim, i) / 1e3 / sim_ns
		  << ", \"driver\": {\"irqs\": " << d.irqs << ", \"polls\": " << d.polls
		  << ", \"rx_frames\": " << d.rx_frames << ", \"tx_frames\": " << d.tx_frames
		  << ", \"rx_errors\": " << d.rx_errors << ", \"tx_errors\": " << d.tx_errors
		  << ", \"stalls\": " << d.stalls
		  << "}, \"stats\": " << dms_node_stats_json(sim.model(i)) << "}";
	}
	o << "}";
}

// Flow f: node0's pair f to node1's pair f.
void put_flow(std::ostream &o, const Simulation &sim, unsigned f)
{
	const Workload &w = sim.workload();
	const Flow &fl = sim.flow(f);
	const ReceiverCounters &r = fl.rx->counters();
	const bool devmem = w.stream.mode == PayloadMode::Devmem;
	const std::string gpu = dms_dev_name(sim.model(0), DMS_GPU(f));
	o << "{\"name\": \"node0." << (devmem ? gpu : "host") << "->node1." << gpu
	  << "\", \"mode\": \"" << (devmem ? "devmem" : "bounce") << "\", \"mtu\": " << w.stream.mtu
	  << ", \"mss\": " << mss_of(w.stream.mtu) << ", \"window_bytes\": " << w.stream.window
	  << ", \"bytes\": " << fl.tx->sent() << ", \"delivered_bytes\": " << r.delivered
	  << ", \"goodput_bps\": " << sim.goodput_bps(f)
	  << ", \"line_rate_bps\": " << fl.wire->line_rate_gbps() * 1e9
	  << ", \"analytic_bound_bps\": " << bound_bps(sim)
	  << ", \"completed\": " << (fl.done() ? "true" : "false")
	  << ", \"verified\": " << (fl.verified() ? "true" : "false")
	  << ", \"crc_sent\": " << fl.tx->crc() << ", \"crc_received\": " << fl.rx->crc()
	  << ", \"out_of_order\": " << r.out_of_order << ", \"csum_bad\": " << r.csum_bad
	  << ", \"acks\": " << r.acks << ", \"copy_jobs\": " << r.copy_jobs
	  << ", \"copy_errors\": " << r.copy_errors << "}";
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
	  << ", \"warmup_ns\": " << w.warmup_ps / 1000 << ", ";
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

std::string report_summary(const Simulation &sim, double wall_s)
{
	const json::Value s1 = node_stats(sim, 1);
	const json::Value &rc = s1["pcie"]["root_complex"];
	const double bytes = double(sim.sent_bytes());
	const double rc_bytes = rc["host_write_bytes"].number() + rc["host_read_bytes"].number();
	const double bound = bound_bps(sim) * sim.flows();
	char buf[1024];
	std::snprintf(
		buf, sizeof(buf),
		"dms-sim: %s, %u stream(s) node0 -> node1, MTU %u (MSS %u), %.0f Gb/s wire each\n"
		"  goodput       %8.3f Gb/s   (analytic bound %.3f Gb/s: %.2f %%)\n"
		"  delivered     %8.3f MB     %s, %s\n"
		"  node1 root complex: %.3f bytes per payload byte; busiest CPU %.0f %%\n"
		"  simulated     %8.3f ms     wall %.2f s: %.2f simulated Gb/s per wall second\n",
		sim.workload().stream.mode == PayloadMode::Devmem ? "devmem" : "bounce",
		sim.flows(), sim.workload().stream.mtu, mss_of(sim.workload().stream.mtu),
		sim.flow(0).wire->line_rate_gbps(), sim.goodput_bps() / 1e9, bound / 1e9,
		100.0 * sim.goodput_bps() / bound, bytes / 1e6,
		sim.completed() ? "completed" : "STALLED",
		sim.verified() ? "CRC verified" : "NOT verified", bytes ? rc_bytes / bytes : 0.0,
		100.0 * busiest_cpu_ps(sim, 1) / double(sim.sim_ps()), double(sim.sim_ps()) / 1e9,
		wall_s, bytes * 8 / 1e9 / wall_s);
	std::string out = buf;
	for (unsigned f = 0; f < sim.flows() && sim.flows() > 1; f++) {
		std::snprintf(buf, sizeof(buf), "  flow %-3u     %8.3f Gb/s   %s\n", f,
			      sim.goodput_bps(f) / 1e9,
			      sim.flow(f).verified() ? "verified" : "NOT verified");
		out += buf;
	}
	return out;
}

} // namespace dms_sim
