// SPDX-License-Identifier: MIT
#include "sim/kernel.h"

#include <systemc>

namespace devmemsim::sim
{

void step_to(uint64_t target_ns)
{
	using namespace sc_core;
	// The first call ends elaboration and runs the initialization phase.
	if (sc_get_status() == SC_ELABORATION)
		sc_start(SC_ZERO_TIME);
	// Work posted at the current time (a doorbell) runs in delta cycles.
	while (sc_pending_activity_at_current_time())
		sc_start(SC_ZERO_TIME);
	uint64_t cur = now_ns();
	if (target_ns > cur)
		sc_start(sc_time(static_cast<double>(target_ns - cur), SC_NS));
}

uint64_t deadline_ns()
{
	if (sc_core::sc_get_status() == sc_core::SC_ELABORATION)
		return 0; // never run yet: step now to finish elaboration
	if (!sc_core::sc_pending_activity())
		return UINT64_MAX;
	sc_core::sc_time dt = sc_core::sc_time_to_pending_activity();
	return now_ns() + static_cast<uint64_t>(dt / sc_core::sc_time(1, sc_core::SC_NS));
}

uint64_t now_ns()
{
	return static_cast<uint64_t>(sc_core::sc_time_stamp() /
				     sc_core::sc_time(1, sc_core::SC_NS));
}

} // namespace devmemsim::sim

// libsystemc references sc_main from its own main(), which a host program
// that owns main() never calls. The model is driven through step_to().
extern "C" int sc_main(int, char **)
{
	return 1;
}
