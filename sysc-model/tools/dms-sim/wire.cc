// SPDX-License-Identifier: MIT
#include "wire.h"

#include <algorithm>
#include <cmath>

namespace dms_sim
{

Wire::Wire(Events &ev, double line_rate_gbps, uint64_t propagation_ps)
    : ev_(ev), gbps_(line_rate_gbps), ps_per_byte_(8000.0 / line_rate_gbps),
      prop_ps_(propagation_ps)
{
}

void Wire::send(unsigned from, const uint8_t *frame, size_t len)
{
	Direction &d = dir_[from];
	const double start = std::max(d.free_ps, double(ev_.now_ps()));
	const double ser = double(len + kEthWireOverhead) * ps_per_byte_;
	d.free_ps = start + ser;
	d.c.frames++;
	d.c.bytes += len;
	d.c.wire_bytes += len + kEthWireOverhead;
	d.c.busy_ps += uint64_t(std::llround(ser));
	const uint64_t arrival = uint64_t(std::llround(start)) + prop_ps_;
	d.q.emplace_back(arrival, std::vector<uint8_t>(frame, frame + len));
	const unsigned to = 1 - from;
	ev_.at(arrival, [this, to] { deliver(to); });
}

// Offer the frames that have arrived, oldest first, until the NIC refuses.
void Wire::deliver(unsigned to)
{
	Direction &d = dir_[1 - to];
	while (!d.q.empty() && d.q.front().first <= ev_.now_ps()) {
		const std::vector<uint8_t> &f = d.q.front().second;
		if (dms_dev_receive(ends_[to]->node(), ends_[to]->nic(), f.data(), f.size()) != 1) {
			d.c.held++;
			return; // rx_ready() offers it again
		}
		d.q.pop_front();
	}
}

} // namespace dms_sim
