// SPDX-License-Identifier: MIT
// dms-sim's ideal Ethernet switch: one port per NIC, every cable at the
// line rate (network.h: framing and timing), forwarding by destination MAC
// with no loss and unbounded buffers. A frame goes out of its egress port
// once it has arrived whole (store-and-forward) or from its first bit on
// (cut-through), network.switch_latency_ns later, after the frames queued
// before it on that port: only egress ports queue, so two senders into one
// port share it.
#pragma once

#include <deque>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "network.h"

namespace dms_sim
{

class EthSwitch : public Network
{
public:
	EthSwitch(Events &ev, double line_rate_gbps, uint64_t propagation_ps, uint64_t latency_ps,
		  bool cut_through);
	unsigned attach(SimNode &n, const std::string &label) override;
	void send(unsigned port, const uint8_t *frame, size_t len) override;
	void rx_ready(unsigned port) override { ports_[port]->out.deliver(); }
	std::vector<Link> links() const override;
	// Frames whose destination MAC is on no port (dropped).
	uint64_t unknown() const { return unknown_; }

private:
	struct Port {
		Port(Events &ev, double ps_per_byte) : in{ps_per_byte}, eg{ps_per_byte}, out(ev) {}
		std::string label;
		LineClock in, eg;			   // NIC -> switch, switch -> NIC
		WireCounters in_c;			   // NIC -> switch
		std::deque<std::vector<uint8_t>> arriving; // on the NIC -> switch cable
		CableEnd out;				   // switch -> NIC
	};
	void forward(unsigned from);
	uint64_t mac_key(const uint8_t *mac) const;

	Events &ev_;
	double gbps_;
	uint64_t prop_ps_, latency_ps_;
	bool cut_through_;
	std::vector<std::unique_ptr<Port>> ports_;
	std::map<uint64_t, unsigned> by_mac_;
	uint64_t unknown_ = 0;
};

} // namespace dms_sim
