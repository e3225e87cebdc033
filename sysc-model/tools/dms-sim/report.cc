// SPDX-License-Identifier: MIT
#include "report.h"

#include <cstdio>
#include <sstream>

#include "json_lite.h"

namespace dms_sim
{

namespace
{

json::Value node_stats(const Simulation &sim, unsigned i)
{
	return json::parse(dms_node_stats_json(sim.node(i).node()));
}

// The analytic bound of an uncongested stream: line rate x MSS / (MTU +
// Ethernet header 14 + preamble/SFD 8 + FCS 4 + inter-frame gap 12).
double bound_bps(const Simulation &sim)
{
	const uint32_t mtu = sim.workload().stream.mtu;
	return sim.wire().line_rate_gbps() * 1e9 * mss_of(mtu) / (mtu + 14 + kEthWireOverhead);
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
	for (unsigned from = 0; from < 2; from++) {
		const WireCounters &c = sim.wire().counters(from);
		o << "\"eth.node" << from << "-node" << 1 - from
		  << "\": {\"kind\": \"ethernet\", \"gbps\": " << sim.wire().line_rate_gbps()
		  << ", \"frames\": " << c.frames << ", \"held\": " << c.held
		  << ", \"bytes\": " << c.bytes << ", \"wire_bytes\": " << c.wire_bytes
		  << ", \"utilisation\": " << double(c.busy_ps) / 1e3 / sim_ns << "}"
		  << (from ? "" : ", ");
	}
	o << "}";
}

void put_nodes(std::ostream &o, const Simulation &sim, double sim_ns)
{
	o << "\"nodes\": {";
	for (unsigned i = 0; i < 2; i++) {
		const json::Value s = node_stats(sim, i);
		const json::Value &rc = s["pcie"]["root_complex"];
		const DriverCounters &d = sim.driver(i).counters();
		o << (i ? ", " : "") << "\"node" << i
		  << "\": {\"root_complex\": {\"host_write_bytes\": "
		  << uint64_t(rc["host_write_bytes"].number())
		  << ", \"host_read_bytes\": " << uint64_t(rc["host_read_bytes"].number())
		  << ", \"p2p_bytes\": " << uint64_t(rc["p2p_bytes"].number())
		  << ", \"utilisation\": " << rc["busy_ns"].number() / sim_ns
		  << "}, \"host_memory\": {\"bytes\": "
		  << uint64_t(s["pcie"]["host_memory"]["bytes"].number())
		  << ", \"utilisation\": " << s["pcie"]["host_memory"]["busy_ns"].number() / sim_ns
		  << "}, \"cpu_utilisation\": " << double(sim.node(i).cpu().busy_ps) / 1e3 / sim_ns
		  << ", \"driver\": {\"irqs\": " << d.irqs << ", \"polls\": " << d.polls
		  << ", \"rx_frames\": " << d.rx_frames << ", \"tx_frames\": " << d.tx_frames
		  << ", \"rx_errors\": " << d.rx_errors << ", \"tx_errors\": " << d.tx_errors
		  << ", \"stalls\": " << d.stalls
		  << "}, \"stats\": " << dms_node_stats_json(sim.node(i).node()) << "}";
	}
	o << "}";
}

void put_flow(std::ostream &o, const Simulation &sim)
{
	const Workload &w = sim.workload();
	const ReceiverCounters &r = sim.receiver().counters();
	const bool devmem = w.stream.mode == PayloadMode::Devmem;
	o << "\"flows\": [{\"name\": \""
	  << (devmem ? "node0.gpu->node1.gpu" : "node0.host->node1.gpu") << "\", \"mode\": \""
	  << (devmem ? "devmem" : "bounce") << "\", \"mtu\": " << w.stream.mtu
	  << ", \"mss\": " << mss_of(w.stream.mtu) << ", \"window_bytes\": " << w.stream.window
	  << ", \"bytes\": " << sim.sender().sent() << ", \"delivered_bytes\": " << r.delivered
	  << ", \"goodput_bps\": " << sim.goodput_bps()
	  << ", \"line_rate_bps\": " << sim.wire().line_rate_gbps() * 1e9
	  << ", \"analytic_bound_bps\": " << bound_bps(sim)
	  << ", \"completed\": " << (sim.completed() ? "true" : "false")
	  << ", \"verified\": " << (sim.verified() ? "true" : "false")
	  << ", \"crc_sent\": " << sim.sender().crc()
	  << ", \"crc_received\": " << sim.receiver().crc()
	  << ", \"out_of_order\": " << r.out_of_order << ", \"csum_bad\": " << r.csum_bad
	  << ", \"acks\": " << r.acks << ", \"copy_jobs\": " << r.copy_jobs
	  << ", \"copy_errors\": " << r.copy_errors << "}]";
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
	put_flow(o, sim);
	o << ", ";
	put_links(o, sim, sim_ns);
	o << ", ";
	put_nodes(o, sim, sim_ns);
	const double events = double(sim.host_events() + sim.model_steps());
	o << ", \"sim_time_ns\": " << uint64_t(sim_ns) << ", \"wall_time_s\": " << wall_s
	  << ", \"host_events\": " << sim.host_events()
	  << ", \"model_steps\": " << sim.model_steps() << ", \"events_per_s\": " << events / wall_s
	  << ", \"sim_gbps_per_wall_s\": " << double(sim.sender().sent()) * 8 / 1e9 / wall_s
	  << "}\n";
	return o.str();
}

std::string report_summary(const Simulation &sim, double wall_s)
{
	const json::Value s1 = node_stats(sim, 1);
	const json::Value &rc = s1["pcie"]["root_complex"];
	const double bytes = double(sim.sender().sent());
	const double rc_bytes = rc["host_write_bytes"].number() + rc["host_read_bytes"].number();
	char buf[1024];
	std::snprintf(
		buf, sizeof(buf),
		"dms-sim: %s stream node0 -> node1, MTU %u (MSS %u), %.0f Gb/s wire\n"
		"  goodput       %8.3f Gb/s   (analytic bound %.3f Gb/s: %.2f %%)\n"
		"  delivered     %8.3f MB     %s, %s\n"
		"  node1 root complex: %.3f bytes per payload byte; CPU busy %.0f %%\n"
		"  simulated     %8.3f ms     wall %.2f s: %.2f simulated Gb/s per wall second\n",
		sim.workload().stream.mode == PayloadMode::Devmem ? "devmem" : "bounce",
		sim.workload().stream.mtu, mss_of(sim.workload().stream.mtu),
		sim.wire().line_rate_gbps(), sim.goodput_bps() / 1e9, bound_bps(sim) / 1e9,
		100.0 * sim.goodput_bps() / bound_bps(sim), bytes / 1e6,
		sim.completed() ? "completed" : "STALLED",
		sim.verified() ? "CRC verified" : "NOT verified", bytes ? rc_bytes / bytes : 0.0,
		100.0 * double(sim.node(1).cpu().busy_ps) / double(sim.sim_ps()),
		double(sim.sim_ps()) / 1e9, wall_s, bytes * 8 / 1e9 / wall_s);
	return buf;
}

} // namespace dms_sim
