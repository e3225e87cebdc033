// SPDX-License-Identifier: GPL-2.0
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
 * Device removal: every path that touches the hardware runs inside an SRCU
 * read section and checks gpu->removed; remove() sets it and waits for
 * them. Buffers can outlive the device (the driver data is refcounted),
 * but their CPU mappings and importers' DMA mappings cannot be revoked:
 * static importers such as devmem TCP have no way to be told.
 */
#include <linux/dma-buf.h>
#include <linux/dma-buf-mapping.h>
#include <linux/dma-mapping.h>
#include <linux/file.h>
#include <linux/genalloc.h>
#include <linux/idr.h>
#include <linux/interrupt.h>
#include <linux/io-64-nonatomic-lo-hi.h>
#include <linux/kref.h>
#include <linux/miscdevice.h>
#include <linux/mm.h>
#include <linux/module.h>
#include <linux/pci.h>
#include <linux/pci-p2pdma.h>
#include <linux/sizes.h>
#include <linux/srcu.h>
#include <linux/uaccess.h>
#include <linux/wait.h>

#include <devmemsim/gpu_regs.h>
#include <devmemsim/pci_ids.h>
#include <uapi/dmsgpu.h>

/* Host bounce buffer of the copy engine; smaller if that much is not free. */
#define DMSGPU_BOUNCE_SIZE SZ_1M
/* CRC jobs are split so that each finishes well within the timeout. */
#define DMSGPU_CRC_CHUNK SZ_64M
#define DMSGPU_JOB_TIMEOUT_MS 10000
/* Largest alignment DMSGPU_IOCTL_ALLOC accepts (genalloc takes an int). */
#define DMSGPU_MAX_ALIGN SZ_1G

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
	bool removed;			/* under dmsgpu_srcu */
	int id;
	char name[16];
	struct miscdevice misc;

	/* One engine job at a time; the lock covers the bounce buffer too. */
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
	u64 offset;			/* in device memory */
	size_t size;
};

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
};

DEFINE_STATIC_SRCU(dmsgpu_srcu);
static DEFINE_IDA(dmsgpu_ida);

static void dmsgpu_free(struct kref *ref)
{
	struct dmsgpu *gpu = container_of(ref, struct dmsgpu, ref);

	if (gpu->pool)
		gen_pool_destroy(gpu->pool);
	pci_dev_put(gpu->pdev);
	kfree(gpu);
}

static void dmsgpu_put(struct dmsgpu *gpu)
{
	kref_put(&gpu->ref, dmsgpu_free);
}

/*
 * Enter a section that uses the hardware. Returns false, and leaves no
 * section to exit, when the device is gone.
 */
static bool dmsgpu_enter(struct dmsgpu *gpu, int *idx)
{
	*idx = srcu_read_lock(&dmsgpu_srcu);
	if (!READ_ONCE(gpu->removed))
		return true;
	srcu_read_unlock(&dmsgpu_srcu, *idx);
	return false;
}

static void dmsgpu_exit(int idx)
{
	srcu_read_unlock(&dmsgpu_srcu, idx);
}

static u64 dmsgpu_mem_used(struct dmsgpu *gpu)
{
	return gpu->mem_size - gen_pool_avail(gpu->pool);
}

/* --- engines ------------------------------------------------------------ */

static irqreturn_t dmsgpu_irq(int irq, void *data)
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

/*
 * Make sure the engine is idle (a job that timed out may still run and, for
 * the copy engine, still use the bounce buffer) and forget its old events.
 */
static int dmsgpu_engine_prepare(struct dmsgpu *gpu,
				 const struct dmsgpu_engine *eng)
{
	u32 events = eng->done_irq | DMS_GPU_IRQ_ERROR;
	u32 status = readl(gpu->regs + eng->status_reg);

	if (status & DMS_GPU_STATUS_BUSY) {
		dev_err(&gpu->pdev->dev, "%s engine is still busy (status %#x)\n",
			eng->name, status);
		return -EBUSY;
	}
	writel(events, gpu->regs + DMS_GPU_REG_IRQ_STATUS);
	atomic_andnot(events, &gpu->irq_events);
	return 0;
}

