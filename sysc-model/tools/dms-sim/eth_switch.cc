// SPDX-License-Identifier: MIT
#include "eth_switch.h"

#include <cmath>

namespace dms_sim
{

EthSwitch::EthSwitch(Events &ev, double line_rate_gbps, uint64_t propagation_ps,
		     uint64_t latency_ps, bool cut_through)
    : ev_(ev), gbps_(line_rate_gbps), prop_ps_(propagation_ps), latency_ps_(latency_ps),
      cut_through_(cut_through)
{
}

uint64_t EthSwitch::mac_key(const uint8_t *mac) const
{
	uint64_t k = 0;
	for (int i = 0; i < 6; i++)
		k = k << 8 | mac[i];
	return k;
}

unsigned EthSwitch::attach(SimNode &n, const std::string &label)
{
	const unsigned p = unsigned(ports_.size());
	ports_.push_back(std::make_unique<Port>(ev_, 8000.0 / gbps_));
	ports_[p]->label = label;
	ports_[p]->out.set_nic(&n);
	by_mac_[mac_key(n.mac())] = p;
	return p;
}

// The frame crosses the NIC's cable into the switch; the switch forwards
// it when it may (store-and-forward: its last bit is in; cut-through: its
// first), in the order frames become ready, whatever port they came in on.
void EthSwitch::send(unsigned port, const uint8_t *frame, size_t len)
{
	Port &p = *ports_[port];
	const double start = p.in.start(double(ev_.now_ps()), len, p.in_c);
	const double ready = start + double(prop_ps_) + (cut_through_ ? 0 : p.in.frame_ps(len));
	p.arriving.emplace_back(frame, frame + len);
	ev_.at(uint64_t(std::llround(ready)) + latency_ps_, [this, port] { forward(port); });
}

void EthSwitch::forward(unsigned from)
{
	std::vector<uint8_t> f = std::move(ports_[from]->arriving.front());
	ports_[from]->arriving.pop_front();
	const auto to = by_mac_.find(mac_key(f.data()));
	if (to == by_mac_.end()) {
		unknown_++;
		return;
	}
	Port &out = *ports_[to->second];
	const double start = out.eg.start(double(ev_.now_ps()), f.size(), out.out.c);
	out.out.push(uint64_t(std::llround(start)) + prop_ps_, std::move(f));
}

std::vector<Network::Link> EthSwitch::links() const
{
	std::vector<Link> l;
	for (const auto &p : ports_) {
		l.push_back({"eth." + p->label + "-switch", gbps_, p->in_c});
		l.push_back({"eth.switch-" + p->label, gbps_, p->out.c});
	}
	return l;
}

} // namespace dms_sim
