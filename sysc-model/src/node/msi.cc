// SPDX-License-Identifier: MIT
#include "node/msi.h"

#include <algorithm>
#include <iterator>

#include "devmemsim/devmemsim.h"
#include "sim/kernel.h"

namespace devmemsim
{

MsiPost::MsiPost(sc_core::sc_module_name name) : sc_core::sc_module(name)
{
	SC_HAS_PROCESS(MsiPost);
	SC_METHOD(arrive);
	sensitive << wake_;
	dont_initialize();
}

void MsiPost::raise(unsigned port, unsigned vector, bool by_host)
{
	const Vector v{port, vector};
	auto same = [&v](const Posted &m) { return m.v == v; };
	auto posted = std::find_if(posted_msgs_.begin(), posted_msgs_.end(), same);
	if (!by_host) {
		if (posted != posted_msgs_.end())
			posted_msgs_.erase(posted); // this message carries it
		return deliver(v, sim::now_ns());
	}
	if (posted != posted_msgs_.end())
		return; // merges with the one waiting
	// At the host's time of the call (the model's lags while it idles).
	const uint64_t now = sim::device_ns();
	const auto last = last_ns_.find(v);
	if (last == last_ns_.end() || now >= last->second + DMS_MSI_GAP_NS)
		return deliver(v, now);
	const uint64_t due = last->second + DMS_MSI_GAP_NS;
	posted_msgs_.push_back({due, v});
	posted_++;
	wake_.notify(sc_core::sc_time(static_cast<double>(due - sim::now_ns()), sc_core::SC_NS));
}

void MsiPost::forget(unsigned port)
{
	auto of_port = [port](const Posted &m) { return m.v.first == port; };
	posted_msgs_.erase(std::remove_if(posted_msgs_.begin(), posted_msgs_.end(), of_port),
			   posted_msgs_.end());
	for (auto it = last_ns_.begin(); it != last_ns_.end();)
		it = it->first.first == port ? last_ns_.erase(it) : std::next(it);
}

void MsiPost::deliver(const Vector &v, uint64_t now_ns)
{
	last_ns_[v] = now_ns;
	sim::charge(1);
	sent_++;
	if (sink_)
		sink_(v.first, v.second);
}

void MsiPost::arrive()
{
	const uint64_t now = sim::now_ns();
	// Taken out first: the sink may post again (a host that writes
	// registers from its callback).
	std::vector<Posted> due;
	auto is_due = [now](const Posted &m) { return m.due_ns <= now; };
	std::copy_if(posted_msgs_.begin(), posted_msgs_.end(), std::back_inserter(due), is_due);
	posted_msgs_.erase(std::remove_if(posted_msgs_.begin(), posted_msgs_.end(), is_due),
			   posted_msgs_.end());
	for (const Posted &m : due)
		deliver(m.v, now);
	if (posted_msgs_.empty())
		return;
	uint64_t next = UINT64_MAX;
	for (const Posted &m : posted_msgs_)
		next = std::min(next, m.due_ns);
	wake_.notify(sc_core::sc_time(static_cast<double>(next - now), sc_core::SC_NS));
}

} // namespace devmemsim
