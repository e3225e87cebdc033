// SPDX-License-Identifier: MIT
#include "config.h"

#include <cctype>
#include <functional>
#include <sstream>

#define TOML_EXCEPTIONS 1
#include <toml++/toml.h>

namespace devmemsim
{
namespace
{

using Setter = std::function<void(NodeConfig &, const toml::node &, const std::string &where)>;

struct Key {
	const char *path;
	const char *help;
	Setter set;
};

[[noreturn]] void fail(const std::string &where, const std::string &key, const std::string &what)
{
	throw ConfigError(where + ": " + key + ": " + what);
}

int64_t get_int(const toml::node &n, const std::string &where, const std::string &key, int64_t lo,
		int64_t hi)
{
	auto v = n.value_exact<int64_t>();
	if (!v)
		fail(where, key, "expected an integer");
	if (*v < lo || *v > hi)
		fail(where, key,
		     std::to_string(*v) + " is out of range [" + std::to_string(lo) + ", " +
			     std::to_string(hi) + "]");
	return *v;
}

// A byte count: an integer, or a string with a binary suffix ("256M").
uint64_t get_size(const toml::node &n, const std::string &where, const std::string &key)
{
	if (auto v = n.value_exact<int64_t>()) {
		if (*v < 0)
			fail(where, key, "a size cannot be negative");
		return static_cast<uint64_t>(*v);
	}
	auto s = n.value_exact<std::string>();
	if (!s)
		fail(where, key, "expected a size such as 268435456 or \"256M\"");
	size_t pos = 0;
	uint64_t num = 0;
	while (pos < s->size() && std::isdigit(static_cast<unsigned char>((*s)[pos]))) {
		if (num > (UINT64_MAX - 9) / 10)
			fail(where, key, "size \"" + *s + "\" is too large");
		num = num * 10 + static_cast<uint64_t>((*s)[pos++] - '0');
	}
	std::string suffix = s->substr(pos);
	unsigned shift;
	if (pos == 0)
		fail(where, key, "size \"" + *s + "\" does not start with a number");
	if (suffix.empty())
		shift = 0;
	else if (suffix == "K" || suffix == "KiB")
		shift = 10;
	else if (suffix == "M" || suffix == "MiB")
		shift = 20;
	else if (suffix == "G" || suffix == "GiB")
		shift = 30;
	else if (suffix == "T" || suffix == "TiB")
		shift = 40;
	else
		fail(where, key, "size \"" + *s + "\" has an unknown suffix (use K, M, G or T)");
	if (shift && num > (UINT64_MAX >> shift))
		fail(where, key, "size \"" + *s + "\" is too large");
	return num << shift;
}

const std::vector<Key> &schema()
{
	static const std::vector<Key> keys = {
		{"node.mode", "\"functional\" (no delays) or \"timed\"",
		 [](NodeConfig &c, const toml::node &n, const std::string &w) {
			 auto v = n.value_exact<std::string>();
			 if (v && *v == "functional")
				 c.mode = Mode::Functional;
			 else if (v && *v == "timed")
				 c.mode = Mode::Timed;
			 else
				 fail(w, "node.mode", "expected \"functional\" or \"timed\"");
		 }},
		{"node.index", "the node's index in its cluster (0..255)",
		 [](NodeConfig &c, const toml::node &n, const std::string &w) {
			 c.index = static_cast<unsigned>(get_int(n, w, "node.index", 0, 255));
		 }},
		{"nic.queues", "queue pairs (1..64)",
		 [](NodeConfig &c, const toml::node &n, const std::string &w) {
			 c.nic_queues = static_cast<unsigned>(get_int(n, w, "nic.queues", 1, 64));
		 }},
		{"nic.line_rate_gbps", "MAC line rate in Gbit/s (1..800; timed mode)",
		 [](NodeConfig &c, const toml::node &n, const std::string &w) {
			 c.nic_line_rate_gbps =
				 static_cast<double>(get_int(n, w, "nic.line_rate_gbps", 1, 800));
		 }},
		{"nic.parser",
		 "header parser: \"behavioural\" (C++) or \"rtl\" (the verilated "
		 "rtl/hsplit_parser.sv)",
		 [](NodeConfig &c, const toml::node &n, const std::string &w) {
			 auto v = n.value_exact<std::string>();
			 if (v && *v == "behavioural")
				 c.nic_parser = NicParser::Behavioural;
			 else if (v && *v == "rtl")
				 c.nic_parser = NicParser::Rtl;
			 else
				 fail(w, "nic.parser",
				      (v ? "\"" + *v + "\": " : std::string()) +
					      "expected \"behavioural\" or \"rtl\"");
		 }},
		{"nic.parser_clock_mhz",
		 "clock of the RTL parser in MHz (1..5000; 64 bytes a cycle)",
		 [](NodeConfig &c, const toml::node &n, const std::string &w) {
			 c.nic_parser_clock_mhz = static_cast<unsigned>(
				 get_int(n, w, "nic.parser_clock_mhz", 1, 5000));
		 }},
		{"gpu.mem_size", "device memory (BAR2): a power of two, 1M..64G",
		 [](NodeConfig &c, const toml::node &n, const std::string &w) {
			 uint64_t v = get_size(n, w, "gpu.mem_size");
			 if (v < (1ull << 20) || v > (64ull << 30) || (v & (v - 1)))
				 fail(w, "gpu.mem_size",
				      std::to_string(v) + " bytes is not a power of two "
							  "between 1M and 64G");
			 c.gpu_mem_size = v;
		 }},
		{"pcie.gen", "PCIe generation of every link (3..6)",
		 [](NodeConfig &c, const toml::node &n, const std::string &w) {
			 c.link.gen = static_cast<unsigned>(get_int(n, w, "pcie.gen", 3, 6));
		 }},
		{"pcie.width", "lanes per link (1, 2, 4, 8, 16)",
		 [](NodeConfig &c, const toml::node &n, const std::string &w) {
			 c.link.width = static_cast<unsigned>(get_int(n, w, "pcie.width", 1, 16));
		 }},
		{"pcie.mps", "max payload size in bytes (128..4096)",
		 [](NodeConfig &c, const toml::node &n, const std::string &w) {
			 c.link.mps = static_cast<unsigned>(get_int(n, w, "pcie.mps", 128, 4096));
		 }},
		{"pcie.mrrs", "max read request size in bytes (128..4096)",
		 [](NodeConfig &c, const toml::node &n, const std::string &w) {
			 c.link.mrrs = static_cast<unsigned>(get_int(n, w, "pcie.mrrs", 128, 4096));
		 }},
		{"pcie.rcb", "read completion boundary in bytes (64 or 128)",
		 [](NodeConfig &c, const toml::node &n, const std::string &w) {
			 c.link.rcb = static_cast<unsigned>(get_int(n, w, "pcie.rcb", 64, 128));
		 }},
		{"pcie.acs_redirect", "route P2P up through the root complex",
		 [](NodeConfig &c, const toml::node &n, const std::string &w) {
			 auto v = n.value_exact<bool>();
			 if (!v)
				 fail(w, "pcie.acs_redirect", "expected true or false");
			 c.acs_redirect = *v;
		 }},
		{"pcie.hop_latency_ns", "latency per switch or root-complex hop (timed mode)",
		 [](NodeConfig &c, const toml::node &n, const std::string &w) {
			 c.hop_latency_ns = static_cast<unsigned>(
				 get_int(n, w, "pcie.hop_latency_ns", 0, 100000));
		 }},
	};
	return keys;
}

const Key *find_key(const std::string &path)
{
	for (const Key &k : schema())
		if (path == k.path)
			return &k;
	return nullptr;
}

std::string known_keys()
{
	std::string s;
	for (const Key &k : schema())
		s += (s.empty() ? "" : ", ") + std::string(k.path);
	return s;
}

// Apply every leaf of table t (prefix: its dotted path) to cfg.
void apply(NodeConfig &cfg, const toml::table &t, const std::string &prefix,
	   const std::string &where)
{
	for (auto &&[k, v] : t) {
		std::string path =
			prefix.empty() ? std::string(k.str()) : prefix + "." + std::string(k.str());
		if (auto sub = v.as_table()) {
			apply(cfg, *sub, path, where);
			continue;
		}
		const Key *key = find_key(path);
		if (!key)
			fail(where, path, "unknown key (known: " + known_keys() + ")");
		key->set(cfg, v, where);
	}
}

} // namespace

const char *mode_name(Mode m)
{
	return m == Mode::Timed ? "timed" : "functional";
}

const char *parser_name(NicParser p)
{
	return p == NicParser::Rtl ? "rtl" : "behavioural";
}

NodeConfig load_config(const std::string &path, const std::vector<std::string> &overrides)
{
	NodeConfig cfg;
	if (!path.empty()) {
		try {
			toml::table t = toml::parse_file(path);
			apply(cfg, t, "", path);
		} catch (const toml::parse_error &e) {
			std::ostringstream m;
			if (e.source().begin.line)
				m << path << ":" << e.source().begin.line << ":"
				  << e.source().begin.column << ": " << e.description();
			else
				m << path << ": " << e.description();
			throw ConfigError(m.str());
		}
	}
	for (const std::string &o : overrides) {
		std::string where = "--set " + o;
		size_t eq = o.find('=');
		if (eq == std::string::npos || eq == 0)
			throw ConfigError(where + ": expected KEY=VALUE");
		std::string key = o.substr(0, eq);
		std::string value = o.substr(eq + 1);
		if (!find_key(key))
			fail(where, key, "unknown key (known: " + known_keys() + ")");
		// A TOML value if it parses as one, else a bare string.
		toml::table t;
		try {
			t = toml::parse("v = " + value);
		} catch (const toml::parse_error &) {
			t.insert_or_assign("v", value);
		}
		find_key(key)->set(cfg, *t.get("v"), where);
	}
	if (const char *why = pcie::check(cfg.link))
		throw ConfigError((path.empty() ? std::string("configuration") : path) +
				  ": pcie: " + why);
	return cfg;
}

std::string to_toml(const NodeConfig &cfg)
{
	std::ostringstream o;
	o << "[node]\n"
	  << "mode = \"" << mode_name(cfg.mode) << "\"\n"
	  << "index = " << cfg.index << "\n"
	  << "\n[nic]\n"
	  << "queues = " << cfg.nic_queues << "\n"
	  << "line_rate_gbps = " << cfg.nic_line_rate_gbps << "\n"
	  << "parser = \"" << parser_name(cfg.nic_parser) << "\"\n"
	  << "parser_clock_mhz = " << cfg.nic_parser_clock_mhz << "\n"
	  << "\n[gpu]\n"
	  << "mem_size = " << cfg.gpu_mem_size << "\n"
	  << "\n[pcie]\n"
	  << "gen = " << cfg.link.gen << "\n"
	  << "width = " << cfg.link.width << "\n"
	  << "mps = " << cfg.link.mps << "\n"
	  << "mrrs = " << cfg.link.mrrs << "\n"
	  << "rcb = " << cfg.link.rcb << "\n"
	  << "acs_redirect = " << (cfg.acs_redirect ? "true" : "false") << "\n"
	  << "hop_latency_ns = " << cfg.hop_latency_ns << "\n";
	return o.str();
}

} // namespace devmemsim
