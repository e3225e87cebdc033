// SPDX-License-Identifier: MIT
#include "sim/kernel.h"

#include <algorithm>
#include <systemc>

namespace devmemsim::sim
{

namespace
{

// Kernel ticks per ns. The resolution is fixed once any time has been
// built, so one lookup serves the run (the model steps several times a
// frame, each asking for it).
uint64_t ps_per_ns()
{
	static const uint64_t ticks = sc_core::sc_time(1, sc_core::SC_NS).value();
	return ticks;
}

// sc_time(ns, SC_NS) without its floating-point work: SystemC resolutions
// are powers of ten, so at 1 ns or finer a ns is a whole number of ticks,
// and below 2^53 ticks the kernel's double arithmetic is exact too.
sc_core::sc_time time_at_ns(uint64_t ns)
{
	const uint64_t ticks = ps_per_ns();
	if (ticks && ns < (uint64_t{1} << 53) / ticks)
		return sc_core::sc_time::from_value(ns * ticks);
	return sc_core::sc_time(static_cast<double>(ns), sc_core::SC_NS);
}

} // namespace

namespace
{

uint64_t meter;	  // work units charged so far
StepStats stats_; // of step_to()

// Whether the kernel has work at or before target.
bool work_left(const sc_core::sc_time &target)
{
	using namespace sc_core;
	if (sc_pending_activity_at_current_time())
		return true;
	return sc_pending_activity() && sc_time_stamp() + sc_time_to_pending_activity() <= target;
}

void count_step(uint64_t units, bool cut)
{
	stats_.steps++;
	stats_.units += units;
	stats_.max_step_units = std::max(stats_.max_step_units, units);
	stats_.cut_steps += cut;
}

} // namespace

void charge(uint64_t units)
{
	meter += units;
}

uint64_t work_meter()
{
	return meter;
}

const StepStats &step_stats()
{
	return stats_;
}

void reset_step_stats()
{
	stats_ = StepStats{};
}

bool step_to(uint64_t target_ns, unsigned budget)
{
	using namespace sc_core;
	// The first call ends elaboration and runs the initialization phase.
	if (sc_get_status() == SC_ELABORATION)
		sc_start(SC_ZERO_TIME);
	const sc_time target = time_at_ns(target_ns);
	const uint64_t start = meter;
	// sc_start(t) would run every delta cycle at every time up to t in one
	// go, which a device re-notifying itself at one timestamp makes
	// endless. So: one delta cycle, or one hop of time to the next event
	// (which sc_start triggers at its end but leaves for the next delta
	// cycle), per kernel step; and no new kernel step once the step's work
	// budget is spent. The devices never see where a step stopped.
	for (unsigned used = 0; used < budget && meter - start < kStepWork; used++) {
		if (sc_pending_activity_at_current_time()) {
			sc_start(SC_ZERO_TIME);
			continue;
		}
		const sc_time now = sc_time_stamp();
		if (now >= target)
			break;
		sc_time hop = target - now;
		if (sc_pending_activity())
			hop = std::min(hop, sc_time_to_pending_activity());
		sc_start(hop);
	}
	const bool cut = work_left(target);
	count_step(meter - start, cut);
	return !cut;
}

uint64_t deadline_ns()
{
	using namespace sc_core;
	if (sc_get_status() == SC_ELABORATION)
		return 0; // never run yet: step now to finish elaboration
	if (!sc_pending_activity())
		return UINT64_MAX;
	// Rounded up: a step at the rounded-down time would find nothing to do.
	const uint64_t at = (sc_time_stamp() + sc_time_to_pending_activity()).value();
	return (at + ps_per_ns() - 1) / ps_per_ns();
}

uint64_t now_ns()
{
	return sc_core::sc_time_stamp().value() / ps_per_ns();
}

namespace
{
uint64_t host_ns; // latest host time noted; the kernel is global, so is this
}

void note_host_ns(uint64_t ns)
{
	host_ns = std::max(host_ns, ns);
}

uint64_t device_ns()
{
	return std::max(now_ns(), host_ns);
}

} // namespace devmemsim::sim

// libsystemc references sc_main from its own main(), which a host program
// that owns main() never calls. The model is driven through step_to().
extern "C" int sc_main(int, char **)
{
	return 1;
}
