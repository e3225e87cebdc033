// SPDX-License-Identifier: MIT
// dms-sim's Ethernet between the NICs: a wire (wire.h) or an ideal switch
// (eth_switch.h). Every direction of every cable carries one frame at a
// time at the line rate, each frame taking its bytes plus preamble/SFD (8),
// FCS (4) and the inter-frame gap (12) of wire time (IEEE 802.3), then the
// propagation delay. A frame is handed to the receiving NIC
// (dms_dev_receive) when its first bit arrives: the NIC's MAC itself takes
// the frame's wire time to receive it (nic_rx.cc). A NIC without room
// refuses frames; the network holds them, in order, until its rx_ready.
#pragma once

#include <cstdint>
#include <deque>
#include <string>
#include <utility>
#include <vector>

#include "sim_host.h"

namespace dms_sim
{

constexpr uint32_t kEthWireOverhead = 8 + 4 + 12;

struct WireCounters {
	uint64_t frames = 0, bytes = 0, wire_bytes = 0, busy_ps = 0, held = 0;
	uint64_t max_queue_ps = 0; // the longest a frame waited for its cable
};

class Network
{
public:
	// One direction of one cable, for the report.
	struct Link {
		std::string name;
		double gbps;
		WireCounters c;
	};
	virtual ~Network() = default;
	// The NIC of n joins the network, named label; its port.
	virtual unsigned attach(SimNode &n, const std::string &label) = 0;
	virtual void send(unsigned port, const uint8_t *frame, size_t len) = 0;
	// The NIC on port has room again.
	virtual void rx_ready(unsigned port) = 0;
	virtual std::vector<Link> links() const = 0;
};

// One direction of a cable into a NIC: frames in flight or held, in
// arrival order, handed over when they arrive and the NIC takes them.
class CableEnd
{
public:
	CableEnd(Events &ev) : ev_(ev) {}
	void set_nic(SimNode *n) { nic_ = n; }
	// A frame whose first bit reaches the NIC at arrival_ps.
	void push(uint64_t arrival_ps, std::vector<uint8_t> frame);
	void deliver();
	WireCounters c;

private:
	Events &ev_;
	SimNode *nic_ = nullptr;
	std::deque<std::pair<uint64_t, std::vector<uint8_t>>> q_;
};

// The serialisation side of a cable direction: when the line is free.
struct LineClock {
	double ps_per_byte;
	double free_ps = 0;
	// A frame of len bytes ready to go at ready_ps: its start on the line
	// (counted in c).
	double start(double ready_ps, size_t len, WireCounters &c);
	double frame_ps(size_t len) const { return double(len + kEthWireOverhead) * ps_per_byte; }
};

} // namespace dms_sim
