// SPDX-License-Identifier: MIT
#include "node/msi.h"

#include <algorithm>

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
	if (!by_host)
		return deliver(port, vector);
	auto same = [&](const Posted &m) { return m.port == port && m.vector == vector; };
	if (std::any_of(posted_msgs_.begin(), posted_msgs_.end(), same))
		return; // merges with the one on its way
	// From the host's time of the call: the model's own lags while idle.
	const uint64_t due = sim::device_ns() + DMS_MSI_POST_NS;
	posted_msgs_.push_back({due, port, vector});
	posted_++;
	wake_.notify(sc_core::sc_time(static_cast<double>(due - sim::now_ns()), sc_core::SC_NS));
}

void MsiPost::forget(unsigned port)
{
	posted_msgs_.erase(std::remove_if(posted_msgs_.begin(), posted_msgs_.end(),
					  [port](const Posted &m) { return m.port == port; }),
			   posted_msgs_.end());
}

void MsiPost::deliver(unsigned port, unsigned vector)
{
	sim::charge(1);
	sent_++;
	if (sink_)
		sink_(port, vector);
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
		deliver(m.port, m.vector);
	if (posted_msgs_.empty())
		return;
	uint64_t next = UINT64_MAX;
	for (const Posted &m : posted_msgs_)
		next = std::min(next, m.due_ns);
	wake_.notify(sc_core::sc_time(static_cast<double>(next - now), sc_core::SC_NS));
}

} // namespace devmemsim