/* Ring the doorbell of a programmed engine and wait for the job's end. */
static int dmsgpu_engine_run(struct dmsgpu *gpu, const struct dmsgpu_engine *eng)
{
	u32 events = eng->done_irq | DMS_GPU_IRQ_ERROR;
	long left;
	u32 status, err;

	writel(1, gpu->regs + eng->doorbell_reg);
	left = wait_event_timeout(gpu->engine_wq,
				  atomic_read(&gpu->irq_events) & events,
				  msecs_to_jiffies(DMSGPU_JOB_TIMEOUT_MS));
	status = readl(gpu->regs + eng->status_reg);
	if (status & DMS_GPU_STATUS_BUSY) {
		dev_err(&gpu->pdev->dev,
			"%s engine timed out after %u ms (status %#x)\n",
			eng->name, DMSGPU_JOB_TIMEOUT_MS, status);
		return -ETIMEDOUT;
	}
	if (!left)
		dev_warn_ratelimited(&gpu->pdev->dev,
				     "%s engine finished without an interrupt\n",
				     eng->name);
	if (status & DMS_GPU_STATUS_ERROR) {
		err = (status & DMS_GPU_STATUS_ERR_MASK) >> DMS_GPU_STATUS_ERR_SHIFT;
		dev_err(&gpu->pdev->dev, "%s engine error %u (%s)\n", eng->name,
			err, err < ARRAY_SIZE(dmsgpu_err_names) ?
			dmsgpu_err_names[err] : "unknown");
		return -EIO;
	}
	if (!(status & DMS_GPU_STATUS_DONE)) {
		dev_err(&gpu->pdev->dev, "%s engine stopped with status %#x\n",
			eng->name, status);
		return -EIO;
	}
	return 0;
}

/* One copy-engine job between device memory at @dev and the bounce buffer. */
static int dmsgpu_copy_job(struct dmsgpu *gpu, u64 dev, u64 len, bool to_dev)
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
		dev_err(&gpu->pdev->dev, "copy engine moved %llu of %llu bytes\n",
			done, len);
		return -EIO;
	}
	return 0;
}

/* One CRC-engine job; *crc is the seed on entry, the result on return. */
static int dmsgpu_crc_job(struct dmsgpu *gpu, u64 dev, u64 len, u32 *crc)
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
static int dmsgpu_crc_list_job(struct dmsgpu *gpu, u32 n, u32 *crc)
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

/* --- dma-buf exporter ------------------------------------------------- */

/*
 * No .attach and no .pin: the memory never moves, so every importer is
 * accepted, including static ones (dma_buf_attach(), attach->peer2peer
 * false) like devmem TCP and io_uring zcrx. Whether the importing device
 * can reach BAR2 is decided when it maps the buffer.
 */
static struct sg_table *dmsgpu_map_dma_buf(struct dma_buf_attachment *attach,
					   enum dma_data_direction dir)
{
	struct dmsgpu_buf *buf = attach->dmabuf->priv;
	struct dmsgpu *gpu = buf->gpu;
	struct phys_vec range = {
		.paddr = gpu->mem_phys + buf->offset,
		.len = buf->size,
	};
	struct sg_table *sgt;
	int idx;

	if (!dmsgpu_enter(gpu, &idx))
		return ERR_PTR(-ENODEV);
	if (pci_p2pdma_distance(gpu->pdev, attach->dev, true) < 0) {
		dev_err(&gpu->pdev->dev,
			"cannot map device memory for %s: no peer-to-peer DMA path between the devices\n",
			dev_name(attach->dev));
		sgt = ERR_PTR(-EREMOTEIO);
		goto out;
	}
	/*
	 * Bus addresses when the path stays below a switch
	 * (PCI_P2PDMA_MAP_BUS_ADDR), else a dma_map_resource()-style mapping
	 * for the importer (through an allow-listed host bridge).
	 */
	sgt = dma_buf_phys_vec_to_sgt(attach, gpu->provider, &range, 1,
				      buf->size, dir);
	if (IS_ERR(sgt))
		dev_err(&gpu->pdev->dev, "cannot map device memory for %s: %pe\n",
			dev_name(attach->dev), sgt);
out:
	dmsgpu_exit(idx);
	return sgt;
}

