// SPDX-License-Identifier: MIT
// The host software that drives one GPU's copy engine: jobs (device
// memory <-> host memory, through the PCIe fabric) queue here and go to the
// engine one at a time, as a GPU runtime's copy stream does; the engine's
// completion interrupt (cpu.irq_ns of CPU time) runs each job's callback
// and starts the next. Used by both ends of a bounce stream: the sender
// copies payload out of GPU memory, the receiver into it.
#pragma once

#include <cstdint>
#include <deque>
#include <functional>

#include "sim_host.h"

namespace dms_sim
{

class GpuCopier
{
public:
	// ok: the engine finished without an error.
	using Done = std::function<void(bool ok)>;
	GpuCopier(SimNode &n, uint64_t irq_ps) : n_(n), irq_ps_(irq_ps) {}
	// Enable the engine's interrupts.
	void start();
	// Inside a CPU job: queue a copy of len bytes between the device memory
	// offset dev and the host bus address host; done runs inside the CPU
	// job that handles its completion.
	void copy(bool to_dev, uint64_t dev, uint64_t host, uint64_t len, Done done);
	void on_irq();
	bool idle() const { return jobs_.empty(); }
	uint64_t jobs() const { return jobs_done_; }
	uint64_t errors() const { return errors_; }

private:
	struct Job {
		bool to_dev;
		uint64_t dev, host, len;
		Done done;
	};
	void start_next();

	SimNode &n_;
	uint64_t irq_ps_;
	std::deque<Job> jobs_;
	bool busy_ = false;
	uint64_t jobs_done_ = 0, errors_ = 0;
};

} // namespace dms_sim
