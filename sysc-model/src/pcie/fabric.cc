// SPDX-License-Identifier: MIT
#include "pcie/fabric.h"

#include <algorithm>
#include <sstream>

namespace devmemsim::pcie
{

namespace
{

const char *const kPortNames[kNumPorts] = {"nic", "gpu"};

void put_dir(std::ostream &o, const char *name, const LinkCounters &c)
{
	o << "\"" << name << "\": {\"tlps\": " << c.tlps
	  << ", \"payload_bytes\": " << c.payload_bytes << ", \"wire_bytes\": " << c.wire_bytes
	  << ", \"busy_ns\": " << c.busy_ps / 1000 << "}";
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
      hop_latency_(static_cast<double>(cfg.hop_latency_ns), sc_core::SC_NS),
      mode_(mode_name(cfg.mode))
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

uint64_t Fabric::cross(LinkCounters &lc, bool is_write, bool data_dir, uint64_t addr, uint64_t len)
{
	Cost c = is_write   ? write_cost(link_, addr, len)
		 : data_dir ? completion_cost(link_, addr, len)
			    : read_request_cost(link_, addr, len);
	uint64_t ps = serialize_ps(link_, c.wire_bytes);
	lc.add(c.tlps, is_write || data_dir ? len : 0, c.wire_bytes, ps);
	return ps;
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
	uint64_t worst_ps = 0;
	unsigned hops = 1;
	// A link crossed "toward the target" carries the write or the read
	// request; the other direction carries read completions.
	auto along = [&](LinkCounters &toward, LinkCounters &back) {
		worst_ps = std::max(worst_ps, cross(toward, w, false, addr, len));
		if (!w)
			worst_ps = std::max(worst_ps, cross(back, false, true, addr, len));
	};

	along(c_.endpoint[p][kUp], c_.endpoint[p][kDown]);
	if (target >= 0 && !acs_redirect_) {
		c_.switch_p2p_bytes += len;
	} else {
		along(c_.upstream[kUp], c_.upstream[kDown]);
		hops++;
		if (target >= 0) {
			// ACS redirect: up to the root complex and back down.
			c_.rc_p2p_bytes += len;
			along(c_.upstream[kDown], c_.upstream[kUp]);
			hops++;
		} else if (target == -1) {
			(w ? c_.rc_host_write_bytes : c_.rc_host_read_bytes) += len;
		}
	}
	if (target >= 0) {
		auto t = static_cast<unsigned>(target);
		along(c_.endpoint[t][kDown], c_.endpoint[t][kUp]);
		hops++;
	}
	if (timed_)
		delay += hop_latency_ * hops +
			 sc_core::sc_time(static_cast<double>(worst_ps), sc_core::SC_PS);

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
	o << "}, \"switch\": {\"p2p_bytes\": " << c_.switch_p2p_bytes << "}"
	  << ", \"root_complex\": {\"host_write_bytes\": " << c_.rc_host_write_bytes
	  << ", \"host_read_bytes\": " << c_.rc_host_read_bytes
	  << ", \"p2p_bytes\": " << c_.rc_p2p_bytes << "}"
	  << ", \"dma_faults\": " << c_.dma_faults << "}";
	return o.str();
}

} // namespace devmemsim::pcie