static void dmsgpu_unmap_dma_buf(struct dma_buf_attachment *attach,
				 struct sg_table *sgt,
				 enum dma_data_direction dir)
{
	dma_buf_free_sgt(attach, sgt, dir);
}

static int dmsgpu_dmabuf_mmap(struct dma_buf *dmabuf, struct vm_area_struct *vma)
{
	struct dmsgpu_buf *buf = dmabuf->priv;
	struct dmsgpu *gpu = buf->gpu;
	int idx, ret;

	if (!dmsgpu_enter(gpu, &idx))
		return -ENODEV;
	vma->vm_page_prot = pgprot_writecombine(vma->vm_page_prot);
	ret = vm_iomap_memory(vma, gpu->mem_phys + buf->offset, buf->size);
	dmsgpu_exit(idx);
	return ret;
}

static void dmsgpu_dmabuf_release(struct dma_buf *dmabuf)
{
	struct dmsgpu_buf *buf = dmabuf->priv;
	struct dmsgpu *gpu = buf->gpu;

	gen_pool_free(gpu->pool, gpu->mem_phys + buf->offset, buf->size);
	atomic_dec(&gpu->nr_bufs);
	kfree(buf);
	dmsgpu_put(gpu);
}

static const struct dma_buf_ops dmsgpu_dmabuf_ops = {
	.map_dma_buf = dmsgpu_map_dma_buf,
	.unmap_dma_buf = dmsgpu_unmap_dma_buf,
	.mmap = dmsgpu_dmabuf_mmap,
	.release = dmsgpu_dmabuf_release,
};

/*
 * Look up a dma-buf of this device and check that [offset, offset + len)
 * lies inside it. The caller puts buf's dma-buf (returned in *dmabuf).
 */
static struct dmsgpu_buf *dmsgpu_buf_get(struct dmsgpu *gpu, int fd,
					 u64 offset, u64 len,
					 struct dma_buf **dmabuf)
{
	struct dmsgpu_buf *buf;

	*dmabuf = dma_buf_get(fd);
	if (IS_ERR(*dmabuf))
		return ERR_CAST(*dmabuf);
	buf = (*dmabuf)->priv;
	if ((*dmabuf)->ops != &dmsgpu_dmabuf_ops || buf->gpu != gpu ||
	    offset > buf->size || len > buf->size - offset) {
		dma_buf_put(*dmabuf);
		return ERR_PTR(-EINVAL);
	}
	return buf;
}

/*
 * Start an engine ioctl on [@offset, @offset + @len) of dma-buf @fd: the
 * buffer, with a reference on its dma-buf and the engine lock held;
 * dmsgpu_engine_end() gives both back.
 */
static struct dmsgpu_buf *dmsgpu_engine_begin(struct dmsgpu *gpu, int fd,
					      u64 offset, u64 len,
					      struct dma_buf **dmabuf)
{
	struct dmsgpu_buf *buf;

	buf = dmsgpu_buf_get(gpu, fd, offset, len, dmabuf);
	if (IS_ERR(buf))
		return buf;
	if (mutex_lock_interruptible(&gpu->engine_lock)) {
		dma_buf_put(*dmabuf);
		return ERR_PTR(-EINTR);
	}
	return buf;
}

static void dmsgpu_engine_end(struct dmsgpu *gpu, struct dma_buf *dmabuf)
{
	mutex_unlock(&gpu->engine_lock);
	dma_buf_put(dmabuf);
}

/* --- ioctls ----------------------------------------------------------- */

static int dmsgpu_ioctl_info(struct dmsgpu *gpu, void __user *uarg)
{
	struct dmsgpu_info info = {
		.mem_size = gpu->mem_size,
		.mem_used = dmsgpu_mem_used(gpu),
		.hw_version = gpu->hw_version,
		.buffers = atomic_read(&gpu->nr_bufs),
	};

	info.mem_free = info.mem_size - info.mem_used;
	return copy_to_user(uarg, &info, sizeof(info)) ? -EFAULT : 0;
}

