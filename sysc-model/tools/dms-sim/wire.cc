// SPDX-License-Identifier: MIT
#include "wire.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace dms_sim
{

void CableEnd::push(uint64_t arrival_ps, std::vector<uint8_t> frame)
{
	q_.emplace_back(arrival_ps, std::move(frame));
	ev_.at(arrival_ps, [this] { deliver(); });
}

// Offer the frames that have arrived, oldest first, until the NIC refuses.
void CableEnd::deliver()
{
	while (!q_.empty() && q_.front().first <= ev_.now_ps()) {
		const std::vector<uint8_t> &f = q_.front().second;
		if (dms_dev_receive(nic_->node(), nic_->nic(), f.data(), f.size()) != 1) {
			c.held++;
			return; // rx_ready() offers it again
		}
		q_.pop_front();
	}
}

double LineClock::start(double ready_ps, size_t len, WireCounters &c)
{
	const double start = std::max(free_ps, ready_ps);
	const double ser = frame_ps(len);
	free_ps = start + ser;
	c.frames++;
	c.bytes += len;
	c.wire_bytes += len + kEthWireOverhead;
	c.busy_ps += uint64_t(std::llround(ser));
	c.max_queue_ps = std::max(c.max_queue_ps, uint64_t(std::llround(start - ready_ps)));
	return start;
}

Wire::Wire(Events &ev, double line_rate_gbps, uint64_t propagation_ps, std::string name)
    : ev_(ev), gbps_(line_rate_gbps), prop_ps_(propagation_ps),
      name_(std::move(name)), line_{LineClock{8000.0 / line_rate_gbps},
				    LineClock{8000.0 / line_rate_gbps}},
      into_{CableEnd(ev), CableEnd(ev)}
{
}

unsigned Wire::attach(SimNode &n, const std::string &label)
{
	if (ends_ == 2)
		throw std::runtime_error("a wire joins two NICs");
	labels_[ends_] = label;
	into_[ends_].set_nic(&n);
	return ends_++;
}

void Wire::send(unsigned from, const uint8_t *frame, size_t len)
{
	const unsigned to = 1 - from;
	const double start = line_[from].start(double(ev_.now_ps()), len, into_[to].c);
	into_[to].push(uint64_t(std::llround(start)) + prop_ps_,
		       std::vector<uint8_t>(frame, frame + len));
}

std::vector<Network::Link> Wire::links() const
{
	std::vector<Link> l;
	for (unsigned from = 0; from < 2; from++)
		l.push_back({name_ + labels_[from] + "-" + labels_[1 - from], gbps_,
			     into_[1 - from].c});
	return l;
}

} // namespace dms_sim
