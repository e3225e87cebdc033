// SPDX-License-Identifier: GPL-2.0
/*
 * dmsgpu engines: the copy engine (device memory <-> the host bounce
 * buffer) and the CRC32C engine (a device range, or a gather list read
 * from the bounce buffer). One job at a time, each under gpu->engine_lock
 * from programming to result; the job's end comes through the device's
 * MSI-X vector. Callers pass their data in kernel memory: the lock is never
 * held across a user copy, which may take as long as user space wants.
 */
#include <linux/interrupt.h>
#include <linux/io-64-nonatomic-lo-hi.h>
#include <linux/iopoll.h>
#include <linux/string.h>

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

static u32 dmsgpu_engines_busy(struct dmsgpu *gpu)
{
	u32 i, busy = 0;

	for (i = 0; i < ARRAY_SIZE(dmsgpu_engines); i++)
		busy |= readl(gpu->regs + dmsgpu_engines[i]->status_reg) &
			DMS_GPU_STATUS_BUSY;
	return busy;
}

/* Wait, a bounded time, for both engines to be idle: 0 or -ETIMEDOUT. */
static int dmsgpu_engines_wait_idle(struct dmsgpu *gpu)
{
	u32 busy;

	return readx_poll_timeout(dmsgpu_engines_busy, gpu, busy, !busy,
				  USEC_PER_MSEC, DMSGPU_STOP_TIMEOUT_MS * USEC_PER_MSEC);
}

/*
 * Stop a job the driver gave up on. The device has no abort register, but
 * with bus mastering off it issues no DMA, and a copy job (or a CRC
 * gather-list read) then ends with a DMA fault at its next transfer. A job
 * that does not end keeps the engines and the bounce buffer to itself: no
 * job starts until the device says both engines are idle
 * (dmsgpu_engines_idle()).
 */
static void dmsgpu_engines_halt(struct dmsgpu *gpu)
{
	pci_clear_master(gpu->pdev);
	if (dmsgpu_engines_wait_idle(gpu))
		dev_err(&gpu->pdev->dev,
			"an engine stays busy with bus mastering off; no job starts until it is idle\n");
	pci_set_master(gpu->pdev);
}

/*
 * Jobs run one at a time under engine_lock, so an engine still busy here
 * runs a job that timed out and did not stop. Such a job may still read or
 * write the bounce buffer (copy data, a CRC gather list): no new job
 * starts, and the bounce buffer stays untouched, until the device says
 * every engine is idle.
 */
static int dmsgpu_engines_idle(struct dmsgpu *gpu)
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

/*
 * Take the engines for one job: engine_lock held, the device not removed
 * and no job running. remove() sets gpu->removed before it takes the lock.
 */
static int dmsgpu_engines_get(struct dmsgpu *gpu)
{
	int ret;

	if (mutex_lock_killable(&gpu->engine_lock))
		return -EINTR;
	ret = READ_ONCE(gpu->removed) ? -ENODEV : dmsgpu_engines_idle(gpu);
	if (ret)
		mutex_unlock(&gpu->engine_lock);
	return ret;
}

static void dmsgpu_engines_put(struct dmsgpu *gpu)
{
	mutex_unlock(&gpu->engine_lock);
}

/*
 * remove(), after setting gpu->removed: end the wait of a job in flight,
 * wait for it to leave, then silence the device and stop its DMA before
 * devres frees the bounce buffer and the interrupt. Clearing bus mastering
 * is a non-posted config write: the device's earlier writes have landed
 * when it completes, and it starts no other request after it.
 */
void dmsgpu_engines_shutdown(struct dmsgpu *gpu)
{
	wake_up_all(&gpu->engine_wq);
	mutex_lock(&gpu->engine_lock);
	writel(0, gpu->regs + DMS_GPU_REG_IRQ_MASK);
	pci_clear_master(gpu->pdev);
	if (dmsgpu_engines_wait_idle(gpu))
		dev_warn(&gpu->pdev->dev,
			 "an engine is still busy at removal; with bus mastering off it cannot reach host memory\n");
	mutex_unlock(&gpu->engine_lock);
}

