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
 * Device removal: every path that touches the hardware runs inside an SRCU
 * read section and checks gpu->removed; remove() sets it and waits for
 * them. Buffers can outlive the device (the driver data is refcounted).
 * Their CPU mappings are revoked (later accesses get SIGBUS), importers
 * that can be told (dynamic, with invalidate_mappings) are told, and new
 * attachments and mappings are refused. Static importers such as devmem
 * TCP cannot be told: remove() waits a while for them to unmap and says
 * so if they do not.
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
/* How long remove() waits for importers to give their mappings back. */
#define DMSGPU_UNMAP_WAIT_MS 2000

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
	bool removed;			/* under dmsgpu_srcu */
	int id;
	char name[16];
	struct miscdevice misc;

	/*
	 * One engine job at a time; the lock covers the bounce buffer too,
	 * which a job that timed out may still use: see dmsgpu_engines_idle().
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
irqreturn_t dmsgpu_irq(int irq, void *data);
int dmsgpu_engines_idle(struct dmsgpu *gpu);
int dmsgpu_copy_job(struct dmsgpu *gpu, u64 dev, u64 len, bool to_dev);
int dmsgpu_crc_job(struct dmsgpu *gpu, u64 dev, u64 len, u32 *crc);
int dmsgpu_crc_list_job(struct dmsgpu *gpu, u32 n, u32 *crc);

/* dmsgpu_dmabuf.c */
struct dma_buf *dmsgpu_buf_export(struct dmsgpu *gpu, u64 size, u64 align);
struct dmsgpu_buf *dmsgpu_buf_get(struct dmsgpu *gpu, int fd, u64 offset,
				  u64 len, struct dma_buf **dmabuf);
void dmsgpu_revoke_bufs(struct dmsgpu *gpu);

/* dmsgpu_cdev.c */
extern const struct file_operations dmsgpu_fops;

#endif /* _DMSGPU_H_ */
