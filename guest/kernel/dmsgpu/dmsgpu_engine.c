// SPDX-License-Identifier: GPL-2.0
/*
 * dmsgpu engines: the copy engine (device memory <-> the host bounce
 * buffer) and the CRC32C engine (a device range, or a gather list read
 * from the bounce buffer). One job at a time, under gpu->engine_lock; the
 * job's end comes through the device's MSI-X vector.
 */
#include <linux/interrupt.h>
#include <linux/io-64-nonatomic-lo-hi.h>

#include <devmemsim/gpu_regs.h>

#include "dmsgpu.h"

struct dmsgpu_engine {
	const char *name;
	u32 status_reg;
	u32 doorbell_reg;
	u32 done_irq;
};

static const struct dmsgpu_engine dmsgpu_copy_engine = {
	.name = "copy",
	.status_reg = DMS_GPU_REG_COPY_STATUS,
	.doorbell_reg = DMS_GPU_REG_COPY_DOORBELL,
	.done_irq = DMS_GPU_IRQ_COPY_DONE,
};

static const struct dmsgpu_engine dmsgpu_crc_engine = {
	.name = "CRC",
	.status_reg = DMS_GPU_REG_CRC_STATUS,
	.doorbell_reg = DMS_GPU_REG_CRC_DOORBELL,
	.done_irq = DMS_GPU_IRQ_CRC_DONE,
};

static const char * const dmsgpu_err_names[] = {
	[DMS_GPU_ERR_NONE] = "no error code",
	[DMS_GPU_ERR_DEV_RANGE] = "device range beyond device memory",
	[DMS_GPU_ERR_HOST_DMA] = "host DMA fault",
	[DMS_GPU_ERR_BUSY] = "doorbell while busy",
	[DMS_GPU_ERR_BAD_LEN] = "zero length",
	[DMS_GPU_ERR_ENGINE] = "internal engine fault",
};

irqreturn_t dmsgpu_irq(int irq, void *data)
{
	struct dmsgpu *gpu = data;
	u32 status = readl(gpu->regs + DMS_GPU_REG_IRQ_STATUS);

	if (!status || status == DMS_REG_UNDEFINED)
		return IRQ_NONE;
	writel(status, gpu->regs + DMS_GPU_REG_IRQ_STATUS);
	atomic_or(status, &gpu->irq_events);
	wake_up(&gpu->engine_wq);
	return IRQ_HANDLED;
}

static const struct dmsgpu_engine *const dmsgpu_engines[] = {
	&dmsgpu_copy_engine,
	&dmsgpu_crc_engine,
};

/*
 * Jobs run one at a time under engine_lock, so an engine still busy here
 * runs a job that timed out. Such a job may still read or write the bounce
 * buffer (copy data, a CRC gather list): no new job starts, and the bounce
 * buffer stays untouched, until the device says every engine is idle.
 */
int dmsgpu_engines_idle(struct dmsgpu *gpu)
{
	const struct dmsgpu_engine *eng;
	u32 i, status;

	for (i = 0; i < ARRAY_SIZE(dmsgpu_engines); i++) {
		eng = dmsgpu_engines[i];
		status = readl(gpu->regs + eng->status_reg);
		if (status & DMS_GPU_STATUS_BUSY) {
			dev_err_ratelimited(&gpu->pdev->dev,
					    "%s engine is still busy with a job that timed out (status %#x)\n",
					    eng->name, status);
			return -EBUSY;
		}
	}
	return 0;
}

/* Check that no engine runs and forget @eng's old events. */
static int dmsgpu_engine_prepare(struct dmsgpu *gpu,
				 const struct dmsgpu_engine *eng)
{
	u32 events = eng->done_irq | DMS_GPU_IRQ_ERROR;
	int ret;

	ret = dmsgpu_engines_idle(gpu);
	if (ret)
		return ret;
	writel(events, gpu->regs + DMS_GPU_REG_IRQ_STATUS);
	atomic_andnot(events, &gpu->irq_events);
	return 0;
}

/* The end of a job the engine no longer runs: 0 or why it failed. */
static int dmsgpu_engine_result(struct dmsgpu *gpu,
				const struct dmsgpu_engine *eng, u32 status)
{
	u32 err;

	if (status & DMS_GPU_STATUS_ERROR) {
		err = (status & DMS_GPU_STATUS_ERR_MASK) >> DMS_GPU_STATUS_ERR_SHIFT;
		dev_err_ratelimited(&gpu->pdev->dev, "%s engine error %u (%s)\n",
				    eng->name, err,
				    err < ARRAY_SIZE(dmsgpu_err_names) ?
				    dmsgpu_err_names[err] : "unknown");
		return -EIO;
	}
	if (!(status & DMS_GPU_STATUS_DONE)) {
		dev_err_ratelimited(&gpu->pdev->dev,
				    "%s engine stopped with status %#x\n",
				    eng->name, status);
		return -EIO;
	}
	return 0;
}