/* Forget @eng's old events before its doorbell. */
static void dmsgpu_engine_prepare(struct dmsgpu *gpu,
				  const struct dmsgpu_engine *eng)
{
	u32 events = eng->done_irq | DMS_GPU_IRQ_ERROR;

	writel(events, gpu->regs + DMS_GPU_REG_IRQ_STATUS);
	atomic_andnot(events, &gpu->irq_events);
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

/*
 * Ring the doorbell of a programmed engine and wait for the job's end, or
 * for remove(), which stops the engines itself.
 */
static int dmsgpu_engine_run(struct dmsgpu *gpu, const struct dmsgpu_engine *eng)
{
	u32 events = eng->done_irq | DMS_GPU_IRQ_ERROR;
	long left;
	u32 status;

	writel(1, gpu->regs + eng->doorbell_reg);
	left = wait_event_timeout(gpu->engine_wq,
				  (atomic_read(&gpu->irq_events) & events) ||
				  READ_ONCE(gpu->removed),
				  msecs_to_jiffies(DMSGPU_JOB_TIMEOUT_MS));
	if (READ_ONCE(gpu->removed))
		return -ENODEV;
	status = readl(gpu->regs + eng->status_reg);
	if (status & DMS_GPU_STATUS_BUSY) {
		dev_err_ratelimited(&gpu->pdev->dev,
				    "%s engine timed out after %u ms (status %#x)\n",
				    eng->name, DMSGPU_JOB_TIMEOUT_MS, status);
		dmsgpu_engines_halt(gpu);
		return -ETIMEDOUT;
	}
	if (!left)
		dev_warn_ratelimited(&gpu->pdev->dev,
				     "%s engine finished without an interrupt\n",
				     eng->name);
	return dmsgpu_engine_result(gpu, eng, status);
}

/*
 * One copy-engine job between device memory at @dev and @len bytes at
 * @data (at most the bounce buffer's size), through the bounce buffer.
 */
int dmsgpu_copy_job(struct dmsgpu *gpu, u64 dev, void *data, u64 len,
		    bool to_dev)
{
	u64 done;
	int ret;

	ret = dmsgpu_engines_get(gpu);
	if (ret)
		return ret;
	if (to_dev)
		memcpy(gpu->bounce, data, len);
	dmsgpu_engine_prepare(gpu, &dmsgpu_copy_engine);
	lo_hi_writeq(dev, gpu->regs + DMS_GPU_REG_COPY_DEV_LO);
	lo_hi_writeq(gpu->bounce_dma, gpu->regs + DMS_GPU_REG_COPY_HOST_LO);
	lo_hi_writeq(len, gpu->regs + DMS_GPU_REG_COPY_LEN_LO);
	writel(to_dev ? DMS_GPU_COPY_TO_DEV : DMS_GPU_COPY_TO_HOST,
	       gpu->regs + DMS_GPU_REG_COPY_CTRL);
	ret = dmsgpu_engine_run(gpu, &dmsgpu_copy_engine);
	if (ret)
		goto out;
	done = lo_hi_readq(gpu->regs + DMS_GPU_REG_COPY_DONE_BYTES_LO);
	if (done != len) {
		dev_err_ratelimited(&gpu->pdev->dev,
				    "copy engine moved %llu of %llu bytes\n",
				    done, len);
		ret = -EIO;
		goto out;
	}
	if (!to_dev)
		memcpy(data, gpu->bounce, len);
out:
	dmsgpu_engines_put(gpu);
	return ret;
}

/* One CRC-engine job; *crc is the seed on entry, the result on return. */
int dmsgpu_crc_job(struct dmsgpu *gpu, u64 dev, u64 len, u32 *crc)
{
	int ret;

	ret = dmsgpu_engines_get(gpu);
	if (ret)
		return ret;
	dmsgpu_engine_prepare(gpu, &dmsgpu_crc_engine);
	lo_hi_writeq(dev, gpu->regs + DMS_GPU_REG_CRC_DEV_LO);
	lo_hi_writeq(len, gpu->regs + DMS_GPU_REG_CRC_LEN_LO);
	writel(*crc, gpu->regs + DMS_GPU_REG_CRC_SEED);
	ret = dmsgpu_engine_run(gpu, &dmsgpu_crc_engine);
	if (!ret)
		*crc = readl(gpu->regs + DMS_GPU_REG_CRC_RESULT);
	dmsgpu_engines_put(gpu);
	return ret;
}

/*
 * One gather-mode CRC job over the @n entries of @list (at most the
 * bounce buffer's worth), which goes to the device through the bounce
 * buffer; *crc is the seed on entry, the result on return.
 */
int dmsgpu_crc_list_job(struct dmsgpu *gpu,
			const struct dms_gpu_crc_range *list, u32 n, u32 *crc)
{
	int ret;

	ret = dmsgpu_engines_get(gpu);
	if (ret)
		return ret;
	memcpy(gpu->bounce, list, n * sizeof(*list));
	dmsgpu_engine_prepare(gpu, &dmsgpu_crc_engine);
	lo_hi_writeq(gpu->bounce_dma, gpu->regs + DMS_GPU_REG_CRC_LIST_LO);
	writel(n, gpu->regs + DMS_GPU_REG_CRC_LIST_COUNT);
	writel(*crc, gpu->regs + DMS_GPU_REG_CRC_SEED);
	ret = dmsgpu_engine_run(gpu, &dmsgpu_crc_engine);
	writel(0, gpu->regs + DMS_GPU_REG_CRC_LIST_COUNT);
	if (!ret)
		*crc = readl(gpu->regs + DMS_GPU_REG_CRC_RESULT);
	dmsgpu_engines_put(gpu);
	return ret;
}
