// SPDX-License-Identifier: MIT
#include "gpu_copy.h"

#include "devmemsim/gpu_regs.h"

namespace dms_sim
{

void GpuCopier::start()
{
	n_.gpu_write(DMS_GPU_REG_IRQ_MASK, DMS_GPU_IRQ_COPY_DONE | DMS_GPU_IRQ_ERROR);
}

void GpuCopier::copy(bool to_dev, uint64_t dev, uint64_t host, uint64_t len, Done done)
{
	jobs_.push_back({to_dev, dev, host, len, std::move(done)});
	start_next();
}

// Program the engine for the oldest job unless it runs one; the doorbell
// rings when the CPU work that queued it ends.
void GpuCopier::start_next()
{
	if (busy_ || jobs_.empty())
		return;
	busy_ = true;
	const Job &j = jobs_.front();
	n_.at_job_end([this, to_dev = j.to_dev, dev = j.dev, host = j.host, len = j.len] {
		n_.gpu_write(DMS_GPU_REG_COPY_DEV_LO, dev, 8);
		n_.gpu_write(DMS_GPU_REG_COPY_HOST_LO, host, 8);
		n_.gpu_write(DMS_GPU_REG_COPY_LEN_LO, len, 8);
		n_.gpu_write(DMS_GPU_REG_COPY_CTRL,
			     to_dev ? DMS_GPU_COPY_TO_DEV : DMS_GPU_COPY_TO_HOST);
		n_.gpu_write(DMS_GPU_REG_COPY_DOORBELL, 1);
	});
}

void GpuCopier::on_irq()
{
	n_.cpu_job(n_.events().now_ps(), [this] {
		n_.charge(irq_ps_);
		const uint32_t st = n_.gpu_read(DMS_GPU_REG_COPY_STATUS);
		n_.gpu_write(DMS_GPU_REG_IRQ_STATUS, n_.gpu_read(DMS_GPU_REG_IRQ_STATUS));
		if (!busy_ || (st & DMS_GPU_STATUS_BUSY) || !(st & DMS_GPU_STATUS_DONE))
			return;
		const bool ok = !(st & DMS_GPU_STATUS_ERROR);
		errors_ += !ok;
		jobs_done_++;
		Done done = std::move(jobs_.front().done);
		jobs_.pop_front();
		busy_ = false;
		done(ok);
		start_next();
	});
}

} // namespace dms_sim
