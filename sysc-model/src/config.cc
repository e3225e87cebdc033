// SPDX-License-Identifier: MIT
#include "config.h"

#include <cctype>
#include <functional>
#include <iomanip>
#include <optional>
#include <sstream>

#include "topology_toml.h"

namespace devmemsim
{
namespace toml_value
{

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

} // namespace toml_value

namespace
{

using toml_value::fail;
using toml_value::get_int;
using toml_value::get_size;

using Setter = std::function<void(NodeConfig &, const toml::node &, const std::string &where)>;

struct Key {
	const char *path;
	const char *help;
	Setter set;
};

// A capacity in Gbit/s: `least` (1, or 0 for "no limit") up to 100 Tbit/s.
Key gbps_key(const char *path, const char *help, unsigned NodeConfig::*field, int64_t least = 1)
{
	return {path, help,
		[path, field, least](NodeConfig &c, const toml::node &n, const std::string &w) {
			c.*field = static_cast<unsigned>(get_int(n, w, path, least, 100000));
		}};
}

std::vector<Key> base_keys()
{
	return {
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
}

// Capacities of the timed fabric's shared resources besides the links.
std::vector<Key> fabric_keys()
{
	return {
		gbps_key("pcie.switch_gbps",
			 "TLP bytes a switch's core forwards, all ports and both directions "
			 "together, Gbit/s; 0: non-blocking, only its ports' links limit "
			 "(timed mode)",
			 &NodeConfig::switch_gbps, 0),
		gbps_key("pcie.root_complex_gbps",
			 "TLP bytes the root complex moves to and from host memory per "
			 "direction, Gbit/s (timed mode)",
			 &NodeConfig::root_complex_gbps),
		gbps_key("host.mem_bandwidth_gbps",
			 "host memory bandwidth left to device DMA, Gbit/s (timed mode)",
			 &NodeConfig::host_mem_gbps),
		{"iommu.enabled", "DMA remapping on transfers through a root complex",
		 [](NodeConfig &c, const toml::node &n, const std::string &w) {
			 auto v = n.value_exact<bool>();
			 if (!v)
				 fail(w, "iommu.enabled", "expected true or false");
			 c.iommu = *v;
		 }},
		{"iommu.translation_ns", "IOMMU translation time per transaction (timed mode)",
		 [](NodeConfig &c, const toml::node &n, const std::string &w) {
			 c.iommu_ns = static_cast<unsigned>(
				 get_int(n, w, "iommu.translation_ns", 0, 100000));
		 }},
	};
}

// A fraction 0..1: a float, or the integers 0 and 1.
double get_rate(const toml::node &n, const std::string &where, const std::string &key)
{
	std::optional<double> v = n.value_exact<double>();
	if (!v)
		if (auto i = n.value_exact<int64_t>())
			v = static_cast<double>(*i);
	if (!v)
		fail(where, key, "expected a rate such as 0.01");
	if (!(*v >= 0 && *v <= 1))
		fail(where, key,
		     (std::ostringstream() << *v).str() + " is not a rate between 0 and 1");
	return *v;
}

// A [faults] key: its setter writes one field of FaultConfig.
Key rate_key(const char *path, const char *help, double FaultConfig::*field)
{
	return {path, help,
		[path, field](NodeConfig &c, const toml::node &n, const std::string &w) {
			c.faults.*field = get_rate(n, w, path);
		}};
}

Key count_key(const char *path, const char *help, uint64_t FaultConfig::*field)
{
	return {path, help,
		[path, field](NodeConfig &c, const toml::node &n, const std::string &w) {
			c.faults.*field = static_cast<uint64_t>(get_int(n, w, path, 0, INT64_MAX));
		}};
}

// Per-device keys (an array member of FaultConfig indexed by FaultDev).
using DevRates = double[kFaultDevs];
Key dev_rate_key(const char *path, const char *help, DevRates FaultConfig::*field, unsigned dev)
{
	return {path, help,
		[path, field, dev](NodeConfig &c, const toml::node &n, const std::string &w) {
			(c.faults.*field)[dev] = get_rate(n, w, path);
		}};
}

// The NIC's lies (an element of FaultConfig::nic_lie_rate, by NicLie).
Key nic_lie_key(const char *path, const char *help, unsigned kind)
{
	return {path, help, [path, kind](NodeConfig &c, const toml::node &n, const std::string &w) {
			c.faults.nic_lie_rate[kind] = get_rate(n, w, path);
		}};
}

Key dev_nth_key(const char *path, const char *help, unsigned dev)
{
	return {path, help, [path, dev](NodeConfig &c, const toml::node &n, const std::string &w) {
			c.faults.dma_error_nth[dev] =
				static_cast<uint64_t>(get_int(n, w, path, 0, INT64_MAX));
		}};
}

std::vector<Key> fault_keys()
{
	using F = FaultConfig;
	return {
		count_key("faults.seed", "seed of the fault decisions", &F::seed),
		rate_key("faults.rx_drop_rate", "fraction of received frames lost",
			 &F::rx_drop_rate),
		rate_key("faults.rx_corrupt_rate", "fraction of received frames with a bit flipped",
			 &F::rx_corrupt_rate),
		rate_key("faults.tx_drop_rate", "fraction of sent frames lost", &F::tx_drop_rate),
		rate_key("faults.tx_corrupt_rate", "fraction of sent frames with a bit flipped",
			 &F::tx_corrupt_rate),
		dev_rate_key("faults.nic_dma_error_rate",
			     "fraction of NIC host DMA accesses that fail", &F::dma_error_rate,
			     kFaultNic),
		dev_nth_key("faults.nic_dma_error_nth", "the one NIC host DMA access that fails",
			    kFaultNic),
		{"faults.nic_dma_error_rings",
		 "whether NIC descriptor and completion ring accesses can fail too",
		 [](NodeConfig &c, const toml::node &n, const std::string &w) {
			 auto v = n.value_exact<bool>();
			 if (!v)
				 fail(w, "faults.nic_dma_error_rings", "expected true or false");
			 c.faults.nic_dma_error_rings = *v;
		 }},
		dev_rate_key("faults.gpu_dma_error_rate",
			     "fraction of GPU host DMA accesses that fail", &F::dma_error_rate,
			     kFaultGpu),
		dev_nth_key("faults.gpu_dma_error_nth", "the one GPU host DMA access that fails",
			    kFaultGpu),
		count_key("faults.link_down_after_ns", "time to the first link-down",
			  &F::link_down_after_ns),
		count_key("faults.link_down_ns", "how long the link stays down (0: never)",
			  &F::link_down_ns),
		count_key("faults.link_flap_period_ns",
			  "link-down repeats with this period (0: once)", &F::link_flap_period_ns),
		dev_rate_key("faults.nic_msi_drop_rate", "fraction of the NIC's MSIs lost",
			     &F::msi_drop_rate, kFaultNic),
		dev_rate_key("faults.gpu_msi_drop_rate", "fraction of the GPU's MSIs lost",
			     &F::msi_drop_rate, kFaultGpu),
		dev_rate_key("faults.nic_msi_delay_rate",
			     "fraction of the NIC's MSIs delivered late", &F::msi_delay_rate,
			     kFaultNic),
		dev_rate_key("faults.gpu_msi_delay_rate",
			     "fraction of the GPU's MSIs delivered late", &F::msi_delay_rate,
			     kFaultGpu),
		count_key("faults.msi_delay_ns", "how late a delayed MSI arrives",
			  &F::msi_delay_ns),
		rate_key("faults.gpu_engine_error_rate", "fraction of GPU engine jobs that fail",
			 &F::gpu_engine_error_rate),
		nic_lie_key(
			"faults.nic_lie_len_rate",
			"fraction of RX frames whose completion claims more bytes than its buffer",
			kLieLen),
		nic_lie_key("faults.nic_lie_id_rate",
			    "fraction of RX frames whose completion names a buffer id not posted "
			    "or already returned",
			    kLieId),
		nic_lie_key("faults.nic_lie_dup_rate",
			    "fraction of RX frames whose last completion is written twice",
			    kLieDup),
		nic_lie_key("faults.nic_lie_gro_rate",
			    "fraction of coalesced RX frames with absurd gro_segs or gso_size",
			    kLieGro),
		nic_lie_key("faults.nic_lie_pack_rate",
			    "fraction of PACK RX frames whose pieces contradict the offsets",
			    kLiePack),
		rate_key("faults.gpu_lie_status_rate",
			 "fraction of GPU jobs whose status is bogus or claims success unrun",
			 &F::gpu_lie_status_rate),
	};
}

const std::vector<Key> &schema()
{
	static const std::vector<Key> keys = [] {
		std::vector<Key> k = base_keys();
		for (Key &f : fabric_keys())
			k.push_back(std::move(f));
		for (Key &f : fault_keys())
			k.push_back(std::move(f));
		return k;
	}();
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
		if (path == "topology")
			continue; // read last, after the keys its defaults come from
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
	toml::table file;
	if (!path.empty()) {
		try {
			file = toml::parse_file(path);
			apply(cfg, file, "", path);
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
	if (const toml::node *topo = file.get("topology")) {
		if (!topo->is_table())
			fail(path, "topology", "expected a table");
		cfg.topology = parse_topology(*topo->as_table(), cfg, path);
	}
	if (const char *why = check(cfg.faults))
		throw ConfigError((path.empty() ? std::string("configuration") : path) + ": " +
				  why);
	return cfg;
}

FaultConfig parse_fault_settings(const std::string &settings)
{
	NodeConfig cfg;
	std::istringstream in(settings);
	std::string item;
	while (in >> item) {
		std::istringstream parts(item);
		std::string kv;
		while (std::getline(parts, kv, ',')) {
			if (kv.empty())
				continue;
			std::string where = "faults setting \"" + kv + "\"";
			size_t eq = kv.find('=');
			if (eq == std::string::npos || eq == 0)
				throw ConfigError(where + ": expected KEY=VALUE");
			std::string key = kv.substr(0, eq);
			if (key.rfind("faults.", 0) != 0)
				key = "faults." + key;
			const Key *k = find_key(key);
			if (!k)
				fail(where, key, "unknown key");
			toml::table t;
			try {
				t = toml::parse("v = " + kv.substr(eq + 1));
			} catch (const toml::parse_error &) {
				fail(where, key, "expected a number");
			}
			k->set(cfg, *t.get("v"), where);
		}
	}
	if (const char *why = check(cfg.faults))
		throw ConfigError(std::string("faults setting: ") + why);
	return cfg.faults;
}

// A double as the shortest text that reads back as the same value.
static std::string exact(double v)
{
	for (int digits = 6;; digits++) {
		std::ostringstream o;
		o << std::setprecision(digits) << v;
		if (std::stod(o.str()) == v || digits == 17)
			return o.str();
	}
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
	  << "hop_latency_ns = " << cfg.hop_latency_ns << "\n"
	  << "switch_gbps = " << cfg.switch_gbps << "\n"
	  << "root_complex_gbps = " << cfg.root_complex_gbps << "\n"
	  << "\n[host]\n"
	  << "mem_bandwidth_gbps = " << cfg.host_mem_gbps << "\n"
	  << "\n[iommu]\n"
	  << "enabled = " << (cfg.iommu ? "true" : "false") << "\n"
	  << "translation_ns = " << cfg.iommu_ns << "\n";
	const FaultConfig &f = cfg.faults;
	o << "\n[faults]\n"
	  << "seed = " << f.seed << "\n"
	  << "rx_drop_rate = " << exact(f.rx_drop_rate) << "\n"
	  << "rx_corrupt_rate = " << exact(f.rx_corrupt_rate) << "\n"
	  << "tx_drop_rate = " << exact(f.tx_drop_rate) << "\n"
	  << "tx_corrupt_rate = " << exact(f.tx_corrupt_rate) << "\n"
	  << "nic_dma_error_rate = " << exact(f.dma_error_rate[kFaultNic]) << "\n"
	  << "nic_dma_error_nth = " << f.dma_error_nth[kFaultNic] << "\n"
	  << "nic_dma_error_rings = " << (f.nic_dma_error_rings ? "true" : "false") << "\n"
	  << "gpu_dma_error_rate = " << exact(f.dma_error_rate[kFaultGpu]) << "\n"
	  << "gpu_dma_error_nth = " << f.dma_error_nth[kFaultGpu] << "\n"
	  << "link_down_after_ns = " << f.link_down_after_ns << "\n"
	  << "link_down_ns = " << f.link_down_ns << "\n"
	  << "link_flap_period_ns = " << f.link_flap_period_ns << "\n"
	  << "nic_msi_drop_rate = " << exact(f.msi_drop_rate[kFaultNic]) << "\n"
	  << "gpu_msi_drop_rate = " << exact(f.msi_drop_rate[kFaultGpu]) << "\n"
	  << "nic_msi_delay_rate = " << exact(f.msi_delay_rate[kFaultNic]) << "\n"
	  << "gpu_msi_delay_rate = " << exact(f.msi_delay_rate[kFaultGpu]) << "\n"
	  << "msi_delay_ns = " << f.msi_delay_ns << "\n"
	  << "gpu_engine_error_rate = " << exact(f.gpu_engine_error_rate) << "\n"
	  << "nic_lie_len_rate = " << exact(f.nic_lie_rate[kLieLen]) << "\n"
	  << "nic_lie_id_rate = " << exact(f.nic_lie_rate[kLieId]) << "\n"
	  << "nic_lie_dup_rate = " << exact(f.nic_lie_rate[kLieDup]) << "\n"
	  << "nic_lie_gro_rate = " << exact(f.nic_lie_rate[kLieGro]) << "\n"
	  << "nic_lie_pack_rate = " << exact(f.nic_lie_rate[kLiePack]) << "\n"
	  << "gpu_lie_status_rate = " << exact(f.gpu_lie_status_rate) << "\n";
	if (!cfg.topology.sockets.empty())
		write_topology(o, cfg.topology, cfg);
	return o.str();
}

} // namespace devmemsim
