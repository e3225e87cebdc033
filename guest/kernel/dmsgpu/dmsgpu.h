/* SPDX-License-Identifier: GPL-2.0 */
/*
 * dmsgpu: driver for the devmemsim GPU-like device (PCI 1af4:10f1).
 *
 * The device has memory behind BAR2, a copy engine (device memory <-> host
 * memory by DMA) and a CRC32C engine over device memory, both driven from
 * BAR0 and reporting completion through one MSI-X vector. The driver
 *   - manages device memory with a page-granular allocator and hands it to
 *     user space as dma-bufs (/dev/dmsgpuN, DMSGPU_IOCTL_ALLOC) that other
 *     devices can import: the mapping an importer gets holds bus addresses
 *     inside BAR2, so a NIC can DMA straight into device memory (devmem TCP);
 *   - lets user space mmap such a dma-buf (write-combined) and run the
 *     copy and CRC engines on it (DMSGPU_IOCTL_COPY, DMSGPU_IOCTL_CRC).
 * See guest/include/uapi/dmsgpu.h for the user API.
 *
 * Files: dmsgpu_main.c (PCI probe/remove, sysfs), dmsgpu_engine.c (the
 * copy and CRC engines), dmsgpu_dmabuf.c (the dma-buf exporter),
 * dmsgpu_cdev.c (/dev/dmsgpuN and its ioctls).
 *
 * Device removal (remove(), see dmsgpu_main.c), in this order:
 *   - short sections that reach the hardware or hand out device memory
 *     (attach, map, CPU fault, mmap, allocation) run inside an SRCU read
 *     section and check gpu->removed; remove() sets it and waits for them;
 *   - engine jobs run under engine_lock and check gpu->removed there; their
 *     wait for the device ends when it is set. remove() then takes the lock
 *     and turns off the device's interrupts and bus mastering, so nothing it
 *     can reach (the bounce buffer) is freed while it may still use it. No
 *     lock and no SRCU section is held across a user copy;
 *   - the buffers' CPU mappings are revoked (later accesses get SIGBUS) and
 *     importers that can be told (dma_buf_attach_revocable()) are told;
 *   - remove() waits until importers have unmapped device memory. Static
 *     importers such as devmem TCP cannot be told: their DMA goes on into
 *     BAR2 until they let go, and a PCI remove cannot fail, so remove()
 *     says what it waits for and waits (as vfio does for its users).
 * Buffers and open files can outlive the device (the driver data is
 * refcounted); their ioctls then fail with -ENODEV.
 */
#ifndef _DMSGPU_H_
#define _DMSGPU_H_

#include <linux/dma-buf.h>
#include <linux/kref.h>
#include <linux/miscdevice.h>
#include <linux/mutex.h>
#include <linux/pci.h>
#include <linux/sizes.h>
#include <linux/srcu.h>
#include <linux/wait.h>

/* Host bounce buffer of the copy engine; smaller if that much is not free. */
#define DMSGPU_BOUNCE_SIZE SZ_1M
/* CRC jobs are split so that each finishes well within the timeout. */
#define DMSGPU_CRC_CHUNK SZ_64M
#define DMSGPU_JOB_TIMEOUT_MS 10000
/* Largest alignment DMSGPU_IOCTL_ALLOC accepts (genalloc takes an int). */
#define DMSGPU_MAX_ALIGN SZ_1G
/* How long remove() waits for importers' unmaps before it says so. */
#define DMSGPU_UNMAP_WAIT_MS 2000
/* Then it waits in slices of this: a blocked unbind is not a hung task. */
#define DMSGPU_UNMAP_SLICE_MS 10000
/* How long an engine may take to stop once the driver stops its DMA. */
#define DMSGPU_STOP_TIMEOUT_MS 1000

struct dmsgpu {
	struct kref ref;		/* probe, open files, dma-bufs */
	struct pci_dev *pdev;
	void __iomem *regs;		/* BAR0 */
	phys_addr_t mem_phys;		/* CPU physical address of BAR2 */
	u64 mem_size;
	u32 hw_version;
	struct p2pdma_provider *provider; /* BAR2, for importers' mappings */
	struct gen_pool *pool;		/* device memory, by CPU physical address */
	atomic_t nr_bufs;
	struct list_head bufs;		/* struct dmsgpu_buf, under bufs_lock */
	struct mutex bufs_lock;
	atomic_t nr_maps;		/* importers' live DMA mappings */
	wait_queue_head_t unmap_wq;	/* woken when nr_maps drops */
	bool removed;			/* set once by remove() */
	int id;
	char name[16];
	struct miscdevice misc;

	/*
	 * One engine job at a time; the lock covers the registers and the
	 * bounce buffer, which a job that timed out may still use (see
	 * dmsgpu_engine.c). Held across no user copy.
	 */
	struct mutex engine_lock;
	wait_queue_head_t engine_wq;
	atomic_t irq_events;		/* IRQ_STATUS bits seen by the handler */
	void *bounce;
	dma_addr_t bounce_dma;
	size_t bounce_size;
};

/* An allocation of device memory, the private data of its dma-buf. */
struct dmsgpu_buf {
	struct dmsgpu *gpu;
	struct dma_buf *dmabuf;
	struct list_head node;		/* in gpu->bufs */
	struct list_head revoke_node;	/* dmsgpu_revoke_bufs()'s own list */
	u64 offset;			/* in device memory */
	size_t size;
};

extern struct srcu_struct dmsgpu_srcu;

/*
 * Enter a section that uses the hardware. Returns false, and leaves no
 * section to exit, when the device is gone.
 */
static inline bool dmsgpu_enter(struct dmsgpu *gpu, int *idx)
{
	*idx = srcu_read_lock(&dmsgpu_srcu);
	if (!READ_ONCE(gpu->removed))
		return true;
	srcu_read_unlock(&dmsgpu_srcu, *idx);
	return false;
}

static inline void dmsgpu_exit(int idx)
{
	srcu_read_unlock(&dmsgpu_srcu, idx);
}

/* dmsgpu_main.c */
void dmsgpu_put(struct dmsgpu *gpu);
u64 dmsgpu_mem_used(struct dmsgpu *gpu);

/* dmsgpu_engine.c */
struct dms_gpu_crc_range;

irqreturn_t dmsgpu_irq(int irq, void *data);
void dmsgpu_engines_shutdown(struct dmsgpu *gpu);
int dmsgpu_copy_job(struct dmsgpu *gpu, u64 dev, void *data, u64 len,
		    bool to_dev);
int dmsgpu_crc_job(struct dmsgpu *gpu, u64 dev, u64 len, u32 *crc);
int dmsgpu_crc_list_job(struct dmsgpu *gpu,
			const struct dms_gpu_crc_range *list, u32 n, u32 *crc);

/* dmsgpu_dmabuf.c */
struct dma_buf *dmsgpu_buf_export(struct dmsgpu *gpu, u64 size, u64 align);
struct dmsgpu_buf *dmsgpu_buf_get(struct dmsgpu *gpu, int fd, u64 offset,
				  u64 len, struct dma_buf **dmabuf);
void dmsgpu_revoke_bufs(struct dmsgpu *gpu);

/* dmsgpu_cdev.c */
extern const struct file_operations dmsgpu_fops;

#endif /* _DMSGPU_H_ */
