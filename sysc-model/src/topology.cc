// SPDX-License-Identifier: MIT
// [topology]: sockets, the inter-socket link, switches, NICs and GPUs,
// read from TOML, checked and resolved (configs/node/default.toml).
#include "topology_toml.h"

#include <algorithm>
#include <cctype>
#include <initializer_list>
#include <map>
#include <string_view>

namespace devmemsim
{

using toml_value::fail;
using toml_value::get_int;
using toml_value::get_size;

namespace
{

// Names become keys of the counters' JSON; "upstream" and "inter_socket"
// are link names there already (docs/stats.md).
bool valid_name(const std::string &s)
{
	if (s.empty() || s == "upstream" || s == "inter_socket")
		return false;
	return std::all_of(s.begin(), s.end(), [](char c) {
		return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-';
	});
}

std::string join(const std::vector<std::string> &v)
{
	std::string s;
	for (const std::string &x : v)
		s += (s.empty() ? "" : ", ") + x;
	return s;
}

// One table of the topology ("topology.nic[1]"), its keys checked
// against the ones its kind has.
class Entry
{
public:
	Entry(const toml::node &n, std::string key, const std::string &where,
	      std::initializer_list<const char *> known)
	    : key_(std::move(key)), where_(where)
	{
		t_ = n.as_table();
		if (!t_)
			fail(where_, key_, "expected a table");
		std::vector<std::string> names(known.begin(), known.end());
		for (auto &&[k, v] : *t_)
			if (std::find(names.begin(), names.end(), k.str()) == names.end())
				fail(where_, at(std::string(k.str())),
				     "unknown key (known: " + join(names) + ")");
	}
	std::string at(const std::string &k) const { return key_ + "." + k; }
	const std::string &key() const { return key_; }
	bool has(const char *k) const { return t_->get(k) != nullptr; }
	[[noreturn]] void fail_at(const std::string &k, const std::string &what) const
	{
		fail(where_, k.empty() ? key_ : at(k), what);
	}
	unsigned integer(const char *k, unsigned dflt, int64_t lo, int64_t hi) const
	{
		const toml::node *n = t_->get(k);
		return n ? static_cast<unsigned>(get_int(*n, where_, at(k), lo, hi)) : dflt;
	}
	uint64_t size(const char *k) const
	{
		const toml::node *n = t_->get(k);
		return n ? get_size(*n, where_, at(k)) : 0;
	}
	// A string key; "" when it is not there.
	std::string text(const char *k) const
	{
		const toml::node *n = t_->get(k);
		if (!n)
			return "";
		auto s = n->value_exact<std::string>();
		if (!s || s->empty())
			fail_at(k, "expected a non-empty string");
		return *s;
	}
	// gen and width of the entry's link, the rest from [pcie].
	pcie::LinkParams link(const pcie::LinkParams &dflt) const
	{
		pcie::LinkParams p = dflt;
		p.gen = integer("gen", p.gen, 3, 6);
		p.width = integer("width", p.width, 1, 16);
		if (const char *why = pcie::check(p))
			fail_at(has("width") ? "width" : "gen", why);
		return p;
	}

private:
	const toml::table *t_;
	std::string key_;
	const std::string &where_;
};

// The [[topology.KIND]] array of t, or nullptr when t has none.
const toml::array *array_of(const toml::table &t, const char *kind, const std::string &where)
{
	const toml::node *n = t.get(kind);
	if (!n)
		return nullptr;
	const toml::array *a = n->as_array();
	if (!a || !a->is_array_of_tables())
		fail(where, std::string("topology.") + kind,
		     std::string("expected [[topology.") + kind + "]] tables");
	return a;
}

class Builder
{
public:
	Builder(const NodeConfig &cfg, const std::string &where) : cfg_(cfg), where_(where) {}
	Topology build(const toml::table &t);

private:
	void sockets(const toml::array *a);
	void inter_socket(const toml::node *n);
	void switches(const toml::array *a);
	void devices(const toml::array *a, const char *kind, std::vector<DeviceConfig> &out);
	void place(const Entry &e, DeviceConfig &d, const std::string &on);
	void claim_name(const Entry &e, const std::string &name, const char *what);
	RootPort root_port(const Entry &e, const std::string &text, const std::string &user);

