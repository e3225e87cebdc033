// SPDX-License-Identifier: MIT
#include "pcie/fabric.h"

#include <algorithm>
#include <sstream>

#include "sim/kernel.h"

namespace devmemsim::pcie
{

namespace
{

// The time one byte takes at gbps Gbit/s, in ps (1e12 / (gbps * 1e9 / 8));
// 0 for no limit.
double ps_per_byte(unsigned gbps)
{
	return gbps ? 8000.0 / gbps : 0.0;
}

uint64_t ps_for(uint64_t bytes, double ps_per_byte)
{
	return static_cast<uint64_t>(static_cast<double>(bytes) * ps_per_byte + 0.5);
}

// One TLP's share of ps: 32-bit division when it fits, much the faster
// on some CPUs.
uint64_t per_tlp(uint64_t ps, uint64_t tlps)
{
	if (ps <= UINT32_MAX && tlps <= UINT32_MAX)
		return static_cast<uint32_t>(ps) / static_cast<uint32_t>(tlps);
	return ps / tlps;
}

void put_dir(std::ostream &o, const std::string &name, const LinkCounters &c)
{
	o << "\"" << name << "\": {\"tlps\": " << c.tlps
	  << ", \"payload_bytes\": " << c.payload_bytes << ", \"wire_bytes\": " << c.wire_bytes
	  << ", \"dllp_bytes\": " << c.dllp_bytes << ", \"busy_ns\": " << c.busy_ps / 1000 << "}";
}

void put_link(std::ostream &o, const std::string &name, const LinkParams &p,
	      const std::array<LinkCounters, 2> &c)
{
	o << "\"" << name << "\": {\"gen\": " << p.gen << ", \"width\": " << p.width << ", ";
	put_dir(o, "up", c[kUp]);
	o << ", ";
	put_dir(o, "down", c[kDown]);
	o << "}";
}

} // namespace

// Simulated time in the fabric is in ps: the kernel's time resolution is
// 1 ps (SystemC's default, which nothing changes) or finer.
Fabric::Fabric(sc_core::sc_module_name name, const NodeConfig &cfg)
    : sc_core::sc_module(name), dma("dma"), topo_(topology_of(cfg)), link_(cfg.link),
      target_link_(cfg.link), acs_redirect_(cfg.acs_redirect), timed_(cfg.mode == Mode::Timed),
      iommu_(cfg.iommu), hop_latency_ps_(uint64_t{cfg.hop_latency_ns} * 1000),
      iommu_ps_(uint64_t{cfg.iommu_ns} * 1000),
      inter_socket_ps_(uint64_t{topo_.inter_socket_latency_ns} * 1000),
      ticks_per_ps_(sc_core::sc_time(1, sc_core::SC_PS).value()),
      inter_socket_ps_per_byte_(ps_per_byte(topo_.inter_socket_gbps)), mode_(mode_name(cfg.mode))
{
	for (const auto *kind : {&topo_.nics, &topo_.gpus})
		for (const DeviceConfig &d : *kind) {
			const unsigned socket = d.on_switch >= 0
							? topo_.switches[d.on_switch].on.socket
							: d.port.socket;
			attach_.push_back({d.on_switch, socket});
			endpoint_link_.emplace_back(d.link);
		}
	for (const SwitchConfig &s : topo_.switches) {
		uplink_link_.emplace_back(s.uplink);
		switch_ps_per_byte_.push_back(ps_per_byte(s.gbps));
	}
	for (const SocketConfig &s : topo_.sockets) {
		rc_ps_per_byte_.push_back(ps_per_byte(s.root_complex_gbps));
		host_mem_ps_per_byte_.push_back(ps_per_byte(s.mem_gbps));
	}
	endpoint_free_.resize(ports());
	uplink_free_.resize(topo_.switches.size());
	rc_free_.resize(topo_.sockets.size());
	host_mem_free_.resize(topo_.sockets.size());
	switch_core_.resize(topo_.switches.size());
	win_.resize(ports());
	bus_master_.assign(ports(), true);
	bar_mem.init(ports());
	reset_counters();
	dma.register_b_transport(this, &Fabric::b_transport);
}

void Fabric::reset_counters()
{
	c_ = FabricCounters{};
	c_.endpoint.resize(ports());
	c_.uplink.resize(topo_.switches.size());
	c_.switches.resize(topo_.switches.size());
	c_.sockets.resize(topo_.sockets.size());
}

void Fabric::set_window(unsigned port, uint64_t addr, uint64_t size)
{
	if (port < ports())
		win_[port] = {addr, size};
}

void Fabric::set_bus_master(unsigned port, bool on)
{
	if (port < ports())
		bus_master_[port] = on;
}

int Fabric::window_of(uint64_t addr, uint64_t len) const
{
	for (unsigned p = 0; p < ports(); p++) {
		const Window &w = win_[p];
		if (!w.size || addr < w.base || addr - w.base >= w.size)
			continue;
		// A burst that runs past the window's end is not routable.
		return len <= w.size - (addr - w.base) ? static_cast<int>(p) : -2;
	}
	return -1;
}

// The socket whose memory holds a host address: each socket's memory runs
// from its mem_base to the next socket's.
unsigned Fabric::socket_of(uint64_t host_addr) const
{
	unsigned s = 0;
	while (s + 1 < topo_.sockets.size() && host_addr >= topo_.sockets[s + 1].mem_base)
		s++;
	return s;
}

// From the requester's port toward the target: a peer under the same
// switch turns around there (unless ACS redirects it); anything else
// climbs to the requester's root complex, crosses to the other socket if
// the peer or the memory is there, and a peer's traffic descends to it.
Fabric::Route Fabric::route(unsigned port, int target, unsigned mem_socket) const
{
	Route r;
	const Attach &from = attach_[port];
	r.add(Res::Endpoint, port, kUp);
	if (target >= 0 && from.sw >= 0 && from.sw == attach_[target].sw && !acs_redirect_) {
		r.add(Res::Switch, static_cast<unsigned>(from.sw));
		r.add(Res::Endpoint, static_cast<unsigned>(target), kDown);
		return r;
	}
	if (from.sw >= 0) {
		r.add(Res::Switch, static_cast<unsigned>(from.sw));
		r.add(Res::Uplink, static_cast<unsigned>(from.sw), kUp);
	}
	r.add(Res::RootComplex, from.socket);
	const unsigned to_socket = target >= 0 ? attach_[target].socket : mem_socket;
	if (to_socket != from.socket) {
		r.add(Res::InterSocket, 0, static_cast<Dir>(from.socket));
		r.add(Res::RootComplex, to_socket);
	}
	if (target < 0)
		return r;
	const Attach &to = attach_[target];
	if (to.sw >= 0) {
		r.add(Res::Uplink, static_cast<unsigned>(to.sw), kDown);
		r.add(Res::Switch, static_cast<unsigned>(to.sw));
	}
	r.add(Res::Endpoint, static_cast<unsigned>(target), kDown);
	return r;
}

// Peer-to-peer payload is counted where it turns: at the switch (a route
// of link, switch, link), or else at every root complex it goes through.
void Fabric::count_p2p(const Route &r, uint64_t len)
{
	const bool at_switch = r.n == 3 && r.hop[1].kind == Res::Switch;
	if (at_switch)
		c_.switches[r.hop[1].index].p2p_bytes += len;
	for (unsigned i = 0; i < r.n && !at_switch; i++)
		if (r.hop[i].kind == Res::RootComplex)
			c_.sockets[r.hop[i].index].p2p_bytes += len;
}

void Fabric::add_link(Path &path, const Hop &h, Tlps kind, uint64_t addr, uint64_t len)
{
	const bool endpoint = h.kind == Res::Endpoint;
	const LinkTiming &t = endpoint ? endpoint_link_[h.index] : uplink_link_[h.index];
	auto &counters = endpoint ? c_.endpoint[h.index] : c_.uplink[h.index];
	auto &free = endpoint ? endpoint_free_[h.index] : uplink_free_[h.index];
	const Dir d = kind != Tlps::Completion ? h.toward : (h.toward == kUp ? kDown : kUp);
	LinkCost &lc = path.link;
	if (lc.key != t.key() || lc.kind != kind) {
		const Cost c = kind == Tlps::Write	  ? t.write(addr, len)
			       : kind == Tlps::Completion ? t.completion(addr, len)
							  : t.read_request(addr, len);
		const uint64_t dllp = t.dllp_bytes(c.wire_bytes);
		const uint64_t ps = t.serialize_ps(c.wire_bytes + dllp);
		lc = {t.key(), kind, c, dllp, ps, per_tlp(ps, c.tlps)};
	}
	counters[d].add(lc.cost.tlps, kind == Tlps::ReadRequest ? 0 : len, lc.cost.wire_bytes,
			lc.dllp_bytes, lc.ps);
	path.add(&free[d], lc.ps, lc.unit_ps);
	path.last = lc.cost;
}

// The inter-socket link (UPI, Infinity Fabric) carries the TLPs the PCIe
// link before it did, their bytes at its bandwidth, after its latency.
void Fabric::add_inter_socket(Path &path, const Hop &h, Tlps kind, uint64_t len)
{
	const unsigned d = kind != Tlps::Completion ? h.toward : 1 - h.toward;
	const uint64_t ps = ps_for(path.last.wire_bytes, inter_socket_ps_per_byte_);
	c_.inter_socket[d].add(path.last.tlps, kind == Tlps::ReadRequest ? 0 : len,
			       path.last.wire_bytes, 0, ps);
	path.latency_ps += inter_socket_ps_;
	path.add(&inter_socket_free_[d], ps, per_tlp(ps, path.last.tlps));
}

// A switch forwards the TLPs the link before it carried to the port they
// leave on, after its forwarding latency; that port's link is their
// egress. Its core is a resource of its own only when it has a limit.
void Fabric::add_switch(Path &path, unsigned sw)
{
	SwitchCounters &c = c_.switches[sw];
	c.tlps += path.last.tlps;
	c.wire_bytes += path.last.wire_bytes;
	path.latency_ps += hop_latency_ps_;
	if (!switch_ps_per_byte_[sw])
		return;
	const uint64_t ps = ps_for(path.last.wire_bytes, switch_ps_per_byte_[sw]);
	c.busy_ps += ps;
	path.add(&switch_core_[sw], ps, per_tlp(ps, path.last.tlps));
}

// A root complex forwards the TLPs the link before it carried, after its
// forwarding latency; the first one on a transaction's way also
// translates its address when the IOMMU is on. Into and out of host
// memory they take its path to memory (to_memory: this root complex is
// the memory's, the route's last hop), up toward memory for writes and
// read requests, down for the completions. Between ports (a peer, the
// other socket) the port they leave on is their egress.
void Fabric::add_root_complex(Path &path, unsigned socket, bool to_memory, Tlps kind)
{
	path.latency_ps += hop_latency_ps_;
	if (iommu_ && !path.translated) {
		path.translated = true;
		c_.iommu_translations++;
		path.latency_ps += iommu_ps_;
	}
	if (!to_memory)
		return;
	const uint64_t ps = ps_for(path.last.wire_bytes, rc_ps_per_byte_[socket]);
	c_.sockets[socket].rc_busy_ps += ps;
	const Dir d = kind == Tlps::Completion ? kDown : kUp;
	path.add(&rc_free_[socket][d], ps, per_tlp(ps, path.last.tlps));
}

// Host memory moves the payload, a request's (or a write TLP's) worth at
// a time.
void Fabric::add_memory(Path &path, unsigned socket, uint64_t len)
{
	const uint64_t ps = ps_for(len, host_mem_ps_per_byte_[socket]);
	c_.sockets[socket].host_mem_busy_ps += ps;
	path.add(&host_mem_free_[socket], ps, per_tlp(ps, path.last.tlps));
}

void Fabric::add_hop(Path &path, const Route &r, unsigned i, Tlps kind, uint64_t addr, uint64_t len)
{
	const Hop &h = r.hop[i];
	switch (h.kind) {
	case Res::Endpoint:
	case Res::Uplink:
		add_link(path, h, kind, addr, len);
		break;
	case Res::InterSocket:
		add_inter_socket(path, h, kind, len);
		break;
	case Res::Switch:
		add_switch(path, h.index);
		break;
	case Res::RootComplex:
		// Only a route to host memory ends at a root complex.
		add_root_complex(path, h.index, i + 1 == r.n, kind);
		break;
	}
}

// Writes cross the route toward the target; reads send their requests
// that way and the completions come back over the same hops. mem_socket:
// the socket whose host memory is the target, or -1 for a peer.
Fabric::Path Fabric::path(const Route &r, bool is_write, int mem_socket, uint64_t addr,
			  uint64_t len)
{
	Path p;
	for (unsigned i = 0; i < r.n; i++)
		add_hop(p, r, i, is_write ? Tlps::Write : Tlps::ReadRequest, addr, len);
	if (mem_socket >= 0)
		add_memory(p, static_cast<unsigned>(mem_socket), len);
	if (is_write)
		return p;
	// The target's end sends completions: a switch or root complex next
	// to it forwards those, not the requests that came in.
	p.last = target_link_.completion(addr, len);
	for (unsigned i = r.n; i-- > 0;)
		add_hop(p, r, i, Tlps::Completion, addr, len);
	return p;
}

uint64_t Fabric::Timeline::book(uint64_t now_ps, uint64_t at_ps, uint64_t work_ps)
{
	const uint64_t end = at_ps + work_ps;
	// Due after everything booked: the common case.
	if (at_ps >= last_to_ps_) {
		if (n_ && at_ps == last_to_ps_)
			busy(n_ - 1).to_ps = end;
		else
			insert(n_, at_ps, end);
		last_to_ps_ = end;
		return at_ps;
	}
	while (n_ && busy(0).to_ps <= now_ps) {
		head_++;
		n_--;
	}
	// The first interval still busy when the transfer is due, then the
	// first idle time from there on that holds it.
	unsigned i = n_;
	while (i > 0 && busy(i - 1).to_ps > at_ps)
		i--;
	uint64_t start = at_ps;
	for (; i < n_ && start + work_ps > busy(i).from_ps; i++)
		start = std::max(start, busy(i).to_ps);
	if (i && busy(i - 1).to_ps == start)
		busy(i - 1).to_ps = start + work_ps;
	else
		insert(i, start, start + work_ps);
	last_to_ps_ = std::max(last_to_ps_, start + work_ps);
	return start;
}

// Book [start, end) as interval i, the ones from i on moving up; with all
// slots taken, the oldest goes.
void Fabric::Timeline::insert(unsigned i, uint64_t start_ps, uint64_t end_ps)
{
	if (n_ == kSlots) {
		if (!i)
			return;
		head_++;
		n_--;
		i--;
	}
	for (unsigned k = n_; k > i; k--)
		busy(k) = busy(k - 1);
	busy(i) = {start_ps, end_ps};
	n_++;
}

// Pipelined reservation: a stage starts once its resource is free and the
// first TLP has come through the stage before; it ends no earlier than
// its own service time after that, nor before the last TLP has arrived
// and passed through. The resource is held only for its service time, so
// a stage fed by a slower one leaves room for other flows in between.
uint64_t Fabric::reserve(const Path &path, uint64_t now_ps, uint64_t start_ps)
{
	uint64_t prev_start = start_ps, prev_end = start_ps, prev_unit = 0;
	for (unsigned i = 0; i < path.n; i++) {
		const Stage &s = path.stage[i];
		const uint64_t first_in = prev_start + prev_unit + s.latency_ps;
		const uint64_t last_in = prev_end + s.latency_ps;
		const uint64_t start = s.timeline->book(now_ps, first_in, s.total_ps);
		prev_start = start;
		prev_end = std::max(start + s.total_ps, last_in + s.unit_ps);
		prev_unit = s.unit_ps;
	}
	return prev_end;
}

void Fabric::b_transport(int port, tlm::tlm_generic_payload &gp, sc_core::sc_time &delay)
{
	const bool w = gp.is_write();
	const uint64_t addr = gp.get_address();
	const uint64_t len = gp.get_data_length();
	const unsigned p = static_cast<unsigned>(port);
	// Every transaction is work, faulting ones too (devmemsim.h, "Work
	// budget"): the host translates the address either way.
	sim::charge_bytes(len);
	if (p >= ports() || !len) {
		gp.set_response_status(tlm::TLM_GENERIC_ERROR_RESPONSE);
		return;
	}
	// A request past the top of the 64-bit address space is malformed: no
	// TLP can carry it, so it faults before it is counted on any link.
	if (!bus_master_[p] || addr + len - 1 < addr) {
		// Nothing leaves the device: no link traffic, only the fault.
		gp.set_response_status(tlm::TLM_ADDRESS_ERROR_RESPONSE);
		c_.dma_faults++;
		return;
	}
	const int target = window_of(addr, len);
	const unsigned mem_socket = socket_of(addr);
	const Route r = route(p, target, mem_socket);
	if (target >= 0)
		count_p2p(r, len);
	else if (target == -1)
		(w ? c_.sockets[mem_socket].host_write_bytes
		   : c_.sockets[mem_socket].host_read_bytes) += len;
	const Path route_path =
		path(r, w, target == -1 ? static_cast<int>(mem_socket) : -1, addr, len);
	if (timed_) {
		// delay is the requester's time offset (TLM loosely timed): the
		// transfer starts then and delay becomes the time it is done.
		const uint64_t now = sc_core::sc_time_stamp().value();
		const uint64_t start = (now + delay.value()) / ticks_per_ps_;
		const uint64_t done =
			reserve(route_path, now / ticks_per_ps_, start) * ticks_per_ps_;
		delay = sc_core::sc_time::from_value(std::max(done, now) - now);
	}

	if (target >= 0) {
		auto t = static_cast<unsigned>(target);
		gp.set_address(addr - win_[t].base);
		sc_core::sc_time none = sc_core::SC_ZERO_TIME;
		bar_mem[t]->b_transport(gp, none);
		gp.set_address(addr);
	} else if (target == -1 && host_dma_ && host_dma_(p, addr, gp.get_data_ptr(), len, w)) {
		gp.set_response_status(tlm::TLM_OK_RESPONSE);
	} else {
		gp.set_response_status(tlm::TLM_ADDRESS_ERROR_RESPONSE);
	}
	if (!gp.is_response_ok())
		c_.dma_faults++;
}

// Links in the counters: a device's by its name; a switch's uplink is
// "upstream" when the node has one switch, else "SWITCH.upstream".
std::string Fabric::link_name(Res kind, unsigned index) const
{
	if (kind == Res::Uplink)
		return topo_.switches.size() == 1 ? "upstream"
						  : topo_.switches[index].name + ".upstream";
	const unsigned k = static_cast<unsigned>(topo_.nics.size());
	return index < k ? topo_.nics[index].name : topo_.gpus[index - k].name;
}

std::string Fabric::stats_json() const
{
	std::ostringstream o;
	o << "{\"mode\": \"" << mode_ << "\", \"mps\": " << link_.mps
	  << ", \"mrrs\": " << link_.mrrs
	  << ", \"acs_redirect\": " << (acs_redirect_ ? "true" : "false") << ", \"links\": {";
	put_links(o);
	o << "}, ";
	put_totals(o);
	o << ", \"switches\": {";
	put_switches(o);
	o << "}, \"sockets\": {";
	for (unsigned s = 0; s < topo_.sockets.size(); s++) {
		o << (s ? ", " : "") << "\"" << topo_.sockets[s].name << "\": {";
		put_socket(o, c_.sockets[s]);
		o << "}";
	}
	o << "}, \"iommu\": {\"enabled\": " << (iommu_ ? "true" : "false")
	  << ", \"translations\": " << c_.iommu_translations << "}"
	  << ", \"dma_faults\": " << c_.dma_faults << "}";
	return o.str();
}

// Device links first, then the switches' uplinks and the inter-socket link.
void Fabric::put_links(std::ostream &o) const
{
	const char *sep = "";
	for (unsigned p = 0; p < ports(); p++, sep = ", ") {
		o << sep;
		put_link(o, link_name(Res::Endpoint, p), endpoint_link_[p].params(),
			 c_.endpoint[p]);
	}
	for (unsigned s = 0; s < topo_.switches.size(); s++) {
		o << ", ";
		put_link(o, link_name(Res::Uplink, s), uplink_link_[s].params(), c_.uplink[s]);
	}
	if (topo_.sockets.size() < 2)
		return;
	o << ", \"inter_socket\": {\"gbps\": " << topo_.inter_socket_gbps
	  << ", \"latency_ns\": " << topo_.inter_socket_latency_ns << ", ";
	put_dir(o, "from_" + topo_.sockets[0].name, c_.inter_socket[0]);
	o << ", ";
	put_dir(o, "from_" + topo_.sockets[1].name, c_.inter_socket[1]);
	o << "}";
}

// Each switch: its counters and its core's limit (0: non-blocking).
void Fabric::put_switches(std::ostream &o) const
{
	for (unsigned s = 0; s < topo_.switches.size(); s++) {
		const SwitchCounters &c = c_.switches[s];
		o << (s ? ", " : "") << "\"" << topo_.switches[s].name
		  << "\": {\"p2p_bytes\": " << c.p2p_bytes << ", \"busy_ns\": " << c.busy_ps / 1000
		  << ", \"tlps\": " << c.tlps << ", \"wire_bytes\": " << c.wire_bytes
		  << ", \"gbps\": " << topo_.switches[s].gbps << "}";
	}
}

// "root_complex" and "host_memory" of one socket.
void Fabric::put_socket(std::ostream &o, const SocketCounters &s)
{
	o << "\"root_complex\": {\"host_write_bytes\": " << s.host_write_bytes
	  << ", \"host_read_bytes\": " << s.host_read_bytes << ", \"p2p_bytes\": " << s.p2p_bytes
	  << ", \"busy_ns\": " << s.rc_busy_ps / 1000 << "}"
	  << ", \"host_memory\": {\"bytes\": " << s.host_write_bytes + s.host_read_bytes
	  << ", \"busy_ns\": " << s.host_mem_busy_ps / 1000 << "}";
}

// The node's "switch", "root_complex" and "host_memory": sums over its
// switches and sockets.
void Fabric::put_totals(std::ostream &o) const
{
	SwitchCounters sw;
	for (const SwitchCounters &s : c_.switches) {
		sw.p2p_bytes += s.p2p_bytes;
		sw.tlps += s.tlps;
		sw.wire_bytes += s.wire_bytes;
		sw.busy_ps += s.busy_ps;
	}
	SocketCounters sum;
	for (const SocketCounters &s : c_.sockets) {
		sum.host_write_bytes += s.host_write_bytes;
		sum.host_read_bytes += s.host_read_bytes;
		sum.p2p_bytes += s.p2p_bytes;
		sum.rc_busy_ps += s.rc_busy_ps;
		sum.host_mem_busy_ps += s.host_mem_busy_ps;
	}
	o << "\"switch\": {\"p2p_bytes\": " << sw.p2p_bytes
	  << ", \"busy_ns\": " << sw.busy_ps / 1000 << ", \"tlps\": " << sw.tlps
	  << ", \"wire_bytes\": " << sw.wire_bytes << "}, ";
	put_socket(o, sum);
}

} // namespace devmemsim::pcie
