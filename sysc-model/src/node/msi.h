// SPDX-License-Identifier: MIT
// The node's MSIs on their way to the host (devmemsim.h, "Interrupts").
// A device's vector, past its pair's fault injector, comes here. One the
// model raised on its own in a step reaches the host at once. One a host
// call raised (a register write above all: an unmask, an arm, a refused
// doorbell) is posted, as the memory write an MSI is on PCIe: it reaches
// the host DMS_MSI_POST_NS of simulated time after the host's time of the
// call, from a later step. A chain of messages aimed at device registers
// (two GPUs unmasking each other) thus runs no faster than simulated
// time, whatever the guest programmed. Posted messages of one vector
// merge until delivered, as an MSI-X pending bit does.
#pragma once

#include <cstdint>
#include <functional>
#include <systemc>
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
	// call raised it, so it is posted.
	void raise(unsigned port, unsigned vector, bool by_host);
	// The device on `port` went away: its posted messages with it.
	void forget(unsigned port);

	uint64_t sent() const { return sent_; }
	uint64_t posted() const { return posted_; }
	void reset_counters() { sent_ = posted_ = 0; }

private:
	struct Posted {
		uint64_t due_ns;
		unsigned port, vector;
	};
	void deliver(unsigned port, unsigned vector);
	void arrive(); // the posted messages that are due, in posting order

	Sink sink_;
	std::vector<Posted> posted_msgs_;
	sc_core::sc_event wake_;
	uint64_t sent_ = 0, posted_ = 0;
};

} // namespace devmemsim