	const NodeConfig &cfg_;
	const std::string &where_;
	Topology topo_;
	std::map<std::string, std::string> names_;	// name -> what carries it
	std::map<std::string, std::string> port_users_; // "s0.rp0" -> name on it
};

void Builder::claim_name(const Entry &e, const std::string &name, const char *what)
{
	if (!valid_name(name))
		e.fail_at("name", "\"" + name +
					  "\" is not a name (letters, digits, _ and -; not "
					  "\"upstream\" or \"inter_socket\")");
	auto [it, fresh] = names_.emplace(name, what);
	if (!fresh)
		e.fail_at("name", "\"" + name + "\" is the name of a " + it->second + " already");
}

// "SOCKET.PORT": a port of that socket's root complex, carrying one link.
RootPort Builder::root_port(const Entry &e, const std::string &text, const std::string &user)
{
	const size_t dot = text.find('.');
	if (dot == std::string::npos)
		e.fail_at("on", "\"" + text + "\" is not a root port (SOCKET.PORT, e.g. s0.rp0)");
	const std::string sock = text.substr(0, dot), port = text.substr(dot + 1);
	RootPort rp{0, port};
	std::vector<std::string> known;
	for (const SocketConfig &s : topo_.sockets)
		known.push_back(s.name);
	auto it = std::find(known.begin(), known.end(), sock);
	if (it == known.end())
		e.fail_at("on", "no socket \"" + sock + "\" (sockets: " + join(known) + ")");
	rp.socket = static_cast<unsigned>(it - known.begin());
	if (!valid_name(port))
		e.fail_at("on", "\"" + port + "\" is not a port name (letters, digits, _ and -)");
	auto [used, fresh] = port_users_.emplace(text, user);
	if (!fresh)
		e.fail_at("on", "root port " + text + " carries " + used->second +
					" already (one link per root port)");
	return rp;
}

void Builder::sockets(const toml::array *a)
{
	if (!a) {
		topo_.sockets.push_back({"s0", 0, cfg_.host_mem_gbps, cfg_.root_complex_gbps});
		return;
	}
	if (a->empty() || a->size() > kMaxSockets)
		fail(where_, "topology.socket",
		     std::to_string(a->size()) + " sockets: a node has one or two");
	for (size_t i = 0; i < a->size(); i++) {
		Entry e(*a->get(i), "topology.socket[" + std::to_string(i) + "]", where_,
			{"name", "mem_base", "mem_bandwidth_gbps", "root_complex_gbps"});
		SocketConfig s;
		s.name = e.has("name") ? e.text("name") : "s" + std::to_string(i);
		claim_name(e, s.name, "socket");
		s.mem_base = e.size("mem_base");
		if (i == 0 && s.mem_base)
			e.fail_at("mem_base", "the first socket's memory starts at 0");
		if (i == 1 && !s.mem_base)
			e.fail_at("mem_base",
				  "missing: the address where the second socket's memory starts");
		s.mem_gbps = e.integer("mem_bandwidth_gbps", cfg_.host_mem_gbps, 1, 100000);
		s.root_complex_gbps =
			e.integer("root_complex_gbps", cfg_.root_complex_gbps, 1, 100000);
		topo_.sockets.push_back(s);
	}
}

void Builder::inter_socket(const toml::node *n)
{
	const bool two = topo_.sockets.size() == 2;
	if (!n && two)
		fail(where_, "topology.inter_socket",
		     "missing: two sockets need the link between them (gbps, latency_ns)");
	if (!n)
		return;
	Entry e(*n, "topology.inter_socket", where_, {"gbps", "latency_ns"});
	if (!two)
		e.fail_at("", "a node with one socket has no inter-socket link");
	for (const char *k : {"gbps", "latency_ns"})
		if (!e.has(k))
			e.fail_at(k, "missing");
	topo_.inter_socket_gbps = e.integer("gbps", 0, 1, 100000);
	topo_.inter_socket_latency_ns = e.integer("latency_ns", 0, 0, 100000);
}

void Builder::switches(const toml::array *a)
{
	for (size_t i = 0; a && i < a->size(); i++) {
		Entry e(*a->get(i), "topology.switch[" + std::to_string(i) + "]", where_,
			{"name", "on", "gen", "width", "gbps"});
		SwitchConfig s;
		s.name = e.has("name") ? e.text("name") : "sw" + std::to_string(i);
		claim_name(e, s.name, "switch");
		std::string on = e.text("on");
		if (on.empty() && topo_.sockets.size() > 1)
			e.fail_at("on", "missing: the root port it is on (SOCKET.PORT)");
		if (on.empty())
			on = topo_.sockets[0].name + ".rp" + std::to_string(i);
		s.on = root_port(e, on, s.name);
		s.uplink = e.link(cfg_.link);
		s.gbps = e.integer("gbps", cfg_.switch_gbps, 0, 100000);
		topo_.switches.push_back(s);
	}
}

// A device under the switch named `on`, or on the root port it names.
void Builder::place(const Entry &e, DeviceConfig &d, const std::string &on)
{
	if (on.find('.') != std::string::npos) {
		d.port = root_port(e, on, d.name);
		return;
	}
	std::vector<std::string> known;
	for (const SwitchConfig &s : topo_.switches)
		known.push_back(s.name);
	if (on.empty() && known.size() == 1)
		d.on_switch = 0;
	else if (on.empty())
		e.fail_at("on", "missing: the switch or the root port (SOCKET.PORT) it is on");
	else if (auto it = std::find(known.begin(), known.end(), on); it != known.end())
		d.on_switch = static_cast<int>(it - known.begin());
	else
		e.fail_at("on", "no switch \"" + on + "\" (" +
					(known.empty() ? std::string("the node has none")
						       : "switches: " + join(known)) +
					")");
}

// count = N makes N devices, named NAME0..NAME(N-1). Unnamed devices
// are KIND, or KIND0, KIND1... when the node has several.
void Builder::devices(const toml::array *a, const char *kind, std::vector<DeviceConfig> &out)
{
	const std::string key = std::string("topology.") + kind;
	std::vector<std::pair<Entry, unsigned>> entries;
	unsigned total = 0;
	for (size_t i = 0; a && i < a->size(); i++) {
		Entry e(*a->get(i), key + "[" + std::to_string(i) + "]", where_,
			{"name", "count", "on", "gen", "width"});
		const unsigned count = e.integer("count", 1, 1, kMaxDevices);
		total += count;
		if (total > kMaxDevices)
			fail(where_, key,
			     "more than " + std::to_string(kMaxDevices) + " " + kind + "s");
		entries.emplace_back(std::move(e), count);
	}
	for (auto &[e, count] : entries) {
		const std::string name = e.text("name");
		const std::string on = e.text("on");
		for (unsigned j = 0; j < count; j++) {
			DeviceConfig d;
			if (!name.empty())
				d.name = count > 1 ? name + std::to_string(j) : name;
			else
				d.name = total > 1 ? kind + std::to_string(out.size()) : kind;
			claim_name(e, d.name, kind);
			place(e, d, on);
			d.link = e.link(cfg_.link);
			out.push_back(d);
		}
	}
}

Topology Builder::build(const toml::table &t)
{
	const std::vector<std::string> known = {"socket", "inter_socket", "switch", "nic", "gpu"};
	for (auto &&[k, v] : t)
		if (std::find(known.begin(), known.end(), k.str()) == known.end())
			fail(where_, "topology." + std::string(k.str()),
			     "unknown key (known: " + join(known) + ")");
	sockets(array_of(t, "socket", where_));
	inter_socket(t.get("inter_socket"));
	const toml::array *sw = array_of(t, "switch", where_);
	const toml::array *nic = array_of(t, "nic", where_);
	const toml::array *gpu = array_of(t, "gpu", where_);
	if (!sw && !nic && !gpu) {
		Topology d = topology_of(cfg_);
		d.sockets = topo_.sockets;
		d.inter_socket_gbps = topo_.inter_socket_gbps;
		d.inter_socket_latency_ns = topo_.inter_socket_latency_ns;
		return d;
	}
	switches(sw);
	devices(nic, "nic", topo_.nics);
	devices(gpu, "gpu", topo_.gpus);
	if (topo_.nics.empty())
		fail(where_, "topology.nic", "missing: a node has 1 to 32 NICs");
	if (topo_.gpus.size() != topo_.nics.size())
		fail(where_, "topology.gpu",
		     std::to_string(topo_.gpus.size()) + " GPUs for " +
			     std::to_string(topo_.nics.size()) +
			     " NICs: a node has one GPU per NIC");
	return topo_;
}

void write_link(std::ostream &o, const pcie::LinkParams &p, const NodeConfig &cfg)
{
	if (p.gen != cfg.link.gen)
		o << "gen = " << p.gen << "\n";
	if (p.width != cfg.link.width)
		o << "width = " << p.width << "\n";
}

std::string port_text(const Topology &t, const RootPort &rp)
{
	return t.sockets[rp.socket].name + "." + rp.name;
}

} // namespace

Topology topology_of(const NodeConfig &cfg)
{
	if (!cfg.topology.sockets.empty())
		return cfg.topology;
	Topology t;
	t.sockets.push_back({"s0", 0, cfg.host_mem_gbps, cfg.root_complex_gbps});
	t.switches.push_back({"sw0", {0, "rp0"}, cfg.link, cfg.switch_gbps});
	t.nics.push_back({"nic", 0, {}, cfg.link});
	t.gpus.push_back({"gpu", 0, {}, cfg.link});
	return t;
}

Topology parse_topology(const toml::table &t, const NodeConfig &cfg, const std::string &where)
{
	return Builder(cfg, where).build(t);
}

void write_topology(std::ostream &o, const Topology &topo, const NodeConfig &cfg)
{
	for (const SocketConfig &s : topo.sockets) {
		o << "\n[[topology.socket]]\nname = \"" << s.name << "\"\n";
		if (s.mem_base)
			o << "mem_base = " << s.mem_base << "\n";
		o << "mem_bandwidth_gbps = " << s.mem_gbps << "\n"
		  << "root_complex_gbps = " << s.root_complex_gbps << "\n";
	}
	if (topo.sockets.size() > 1)
		o << "\n[topology.inter_socket]\ngbps = " << topo.inter_socket_gbps
		  << "\nlatency_ns = " << topo.inter_socket_latency_ns << "\n";
	for (const SwitchConfig &s : topo.switches) {
		o << "\n[[topology.switch]]\nname = \"" << s.name << "\"\non = \""
		  << port_text(topo, s.on) << "\"\ngbps = " << s.gbps << "\n";
		write_link(o, s.uplink, cfg);
	}
	for (const auto *kind : {&topo.nics, &topo.gpus})
		for (const DeviceConfig &d : *kind) {
			o << "\n[[topology." << (kind == &topo.nics ? "nic" : "gpu")
			  << "]]\nname = \"" << d.name << "\"\non = \""
			  << (d.on_switch >= 0 ? topo.switches[d.on_switch].name
					       : port_text(topo, d.port))
			  << "\"\n";
			write_link(o, d.link, cfg);
		}
}

} // namespace devmemsim