/* Ring the doorbell of a programmed engine and wait for the job's end. */
static int dmsgpu_engine_run(struct dmsgpu *gpu, const struct dmsgpu_engine *eng)
{
	u32 events = eng->done_irq | DMS_GPU_IRQ_ERROR;
	long left;
	u32 status;

	writel(1, gpu->regs + eng->doorbell_reg);
	left = wait_event_timeout(gpu->engine_wq,
				  atomic_read(&gpu->irq_events) & events,
				  msecs_to_jiffies(DMSGPU_JOB_TIMEOUT_MS));
	status = readl(gpu->regs + eng->status_reg);
	if (status & DMS_GPU_STATUS_BUSY) {
		dev_err_ratelimited(&gpu->pdev->dev,
				    "%s engine timed out after %u ms (status %#x)\n",
				    eng->name, DMSGPU_JOB_TIMEOUT_MS, status);
		return -ETIMEDOUT;
	}
	if (!left)
		dev_warn_ratelimited(&gpu->pdev->dev,
				     "%s engine finished without an interrupt\n",
				     eng->name);
	return dmsgpu_engine_result(gpu, eng, status);
}

/* One copy-engine job between device memory at @dev and the bounce buffer. */
int dmsgpu_copy_job(struct dmsgpu *gpu, u64 dev, u64 len, bool to_dev)
{
	u64 done;
	int ret;

	ret = dmsgpu_engine_prepare(gpu, &dmsgpu_copy_engine);
	if (ret)
		return ret;
	lo_hi_writeq(dev, gpu->regs + DMS_GPU_REG_COPY_DEV_LO);
	lo_hi_writeq(gpu->bounce_dma, gpu->regs + DMS_GPU_REG_COPY_HOST_LO);
	lo_hi_writeq(len, gpu->regs + DMS_GPU_REG_COPY_LEN_LO);
	writel(to_dev ? DMS_GPU_COPY_TO_DEV : DMS_GPU_COPY_TO_HOST,
	       gpu->regs + DMS_GPU_REG_COPY_CTRL);
	ret = dmsgpu_engine_run(gpu, &dmsgpu_copy_engine);
	if (ret)
		return ret;
	done = lo_hi_readq(gpu->regs + DMS_GPU_REG_COPY_DONE_BYTES_LO);
	if (done != len) {
		dev_err_ratelimited(&gpu->pdev->dev,
				    "copy engine moved %llu of %llu bytes\n",
				    done, len);
		return -EIO;
	}
	return 0;
}

/* One CRC-engine job; *crc is the seed on entry, the result on return. */
int dmsgpu_crc_job(struct dmsgpu *gpu, u64 dev, u64 len, u32 *crc)
{
	int ret;

	ret = dmsgpu_engine_prepare(gpu, &dmsgpu_crc_engine);
	if (ret)
		return ret;
	lo_hi_writeq(dev, gpu->regs + DMS_GPU_REG_CRC_DEV_LO);
	lo_hi_writeq(len, gpu->regs + DMS_GPU_REG_CRC_LEN_LO);
	writel(*crc, gpu->regs + DMS_GPU_REG_CRC_SEED);
	ret = dmsgpu_engine_run(gpu, &dmsgpu_crc_engine);
	if (ret)
		return ret;
	*crc = readl(gpu->regs + DMS_GPU_REG_CRC_RESULT);
	return 0;
}

/*
 * One gather-mode CRC job over the @n entries already in the bounce
 * buffer; *crc is the seed on entry, the result on return.
 */
int dmsgpu_crc_list_job(struct dmsgpu *gpu, u32 n, u32 *crc)
{
	int ret;

	ret = dmsgpu_engine_prepare(gpu, &dmsgpu_crc_engine);
	if (ret)
		return ret;
	lo_hi_writeq(gpu->bounce_dma, gpu->regs + DMS_GPU_REG_CRC_LIST_LO);
	writel(n, gpu->regs + DMS_GPU_REG_CRC_LIST_COUNT);
	writel(*crc, gpu->regs + DMS_GPU_REG_CRC_SEED);
	ret = dmsgpu_engine_run(gpu, &dmsgpu_crc_engine);
	writel(0, gpu->regs + DMS_GPU_REG_CRC_LIST_COUNT);
	if (ret)
		return ret;
	*crc = readl(gpu->regs + DMS_GPU_REG_CRC_RESULT);
	return 0;
}
