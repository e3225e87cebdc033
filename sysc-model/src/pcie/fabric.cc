// SPDX-License-Identifier: MIT
#include "pcie/fabric.h"

#include <algorithm>
#include <sstream>

namespace devmemsim::pcie
{

namespace
{

const char *const kPortNames[kNumPorts] = {"nic", "gpu"};

// Simulated time in ps. The kernel's time resolution is 1 ps (SystemC's
// default, which nothing changes) or finer.
uint64_t ps_of(const sc_core::sc_time &t)
{
	return t.value() / sc_core::sc_time(1, sc_core::SC_PS).value();
}

void put_dir(std::ostream &o, const char *name, const LinkCounters &c)
{
	o << "\"" << name << "\": {\"tlps\": " << c.tlps
	  << ", \"payload_bytes\": " << c.payload_bytes << ", \"wire_bytes\": " << c.wire_bytes
	  << ", \"dllp_bytes\": " << c.dllp_bytes << ", \"busy_ns\": " << c.busy_ps / 1000 << "}";
}

void put_link(std::ostream &o, const char *name, const LinkParams &p,
	      const std::array<LinkCounters, 2> &c)
{
	o << "\"" << name << "\": {\"gen\": " << p.gen << ", \"width\": " << p.width << ", ";
	put_dir(o, "up", c[kUp]);
	o << ", ";
	put_dir(o, "down", c[kDown]);
	o << "}";
}

} // namespace

Fabric::Fabric(sc_core::sc_module_name name, const NodeConfig &cfg)
    : sc_core::sc_module(name),
      dma("dma"), bar_mem{tlm_utils::simple_initiator_socket_tagged<Fabric>("bar_mem_nic"),
			  tlm_utils::simple_initiator_socket_tagged<Fabric>("bar_mem_gpu")},
      link_(cfg.link), acs_redirect_(cfg.acs_redirect), timed_(cfg.mode == Mode::Timed),
      hop_latency_ps_(uint64_t{cfg.hop_latency_ns} * 1000),
      // Gbit/s to bytes per picosecond: * 1e9 / 8 / 1e12.
      switch_bpps_(cfg.switch_gbps / 8000.0), rc_bpps_(cfg.root_complex_gbps / 8000.0),
      host_mem_bpps_(cfg.host_mem_gbps / 8000.0), mode_(mode_name(cfg.mode))
{
	dma.register_b_transport(this, &Fabric::b_transport);
}

void Fabric::set_window(unsigned port, uint64_t addr, uint64_t size)
{
	if (port < kNumPorts)
		win_[port] = {addr, size};
}

void Fabric::set_bus_master(unsigned port, bool on)
{
	if (port < kNumPorts)
		bus_master_[port] = on;
}

int Fabric::window_of(uint64_t addr, uint64_t len) const
{
	for (unsigned p = 0; p < kNumPorts; p++) {
		const Window &w = win_[p];
		if (!w.size || addr < w.base || addr - w.base >= w.size)
			continue;
		// A burst that runs past the window's end is not routable.
		return len <= w.size - (addr - w.base) ? static_cast<int>(p) : -2;
	}
	return -1;
}

// From the requester's port toward the target: a peer's BAR (turned around
// at the switch, or at the root complex with ACS redirect) or, for host
// memory and unroutable addresses, the root complex.
Fabric::Route Fabric::route(unsigned port, int target)
{
	Route r;
	auto link = [&r](std::array<LinkCounters, 2> &lc, std::array<uint64_t, 2> &free, Dir d) {
		r.hop[r.n++] = {&lc, &free, d, false};
	};
	auto forward = [&r](bool root_complex) {
		r.hop[r.n++] = {nullptr, nullptr, kUp, root_complex};
	};
	link(c_.endpoint[port], endpoint_free_[port], kUp);
	forward(false);
	if (target < 0 || acs_redirect_) {
		link(c_.upstream, upstream_free_, kUp);
		forward(true);
		if (target >= 0) {
			link(c_.upstream, upstream_free_, kDown);
			forward(false);
		}
	}
	if (target >= 0) {
		auto t = static_cast<unsigned>(target);
		link(c_.endpoint[t], endpoint_free_[t], kDown);
	}
	return r;
}

void Fabric::add_link(Path &path, const Hop &h, Tlps kind, uint64_t addr, uint64_t len)
{
	const Dir d = kind != Tlps::Completion ? h.toward : (h.toward == kUp ? kDown : kUp);
	const Cost c = kind == Tlps::Write	  ? write_cost(link_, addr, len)
		       : kind == Tlps::Completion ? completion_cost(link_, addr, len)
						  : read_request_cost(link_, addr, len);
	const uint64_t dllp = dllp_bytes(link_, c.wire_bytes);
	const uint64_t ps = serialize_ps(link_, c.wire_bytes + dllp);
	(*h.link)[d].add(c.tlps, kind == Tlps::ReadRequest ? 0 : len, c.wire_bytes, dllp, ps);
	path.stage[path.n++] = {&(*h.link_free)[d], ps, ps / c.tlps, 0};
	path.last = c;
}

// A switch or the root complex forwards the TLPs the link before it
// carried, after its forwarding latency.
void Fabric::add_forward(Path &path, bool root_complex)
{
	const double bpps = root_complex ? rc_bpps_ : switch_bpps_;
	const auto ps = static_cast<uint64_t>(
		std::llround(static_cast<double>(path.last.wire_bytes) / bpps));
	(root_complex ? c_.rc_busy_ps : c_.switch_busy_ps) += ps;
	path.stage[path.n++] = {root_complex ? &rc_free_ : &switch_free_, ps, ps / path.last.tlps,
				hop_latency_ps_};
}

// Host memory moves the payload, a request's (or a write TLP's) worth at
// a time.
void Fabric::add_memory(Path &path, uint64_t len)
{
	const auto ps =
		static_cast<uint64_t>(std::llround(static_cast<double>(len) / host_mem_bpps_));
	c_.host_mem_busy_ps += ps;
	path.stage[path.n++] = {&host_mem_free_, ps, ps / path.last.tlps, 0};
}

// Writes cross the route toward the target; reads send their requests
// that way and the completions come back over the same hops.
Fabric::Path Fabric::path(const Route &r, bool is_write, bool to_host, uint64_t addr, uint64_t len)
{
	Path p;
	for (unsigned i = 0; i < r.n; i++) {
		if (r.hop[i].link)
			add_link(p, r.hop[i], is_write ? Tlps::Write : Tlps::ReadRequest, addr,
				 len);
		else
			add_forward(p, r.hop[i].root_complex);
	}
	if (to_host)
		add_memory(p, len);
	if (is_write)
		return p;
	for (unsigned i = r.n; i-- > 0;) {
		if (r.hop[i].link)
			add_link(p, r.hop[i], Tlps::Completion, addr, len);
		else
			add_forward(p, r.hop[i].root_complex);
	}
	return p;
}

// Pipelined reservation: a stage starts once its resource is free and the
// first TLP has come through the stage before; it ends no earlier than
// its own service time after that, nor before the last TLP has arrived
// and passed through. The resource is held only for its service time, so
// a stage fed by a slower one leaves room for other flows in between.
uint64_t Fabric::reserve(const Path &path, uint64_t start_ps)
{
	uint64_t prev_start = start_ps, prev_end = start_ps, prev_unit = 0;
	for (unsigned i = 0; i < path.n; i++) {
		const Stage &s = path.stage[i];
		const uint64_t first_in = prev_start + prev_unit + s.latency_ps;
		const uint64_t last_in = prev_end + s.latency_ps;
		const uint64_t start = std::max(*s.free_ps, first_in);
		const uint64_t end = std::max(start + s.total_ps, last_in + s.unit_ps);
		*s.free_ps = start + s.total_ps;
		prev_start = start;
		prev_end = end;
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
	if (p >= kNumPorts || !len) {
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
	if (target >= 0)
		(acs_redirect_ ? c_.rc_p2p_bytes : c_.switch_p2p_bytes) += len;
	else if (target == -1)
		(w ? c_.rc_host_write_bytes : c_.rc_host_read_bytes) += len;
	const Path route_path = path(route(p, target), w, target == -1, addr, len);
	if (timed_) {
		// delay is the requester's time offset (TLM loosely timed): the
		// transfer starts then and delay becomes the time it is done.
		const uint64_t now = ps_of(sc_core::sc_time_stamp());
		const uint64_t done = reserve(route_path, now + ps_of(delay));
		delay = sc_core::sc_time(static_cast<double>(done - now), sc_core::SC_PS);
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

std::string Fabric::stats_json() const
{
	std::ostringstream o;
	o << "{\"mode\": \"" << mode_ << "\", \"mps\": " << link_.mps
	  << ", \"mrrs\": " << link_.mrrs
	  << ", \"acs_redirect\": " << (acs_redirect_ ? "true" : "false") << ", \"links\": {";
	for (unsigned p = 0; p < kNumPorts; p++) {
		put_link(o, kPortNames[p], link_, c_.endpoint[p]);
		o << ", ";
	}
	put_link(o, "upstream", link_, c_.upstream);
	o << "}, \"switch\": {\"p2p_bytes\": " << c_.switch_p2p_bytes
	  << ", \"busy_ns\": " << c_.switch_busy_ps / 1000 << "}"
	  << ", \"root_complex\": {\"host_write_bytes\": " << c_.rc_host_write_bytes
	  << ", \"host_read_bytes\": " << c_.rc_host_read_bytes
	  << ", \"p2p_bytes\": " << c_.rc_p2p_bytes << ", \"busy_ns\": " << c_.rc_busy_ps / 1000
	  << "}"
	  << ", \"host_memory\": {\"bytes\": " << c_.rc_host_write_bytes + c_.rc_host_read_bytes
	  << ", \"busy_ns\": " << c_.host_mem_busy_ps / 1000 << "}"
	  << ", \"dma_faults\": " << c_.dma_faults << "}";
	return o.str();
}

} // namespace devmemsim::pcie
