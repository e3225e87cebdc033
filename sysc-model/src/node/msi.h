// SPDX-License-Identifier: MIT
// The node's MSIs on their way to the host (devmemsim.h, "Interrupts").
// A device's vector, past its pair's fault injector, comes here. One the
// model raised on its own in a step reaches the host at once. One a host
// call raised (a register write above all: an unmask, an arm, a refused
// doorbell) goes at once too if its vector sent nothing for DMS_MSI_GAP_NS
// of simulated time; else it is posted to the end of that gap and reaches
// the host from a step then. A chain of messages aimed at device registers
// (two GPUs unmasking each other) thus sends each vector at most once per
// gap: it runs no faster than simulated time, whatever the guest
// programmed, while a driver's unmask or arm long after the vector's last
// message goes as it always did. Posted messages of one vector merge
// until delivered, as an MSI-X pending bit does.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <systemc>
#include <utility>
#include <vector>

namespace devmemsim
{

class MsiPost : public sc_core::sc_module
{
public:
	// Where a message goes: the host side of fabric port `port`.
	using Sink = std::function<void(unsigned port, unsigned vector)>;

	explicit MsiPost(sc_core::sc_module_name name);

	void set_sink(Sink sink) { sink_ = std::move(sink); }
	// Vector `vector` of the device on fabric port `port`; by_host: a host
	// call raised it, so it keeps its vector's gap.
	void raise(unsigned port, unsigned vector, bool by_host);
	// The device on `port` went away: its posted messages with it.
	void forget(unsigned port);

	uint64_t sent() const { return sent_; }
	uint64_t posted() const { return posted_; }
	void reset_counters() { sent_ = posted_ = 0; }

private:
	using Vector = std::pair<unsigned, unsigned>; // port, vector
	struct Posted {
		uint64_t due_ns;
		Vector v;
	};
	void deliver(const Vector &v, uint64_t now_ns);
	void arrive(); // the posted messages that are due, in posting order

	Sink sink_;
	std::vector<Posted> posted_msgs_;
	std::map<Vector, uint64_t> last_ns_; // each vector's last message
	sc_core::sc_event wake_;
	uint64_t sent_ = 0, posted_ = 0;
};

} // namespace devmemsim
