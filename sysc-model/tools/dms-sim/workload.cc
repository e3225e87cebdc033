// SPDX-License-Identifier: MIT
#include "workload.h"

#include <functional>
#include <map>
#include <sstream>
#include <stdexcept>
#include <toml++/toml.h>

namespace dms_sim
{

namespace
{

const char *const kSections[] = {"run", "traffic", "driver", "cpu", "bounce", "wire"};

// Every key: its range, and where its value goes.
struct Key {
	double min, max;
	std::function<void(Workload &, double)> set;
};

std::map<std::string, Key> keys()
{
	auto ps = [](uint64_t Workload::*f, double scale) {
		return [f, scale](Workload &w, double v) { w.*f = uint64_t(v * scale); };
	};
	return {
		{"run.duration_us", {1, 1e7, ps(&Workload::duration_ps, 1e6)}},
		{"run.warmup_us", {0, 1e7, ps(&Workload::warmup_ps, 1e6)}},
		{"run.seed", {0, 4e9, [](Workload &w, double v) { w.stream.seed = uint32_t(v); }}},
		{"run.host_memory_mib", {16, 4096, ps(&Workload::host_memory_bytes, 1 << 20)}},
		{"traffic.window_kib",
		 {16, 1 << 20, [](Workload &w, double v) { w.stream.window = uint64_t(v) << 10; }}},
		{"traffic.ack_every",
		 {1, 64, [](Workload &w, double v) { w.stream.ack_every = unsigned(v); }}},
		{"driver.mtu",
		 {576, 9000,
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
		{"wire.propagation_ns", {0, 1e9, ps(&Workload::propagation_ps, 1e3)}},
	};
}

std::string num_text(double v)
{
	std::ostringstream o;
	o << v;
	return o.str();
}

void apply(Workload &w, const std::string &where, const std::string &key, const toml::node &v)
{
	static const std::map<std::string, Key> table = keys();
	if (key == "traffic.mode") {
		const auto s = v.value<std::string>();
		if (!s || (*s != "devmem" && *s != "bounce"))
			throw std::runtime_error(
				where + ": traffic.mode: expected \"devmem\" or \"bounce\"");
		w.stream.mode = *s == "devmem" ? PayloadMode::Devmem : PayloadMode::Bounce;
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
	return w;
}

} // namespace dms_sim
