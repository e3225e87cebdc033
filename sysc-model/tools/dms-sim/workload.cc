// SPDX-License-Identifier: MIT
#include "workload.h"

#include "devmemsim/nic_regs.h"

#include <algorithm>
#include <functional>
#include <map>
#include <sstream>
#include <stdexcept>
#include <toml++/toml.h>

namespace dms_sim
{

namespace
{

const char *const kSections[] = {"run", "traffic", "driver", "cpu", "bounce", "rr", "network"};

// Every numeric key: its range, and where its value goes.
struct Key {
	double min, max;
	std::function<void(Workload &, double)> set;
};

// Every key whose value is one word of a list (choices empty: any text).
struct WordKey {
	std::vector<std::string> choices;
	std::function<void(Workload &, const std::string &)> set;
};

std::map<std::string, WordKey> word_keys()
{
	return {
		{"traffic.mode",
		 {{"devmem", "bounce"},
		  [](Workload &w, const std::string &s) {
			  w.stream.mode = s == "devmem" ? PayloadMode::Devmem : PayloadMode::Bounce;
		  }}},
		{"traffic.kind",
		 {{"stream", "rr"},
		  [](Workload &w, const std::string &s) {
			  w.kind = s == "rr" ? TrafficKind::RequestResponse : TrafficKind::Stream;
		  }}},
		{"traffic.flows", {{}, [](Workload &w, const std::string &s) { w.flows = s; }}},
		{"network.kind",
		 {{"wire", "switch"},
		  [](Workload &w, const std::string &s) {
			  w.net.kind = s == "switch" ? NetworkKind::Switch : NetworkKind::Wire;
		  }}},
		{"network.forwarding",
		 {{"store-and-forward", "cut-through"},
		  [](Workload &w, const std::string &s) {
			  w.net.cut_through = s == "cut-through";
		  }}},
	};
}

std::map<std::string, Key> keys()
{
	auto ps = [](uint64_t Workload::*f, double scale) {
		return [f, scale](Workload &w, double v) { w.*f = uint64_t(v * scale); };
	};
	return {
		{"run.duration_us", {1, 1e7, ps(&Workload::duration_ps, 1e6)}},
		{"run.warmup_us", {0, 1e7, ps(&Workload::warmup_ps, 1e6)}},
		{"run.seed", {0, 4e9, [](Workload &w, double v) { w.stream.seed = uint32_t(v); }}},
		{"run.host_memory_mib",
		 {16, 4096,
		  [](Workload &w, double v) { w.host_memory_bytes = uint64_t(v) << 20; }}},
		{"traffic.window_kib",
		 {16, 1 << 20, [](Workload &w, double v) { w.stream.window = uint64_t(v) << 10; }}},
		{"traffic.ack_every",
		 {1, 64, [](Workload &w, double v) { w.stream.ack_every = unsigned(v); }}},
		{"driver.mtu",
		 {576, DMS_NIC_MAX_MTU,
		  [](Workload &w, double v) { w.stream.mtu = w.driver.mtu = uint32_t(v); }}},
		{"driver.rx_ring_log2",
		 {6, 15, [](Workload &w, double v) { w.driver.rx_ring_log2 = unsigned(v); }}},
		{"driver.tx_ring_log2",
		 {6, 15, [](Workload &w, double v) { w.driver.tx_ring_log2 = unsigned(v); }}},
		{"driver.hbuf_size",
		 {128, 4096, [](Workload &w, double v) { w.driver.hbuf_size = uint32_t(v); }}},
		{"driver.pbuf_size",
		 {512, 65536, [](Workload &w, double v) { w.driver.pbuf_size = uint32_t(v); }}},
		{"driver.itr_ns",
		 {0, 1e6, [](Workload &w, double v) { w.driver.itr_ns = uint32_t(v); }}},
		{"driver.napi_budget",
		 {1, 4096, [](Workload &w, double v) { w.driver.napi_budget = unsigned(v); }}},
		{"cpu.irq_ns",
		 {0, 1e6, [](Workload &w, double v) { w.driver.irq_ps = uint64_t(v * 1e3); }}},
		{"cpu.rx_frame_ns",
		 {0, 1e6, [](Workload &w, double v) { w.driver.rx_frame_ps = uint64_t(v * 1e3); }}},
		{"cpu.tx_frame_ns",
		 {0, 1e6, [](Workload &w, double v) { w.driver.tx_frame_ps = uint64_t(v * 1e3); }}},
		{"cpu.copy_ps_per_byte",
		 {0, 1e6, [](Workload &w, double v) { w.stream.copy_byte_ps = uint64_t(v); }}},
		{"bounce.chunk_kib",
		 {16, 65536,
		  [](Workload &w, double v) { w.stream.chunk_bytes = uint32_t(v) << 10; }}},
		{"bounce.chunks",
		 {1, 1024, [](Workload &w, double v) { w.stream.chunks = unsigned(v); }}},
		{"rr.request_bytes",
		 {1, 1 << 30, [](Workload &w, double v) { w.rr.request_bytes = uint32_t(v); }}},
		{"rr.response_bytes",
		 {1, 1 << 30, [](Workload &w, double v) { w.rr.response_bytes = uint32_t(v); }}},
		{"rr.outstanding",
		 {1, 1024, [](Workload &w, double v) { w.rr.outstanding = unsigned(v); }}},
		{"rr.messages",
		 {1, 1e9, [](Workload &w, double v) { w.rr.messages = uint64_t(v); }}},
		{"network.nodes",
		 {2, 64, [](Workload &w, double v) { w.net.nodes = unsigned(v); }}},
		{"network.propagation_ns",
		 {0, 1e9, [](Workload &w, double v) { w.net.propagation_ps = uint64_t(v * 1e3); }}},
		{"network.switch_latency_ns",
		 {0, 1e9,
		  [](Workload &w, double v) { w.net.switch_latency_ps = uint64_t(v * 1e3); }}},
	};
}

std::string num_text(double v)
{
	std::ostringstream o;
	o << v;
	return o.str();
}

std::string one_of(const std::vector<std::string> &choices)
{
	std::string s;
	for (size_t i = 0; i < choices.size(); i++)
		s += (i ? i + 1 == choices.size() ? " or \"" : ", \"" : "\"") + choices[i] + "\"";
	return s;
}

void apply(Workload &w, const std::string &where, const std::string &key, const toml::node &v)
{
	static const std::map<std::string, Key> table = keys();
	static const std::map<std::string, WordKey> words = word_keys();
	if (auto wk = words.find(key); wk != words.end()) {
		const auto s = v.value<std::string>();
		const auto &ch = wk->second.choices;
		if (!s || (!ch.empty() && std::find(ch.begin(), ch.end(), *s) == ch.end()))
			throw std::runtime_error(where + ": " + key + ": expected " +
						 (ch.empty() ? "a string" : one_of(ch)));
		wk->second.set(w, *s);
		return;
	}
	auto it = table.find(key);
	if (it == table.end())
		throw std::runtime_error(where + ": " + key + ": unknown key");
	const auto num = v.value<double>();
	if (!num || *num < it->second.min || *num > it->second.max)
		throw std::runtime_error(where + ": " + key + ": expected a number from " +
					 num_text(it->second.min) + " to " +
					 num_text(it->second.max));
	it->second.set(w, *num);
}

void apply_table(Workload &w, const std::string &where, const toml::table &t)
{
	for (const auto &[section, sub] : t) {
		const toml::table *st = sub.as_table();
		if (!st)
			throw std::runtime_error(where + ": " + std::string(section.str()) +
						 ": unknown key");
		for (const auto &[k, v] : *st)
			apply(w, where, std::string(section.str()) + "." + std::string(k.str()), v);
	}
}

} // namespace

bool is_workload_key(const std::string &key)
{
	for (const char *s : kSections)
		if (key.rfind(std::string(s) + ".", 0) == 0)
			return true;
	return false;
}

Workload load_workload(const std::string &path, const std::vector<std::string> &overrides)
{
	Workload w;
	try {
		if (!path.empty())
			apply_table(w, path, toml::parse_file(path));
	} catch (const toml::parse_error &e) {
		throw std::runtime_error(path + ": " + std::string(e.description()));
	}
	for (const std::string &o : overrides) {
		const size_t eq = o.find('=');
		if (eq == std::string::npos)
			throw std::runtime_error("--set " + o + ": expected KEY=VALUE");
		const std::string key = o.substr(0, eq), val = o.substr(eq + 1);
		toml::table t;
		try {
			t = toml::parse("v = " + val);
		} catch (const toml::parse_error &) {
			t = toml::table{{"v", val}}; // a bare word is a string
		}
		apply(w, "--set " + o, key, *t.get("v"));
	}
	if (w.warmup_ps >= w.duration_ps)
		throw std::runtime_error("run.warmup_us must be below run.duration_us");
	if (w.net.kind == NetworkKind::Wire && w.net.nodes != 2)
		throw std::runtime_error("network.nodes: a wire joins 2 nodes (network.kind = "
					 "\"switch\" for more)");
	flow_specs(w); // checks traffic.flows against the node count
	return w;
}

std::vector<FlowSpec> flow_specs(const Workload &w)
{
	const unsigned n = w.net.nodes;
	std::vector<FlowSpec> specs;
	if (w.flows == "ring") {
		for (unsigned i = 0; i < n; i++)
			specs.push_back({i, (i + 1) % n});
		return specs;
	}
	if (w.flows == "incast") {
		for (unsigned i = 1; i < n; i++)
			specs.push_back({i, 0});
		return specs;
	}
	std::istringstream in(w.flows);
	std::string item;
	while (std::getline(in, item, ',')) {
		unsigned src, dst;
		char a, b, extra;
		std::istringstream one(item);
		if (!(one >> src >> a >> b >> dst) || a != '-' || b != '>' || (one >> extra))
			throw std::runtime_error("traffic.flows \"" + w.flows +
						 "\": expected \"ring\", \"incast\" or a list "
						 "like \"0->1, 2->1\"");
		if (src >= n || dst >= n || src == dst)
			throw std::runtime_error("traffic.flows \"" + w.flows + "\": " + item +
						 ": nodes are 0 to " + std::to_string(n - 1) +
						 " (network.nodes), two different ones");
		specs.push_back({src, dst});
	}
	if (specs.empty())
		throw std::runtime_error("traffic.flows is empty");
	return specs;
}

} // namespace dms_sim
