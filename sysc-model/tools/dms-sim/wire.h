// SPDX-License-Identifier: MIT
// dms-sim's Ethernet wire between two NICs, full duplex. Each direction
// carries one frame at a time at the line rate, each frame taking its
// bytes plus preamble/SFD (8), FCS (4) and the inter-frame gap (12) of
// wire time (IEEE 802.3), then the propagation delay. A frame is handed
// to the receiving NIC (dms_dev_receive) when its first bit arrives: the
// NIC's MAC itself takes the frame's wire time to receive it (nic_rx.cc),
// so the wire adds queueing and propagation only. A NIC without room
// refuses frames; the wire holds them, in order, until its rx_ready.
#pragma once

#include <array>
#include <cstdint>
#include <deque>
#include <vector>

#include "sim_host.h"

namespace dms_sim
{

constexpr uint32_t kEthWireOverhead = 8 + 4 + 12;

struct WireCounters {
	uint64_t frames = 0, bytes = 0, wire_bytes = 0, busy_ps = 0, held = 0;
};

class Wire
{
public:
	Wire(Events &ev, double line_rate_gbps, uint64_t propagation_ps);
	// ends[i] sends toward ends[1 - i].
	void connect(SimNode *a, SimNode *b) { ends_ = {a, b}; }
	void send(unsigned from, const uint8_t *frame, size_t len);
	void rx_ready(unsigned to) { deliver(to); }
	const WireCounters &counters(unsigned from) const { return dir_[from].c; }
	double line_rate_gbps() const { return gbps_; }

private:
	struct Direction {
		double free_ps = 0; // end of the last frame's wire time
		std::deque<std::pair<uint64_t, std::vector<uint8_t>>> q; // arrival, frame
		WireCounters c;
	};
	void deliver(unsigned to);

	Events &ev_;
	double gbps_;
	double ps_per_byte_;
	uint64_t prop_ps_;
	std::array<SimNode *, 2> ends_{};
	std::array<Direction, 2> dir_;
};

} // namespace dms_sim