static int dmsgpu_ioctl_alloc(struct dmsgpu *gpu, void __user *uarg)
{
	DEFINE_DMA_BUF_EXPORT_INFO(exp);
	struct genpool_data_align align;
	struct dmsgpu_alloc arg;
	struct dmsgpu_buf *buf;
	struct dma_buf *dmabuf;
	unsigned long addr;
	int fd;

	if (copy_from_user(&arg, uarg, sizeof(arg)))
		return -EFAULT;
	if (!arg.size || arg.flags || arg.align > DMSGPU_MAX_ALIGN ||
	    (arg.align && !is_power_of_2(arg.align)))
		return -EINVAL;
	if (arg.size > gpu->mem_size)
		return -ENOMEM;
	arg.size = PAGE_ALIGN(arg.size);
	align.align = max_t(u64, arg.align, PAGE_SIZE);

	buf = kzalloc_obj(*buf);
	if (!buf)
		return -ENOMEM;
	addr = gen_pool_alloc_algo(gpu->pool, arg.size,
				   gen_pool_first_fit_align, &align);
	if (!addr) {
		kfree(buf);
		return -ENOMEM;
	}
	buf->gpu = gpu;
	buf->offset = addr - gpu->mem_phys;
	buf->size = arg.size;

	exp.ops = &dmsgpu_dmabuf_ops;
	exp.size = buf->size;
	exp.flags = O_RDWR;
	exp.priv = buf;
	dmabuf = dma_buf_export(&exp);
	if (IS_ERR(dmabuf)) {
		gen_pool_free(gpu->pool, addr, buf->size);
		kfree(buf);
		return PTR_ERR(dmabuf);
	}
	/* From here on the dma-buf's release frees buf and the memory. */
	kref_get(&gpu->ref);
	atomic_inc(&gpu->nr_bufs);

	fd = get_unused_fd_flags(O_CLOEXEC);
	if (fd < 0) {
		dma_buf_put(dmabuf);
		return fd;
	}
	arg.offset = buf->offset;
	arg.fd = fd;
	if (copy_to_user(uarg, &arg, sizeof(arg))) {
		put_unused_fd(fd);
		dma_buf_put(dmabuf);
		return -EFAULT;
	}
	dma_buf_fd_install(dmabuf, fd);
	return 0;
}

static int dmsgpu_ioctl_copy(struct dmsgpu *gpu, void __user *uarg)
{
	struct dmsgpu_copy arg;
	struct dmsgpu_buf *buf;
	struct dma_buf *dmabuf;
	u64 dev, left, len;
	u8 __user *uptr;
	int ret = 0;
	bool to_dev;

	if (copy_from_user(&arg, uarg, sizeof(arg)))
		return -EFAULT;
	if (arg.direction != DMSGPU_COPY_TO_DEVICE &&
	    arg.direction != DMSGPU_COPY_FROM_DEVICE)
		return -EINVAL;
	to_dev = arg.direction == DMSGPU_COPY_TO_DEVICE;
	buf = dmsgpu_engine_begin(gpu, arg.fd, arg.offset, arg.len, &dmabuf);
	if (IS_ERR(buf))
		return PTR_ERR(buf);

	dev = buf->offset + arg.offset;
	uptr = u64_to_user_ptr(arg.user_ptr);
	for (left = arg.len; left; left -= len) {
		len = min_t(u64, left, gpu->bounce_size);
		if (fatal_signal_pending(current)) {
			ret = -EINTR;
			break;
		}
		if (to_dev && copy_from_user(gpu->bounce, uptr, len)) {
			ret = -EFAULT;
			break;
		}
		ret = dmsgpu_copy_job(gpu, dev, len, to_dev);
		if (ret)
			break;
		if (!to_dev && copy_to_user(uptr, gpu->bounce, len)) {
			ret = -EFAULT;
			break;
		}
		dev += len;
		uptr += len;
	}
	dmsgpu_engine_end(gpu, dmabuf);
	return ret;
}

