// SPDX-License-Identifier: MIT
#include "sim/kernel.h"

#include <algorithm>
#include <systemc>

namespace devmemsim::sim {

void step_to(uint64_t target_ns)
{
	uint64_t cur = now_ns();
	if (target_ns <= cur && sc_core::sc_get_status() != sc_core::SC_ELABORATION)
		return;
	// The first call ends elaboration; sc_start(0) then runs delta cycles.
	sc_core::sc_start(
		sc_core::sc_time(static_cast<double>(target_ns - std::min(target_ns, cur)),
				 sc_core::SC_NS));
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
