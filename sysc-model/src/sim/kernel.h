// SPDX-License-Identifier: MIT
// The process's SystemC kernel, stepped by the host (QEMU's virtual clock).
#pragma once

#include <cstdint>

#include "devmemsim/devmemsim.h"

namespace devmemsim::sim
{

// Most kernel steps one step_to() call runs: one step is a delta cycle at
// the current time or one advance of time to the next event. Whatever the
// guest programs, a call returns after this much work, so the host's main
// loop keeps running in between (devmemsim.h, "Time").
constexpr unsigned kStepBudget = 1024;
// Work units (devmemsim.h, "Work budget") after which step_to() returns.
constexpr uint64_t kStepWork = DMS_STEP_WORK;

// The work meter: every unit of work a guest or peer can cause is charged
// where it happens (the fabric for each DMA transaction, the NIC for each
// frame, the GPU for its computation, the node for each MSI). Global, as
// the kernel is.
void charge(uint64_t units);
// A transfer or frame of len bytes: 1 + len / DMS_WORK_UNIT_BYTES.
inline void charge_bytes(uint64_t len)
{
	charge(1 + len / DMS_WORK_UNIT_BYTES);
}
// Units charged since the process started.
uint64_t work_meter();
// What step_to() saw (dms_work_stats' first four fields).
struct StepStats {
	uint64_t steps = 0, units = 0, max_step_units = 0, cut_steps = 0;
};
const StepStats &step_stats();
void reset_step_stats();

// Run the kernel toward now_ns of host time (earlier times are ignored),
// for at most budget kernel steps and about kStepWork units of work (it
// stops between kernel steps once they are spent). Returns false if it
// stopped early, with work still pending at simulated time <= now_ns.
bool step_to(uint64_t now_ns, unsigned budget = kStepBudget);
// Absolute host time (ns, rounded up) of the next pending activity, or
// UINT64_MAX. After a step that stopped early it is at most now_ns.
uint64_t deadline_ns();
// Current simulated time in ns (rounded down).
uint64_t now_ns();
// The host's time now (QEMU: the virtual clock at a register access).
// The kernel only advances when it has work, so between steps simulated
// time lags the host's; device clocks read device_ns() instead.
void note_host_ns(uint64_t ns);
// Monotonic device time in ns: the later of the simulated time and the
// last host time noted.
uint64_t device_ns();

} // namespace devmemsim::sim