static int dmsgpu_ioctl_crc(struct dmsgpu *gpu, void __user *uarg)
{
	struct dmsgpu_crc arg;
	struct dmsgpu_buf *buf;
	struct dma_buf *dmabuf;
	u64 dev, left, len;
	u32 crc;
	int ret = 0;

	if (copy_from_user(&arg, uarg, sizeof(arg)))
		return -EFAULT;
	if (arg.flags)
		return -EINVAL;
	buf = dmsgpu_engine_begin(gpu, arg.fd, arg.offset, arg.len, &dmabuf);
	if (IS_ERR(buf))
		return PTR_ERR(buf);

	dev = buf->offset + arg.offset;
	crc = arg.seed;
	for (left = arg.len; left; left -= len) {
		len = min_t(u64, left, DMSGPU_CRC_CHUNK);
		if (fatal_signal_pending(current)) {
			ret = -EINTR;
			break;
		}
		ret = dmsgpu_crc_job(gpu, dev, len, &crc);
		if (ret)
			break;
		dev += len;
	}
	dmsgpu_engine_end(gpu, dmabuf);
	if (ret)
		return ret;
	arg.crc = crc;
	return copy_to_user(uarg, &arg, sizeof(arg)) ? -EFAULT : 0;
}

/*
 * The user's ranges go into the bounce buffer as the device's gather list,
 * translated to device-memory offsets, at most one bounce buffer (and
 * DMSGPU_CRC_CHUNK bytes of data) per engine job.
 */
static int dmsgpu_ioctl_crc_list(struct dmsgpu *gpu, void __user *uarg)
{
	struct dms_gpu_crc_range *list = gpu->bounce;
	u32 per_job = min_t(u32, DMS_GPU_CRC_LIST_MAX,
			    gpu->bounce_size / sizeof(*list));
	struct dmsgpu_range __user *uranges;
	struct dmsgpu_crc_list arg;
	struct dmsgpu_range r;
	struct dmsgpu_buf *buf;
	struct dma_buf *dmabuf;
	u32 i, n = 0, crc;
	u64 bytes = 0;
	int ret = 0;

	if (copy_from_user(&arg, uarg, sizeof(arg)))
		return -EFAULT;
	if (arg.flags || arg.reserved || !arg.count ||
	    arg.count > DMSGPU_CRC_LIST_MAX)
		return -EINVAL;
	buf = dmsgpu_engine_begin(gpu, arg.fd, 0, 0, &dmabuf);
	if (IS_ERR(buf))
		return PTR_ERR(buf);

	uranges = u64_to_user_ptr(arg.ranges);
	crc = arg.seed;
	for (i = 0; i < arg.count; i++) {
		if (copy_from_user(&r, &uranges[i], sizeof(r))) {
			ret = -EFAULT;
			break;
		}
		if (!r.len || r.len > DMSGPU_CRC_CHUNK || r.offset > buf->size ||
		    r.len > buf->size - r.offset) {
			ret = -EINVAL;
			break;
		}
		if (n == per_job || bytes + r.len > DMSGPU_CRC_CHUNK) {
			ret = dmsgpu_crc_list_job(gpu, n, &crc);
			if (ret)
				break;
			n = 0;
			bytes = 0;
		}
		list[n].dev = cpu_to_le64(buf->offset + r.offset);
		list[n].len = cpu_to_le64(r.len);
		n++;
		bytes += r.len;
		if (fatal_signal_pending(current)) {
			ret = -EINTR;
			break;
		}
	}
	if (!ret)
		ret = dmsgpu_crc_list_job(gpu, n, &crc);
	dmsgpu_engine_end(gpu, dmabuf);
	if (ret)
		return ret;
	arg.crc = crc;
	return copy_to_user(uarg, &arg, sizeof(arg)) ? -EFAULT : 0;
}

static long dmsgpu_ioctl(struct file *file, unsigned int cmd, unsigned long arg)
{
	struct dmsgpu *gpu = file->private_data;
	void __user *uarg = (void __user *)arg;
	int idx;
	long ret;

	if (!dmsgpu_enter(gpu, &idx))
		return -ENODEV;
	switch (cmd) {
	case DMSGPU_IOCTL_INFO:
		ret = dmsgpu_ioctl_info(gpu, uarg);
		break;
	case DMSGPU_IOCTL_ALLOC:
		ret = dmsgpu_ioctl_alloc(gpu, uarg);
		break;
	case DMSGPU_IOCTL_COPY:
		ret = dmsgpu_ioctl_copy(gpu, uarg);
		break;
	case DMSGPU_IOCTL_CRC:
		ret = dmsgpu_ioctl_crc(gpu, uarg);
		break;
	case DMSGPU_IOCTL_CRC_LIST:
		ret = dmsgpu_ioctl_crc_list(gpu, uarg);
		break;
	default:
		ret = -ENOTTY;
	}
	dmsgpu_exit(idx);
	return ret;
}

static int dmsgpu_open(struct inode *inode, struct file *file)
{
	/* misc_open() set private_data to our miscdevice, under misc_mtx. */
	struct dmsgpu *gpu = container_of(file->private_data, struct dmsgpu, misc);

	kref_get(&gpu->ref);
	file->private_data = gpu;
	return 0;
}

static int dmsgpu_release(struct inode *inode, struct file *file)
{
	dmsgpu_put(file->private_data);
	return 0;
}

static const struct file_operations dmsgpu_fops = {
	.owner = THIS_MODULE,
	.open = dmsgpu_open,
	.release = dmsgpu_release,
	.unlocked_ioctl = dmsgpu_ioctl,
	.compat_ioctl = compat_ptr_ioctl,
};

/* --- sysfs: /sys/class/misc/dmsgpuN/mem_{size,used,free}, buffers ------- */

static struct dmsgpu *dmsgpu_from_dev(struct device *dev)
{
	struct miscdevice *misc = dev_get_drvdata(dev);

	return container_of(misc, struct dmsgpu, misc);
}

static ssize_t mem_size_show(struct device *dev, struct device_attribute *attr,
			     char *page)
{
	return sysfs_emit(page, "%llu\n", dmsgpu_from_dev(dev)->mem_size);
}
static DEVICE_ATTR_RO(mem_size);

static ssize_t mem_used_show(struct device *dev, struct device_attribute *attr,
			     char *page)
{
	return sysfs_emit(page, "%llu\n", dmsgpu_mem_used(dmsgpu_from_dev(dev)));
}
static DEVICE_ATTR_RO(mem_used);

static ssize_t mem_free_show(struct device *dev, struct device_attribute *attr,
			     char *page)
{
	return sysfs_emit(page, "%zu\n", gen_pool_avail(dmsgpu_from_dev(dev)->pool));
}
static DEVICE_ATTR_RO(mem_free);

static ssize_t buffers_show(struct device *dev, struct device_attribute *attr,
			    char *page)
{
	return sysfs_emit(page, "%d\n", atomic_read(&dmsgpu_from_dev(dev)->nr_bufs));
}
static DEVICE_ATTR_RO(buffers);

static struct attribute *dmsgpu_attrs[] = {
	&dev_attr_mem_size.attr,
	&dev_attr_mem_used.attr,
	&dev_attr_mem_free.attr,
	&dev_attr_buffers.attr,
	NULL
};
ATTRIBUTE_GROUPS(dmsgpu);

/* --- PCI driver -------------------------------------------------------- */

static void dmsgpu_put_action(void *gpu)
{
	dmsgpu_put(gpu);
}

static void dmsgpu_ida_free(void *gpu)
{
	ida_free(&dmsgpu_ida, ((struct dmsgpu *)gpu)->id);
}

static int dmsgpu_init_hw(struct dmsgpu *gpu)
{
	struct pci_dev *pdev = gpu->pdev;
	struct device *dev = &pdev->dev;
	u32 magic;
	int err;

	err = pcim_enable_device(pdev);
	if (err)
		return dev_err_probe(dev, err, "cannot enable device\n");
	gpu->regs = pcim_iomap_region(pdev, DMS_GPU_BAR_REGS, "dmsgpu");
	if (IS_ERR(gpu->regs))
		return dev_err_probe(dev, PTR_ERR(gpu->regs),
				     "cannot map BAR%d\n", DMS_GPU_BAR_REGS);

	magic = readl(gpu->regs + DMS_GPU_REG_ID);
	if (magic != DMS_GPU_ID_MAGIC)
		return dev_err_probe(dev, -ENODEV,
				     "bad identity 0x%08x (want 0x%08x)\n",
				     magic, DMS_GPU_ID_MAGIC);
	gpu->hw_version = readl(gpu->regs + DMS_GPU_REG_VERSION);
	if (gpu->hw_version >> 16 != DMS_GPU_VERSION >> 16 ||
	    gpu->hw_version < DMS_GPU_VERSION)
		return dev_err_probe(dev, -ENODEV,
				     "device version %u.%u unsupported (need %u.%u or a later 1.x)\n",
				     gpu->hw_version >> 16,
				     gpu->hw_version & 0xffff,
				     DMS_GPU_VERSION >> 16,
				     DMS_GPU_VERSION & 0xffff);
	gpu->mem_size = lo_hi_readq(gpu->regs + DMS_GPU_REG_MEM_SIZE_LO);
	if (!gpu->mem_size || !PAGE_ALIGNED(gpu->mem_size) ||
	    gpu->mem_size > pci_resource_len(pdev, DMS_GPU_BAR_MEM))
		return dev_err_probe(dev, -ENODEV,
				     "bad device memory size %llu for BAR%d %pR\n",
				     gpu->mem_size, DMS_GPU_BAR_MEM,
				     &pdev->resource[DMS_GPU_BAR_MEM]);
	err = pcim_request_region(pdev, DMS_GPU_BAR_MEM, "dmsgpu");
	if (err)
		return dev_err_probe(dev, err, "cannot claim BAR%d\n",
				     DMS_GPU_BAR_MEM);
	gpu->mem_phys = pci_resource_start(pdev, DMS_GPU_BAR_MEM);

	err = dma_set_mask_and_coherent(dev, DMA_BIT_MASK(64));
	if (err)
		return dev_err_probe(dev, err, "no usable DMA configuration\n");
	pci_set_master(pdev);

	/*
	 * Only the p2pdma provider (bus offset, map-type cache) of BAR2;
	 * pci_p2pdma_add_resource() would also create ZONE_DEVICE pages
	 * and a p2pmem pool that other kernel users (nvmet, ...) could
	 * allocate from behind our allocator's back. Importers need no
	 * struct pages.
	 */
	err = pcim_p2pdma_init(pdev);
	if (err)
		return dev_err_probe(dev, err, "cannot set up P2PDMA\n");
	gpu->provider = pcim_p2pdma_provider(pdev, DMS_GPU_BAR_MEM);
	if (!gpu->provider)
		return dev_err_probe(dev, -ENODEV, "BAR%d cannot be used for P2PDMA\n",
				     DMS_GPU_BAR_MEM);

	for (gpu->bounce_size = DMSGPU_BOUNCE_SIZE; ; gpu->bounce_size /= 2) {
		gpu->bounce = dmam_alloc_coherent(dev, gpu->bounce_size,
						  &gpu->bounce_dma, GFP_KERNEL);
		if (gpu->bounce || gpu->bounce_size == PAGE_SIZE)
			break;
	}
	if (!gpu->bounce)
		return -ENOMEM;

	err = pci_alloc_irq_vectors(pdev, 1, 1, PCI_IRQ_MSIX);
	if (err < 0)
		return dev_err_probe(dev, err, "cannot enable MSI-X\n");
	err = devm_request_irq(dev, pci_irq_vector(pdev, 0), dmsgpu_irq, 0,
			       gpu->name, gpu);
	if (err)
		return dev_err_probe(dev, err, "cannot request IRQ\n");
	writel(~0U, gpu->regs + DMS_GPU_REG_IRQ_STATUS);
	writel(DMS_GPU_IRQ_COPY_DONE | DMS_GPU_IRQ_CRC_DONE | DMS_GPU_IRQ_ERROR,
	       gpu->regs + DMS_GPU_REG_IRQ_MASK);
	return 0;
}

static int dmsgpu_probe(struct pci_dev *pdev, const struct pci_device_id *id)
{
	struct device *dev = &pdev->dev;
	struct dmsgpu *gpu;
	int err;

	gpu = kzalloc_obj(*gpu);
	if (!gpu)
		return -ENOMEM;
	kref_init(&gpu->ref);
	gpu->pdev = pci_dev_get(pdev);
	mutex_init(&gpu->engine_lock);
	init_waitqueue_head(&gpu->engine_wq);
	/* The probe's reference, dropped after remove() or a failed probe. */
	err = devm_add_action_or_reset(dev, dmsgpu_put_action, gpu);
	if (err)
		return err;

	gpu->id = ida_alloc(&dmsgpu_ida, GFP_KERNEL);
	if (gpu->id < 0)
		return gpu->id;
	err = devm_add_action_or_reset(dev, dmsgpu_ida_free, gpu);
	if (err)
		return err;
	snprintf(gpu->name, sizeof(gpu->name), "dmsgpu%d", gpu->id);

	err = dmsgpu_init_hw(gpu);
	if (err)
		return err;

	gpu->pool = gen_pool_create(PAGE_SHIFT, dev_to_node(dev));
	if (!gpu->pool)
		return -ENOMEM;
	err = gen_pool_add(gpu->pool, gpu->mem_phys, gpu->mem_size,
			   dev_to_node(dev));
	if (err)
		return err;

	gpu->misc.minor = MISC_DYNAMIC_MINOR;
	gpu->misc.name = gpu->name;
	gpu->misc.fops = &dmsgpu_fops;
	gpu->misc.parent = dev;
	gpu->misc.groups = dmsgpu_groups;
	err = misc_register(&gpu->misc);
	if (err)
		return dev_err_probe(dev, err, "cannot register /dev/%s\n",
				     gpu->name);

	pci_set_drvdata(pdev, gpu);
	dev_info(dev,
		 "devmemsim GPU v%u.%u: %llu MiB device memory at %pR, /dev/%s\n",
		 gpu->hw_version >> 16, gpu->hw_version & 0xffff,
		 gpu->mem_size / SZ_1M, &pdev->resource[DMS_GPU_BAR_MEM],
		 gpu->name);
	return 0;
}

static void dmsgpu_remove(struct pci_dev *pdev)
{
	struct dmsgpu *gpu = pci_get_drvdata(pdev);
	int bufs;

	misc_deregister(&gpu->misc);
	WRITE_ONCE(gpu->removed, true);
	synchronize_srcu(&dmsgpu_srcu);
	/* No engine job runs any more; the device stays quiet from here on. */
	writel(0, gpu->regs + DMS_GPU_REG_IRQ_MASK);

	bufs = atomic_read(&gpu->nr_bufs);
	if (bufs)
		dev_warn(&pdev->dev,
			 "removed with %d buffer(s) allocated: their CPU and DMA mappings now point at a released BAR\n",
			 bufs);
}

static const struct pci_device_id dmsgpu_ids[] = {
	{ PCI_DEVICE(DMS_PCI_VENDOR_ID, DMS_PCI_DEVICE_ID_GPU) },
	{ }
};
MODULE_DEVICE_TABLE(pci, dmsgpu_ids);

static struct pci_driver dmsgpu_driver = {
	.name = "dmsgpu",
	.id_table = dmsgpu_ids,
	.probe = dmsgpu_probe,
	.remove = dmsgpu_remove,
};
module_pci_driver(dmsgpu_driver);

MODULE_DESCRIPTION("devmemsim GPU-like device: device memory as dma-bufs, copy and CRC engines");
MODULE_LICENSE("GPL");
MODULE_IMPORT_NS("DMA_BUF");
