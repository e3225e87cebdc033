// SPDX-License-Identifier: GPL-2.0
/*
 * dmsgpu character device: /dev/dmsgpuN and its ioctls (see
 * guest/include/uapi/dmsgpu.h), which allocate device memory as dma-bufs
 * and run the engines on it.
 */
#include <linux/compat.h>
#include <linux/dma-buf.h>
#include <linux/file.h>
#include <linux/fs.h>
#include <linux/sched/signal.h>
#include <linux/uaccess.h>

#include <devmemsim/gpu_regs.h>
#include <uapi/dmsgpu.h>

#include "dmsgpu.h"

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
	int ret;

	buf = dmsgpu_buf_get(gpu, fd, offset, len, dmabuf);
	if (IS_ERR(buf))
		return buf;
	if (mutex_lock_interruptible(&gpu->engine_lock)) {
		dma_buf_put(*dmabuf);
		return ERR_PTR(-EINTR);
	}
	/* The ioctls fill the bounce buffer before the job starts. */
	ret = dmsgpu_engines_idle(gpu);
	if (ret) {
		mutex_unlock(&gpu->engine_lock);
		dma_buf_put(*dmabuf);
		return ERR_PTR(ret);
	}
	return buf;
}

static void dmsgpu_engine_end(struct dmsgpu *gpu, struct dma_buf *dmabuf)
{
	mutex_unlock(&gpu->engine_lock);
	dma_buf_put(dmabuf);
}

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
	struct dmsgpu_alloc arg;
	struct dma_buf *dmabuf;
	int fd;

	if (copy_from_user(&arg, uarg, sizeof(arg)))
		return -EFAULT;
	if (!arg.size || arg.flags || arg.align > DMSGPU_MAX_ALIGN ||
	    (arg.align && !is_power_of_2(arg.align)))
		return -EINVAL;
	if (arg.size > gpu->mem_size)
		return -ENOMEM;
	dmabuf = dmsgpu_buf_export(gpu, PAGE_ALIGN(arg.size),
				   max_t(u64, arg.align, PAGE_SIZE));
	if (IS_ERR(dmabuf))
		return PTR_ERR(dmabuf);

	fd = get_unused_fd_flags(O_CLOEXEC);
	if (fd < 0) {
		dma_buf_put(dmabuf);
		return fd;
	}
	arg.size = PAGE_ALIGN(arg.size);
	arg.offset = ((struct dmsgpu_buf *)dmabuf->priv)->offset;
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
 * DMSGPU_CRC_CHUNK bytes of data, and no more than the device memory, the
 * device's limit for one job) per engine job.
 */
static int dmsgpu_ioctl_crc_list(struct dmsgpu *gpu, void __user *uarg)
{
	struct dms_gpu_crc_range *list = gpu->bounce;
	u32 per_job = min_t(u32, DMS_GPU_CRC_LIST_MAX,
			    gpu->bounce_size / sizeof(*list));
	u64 job_bytes = min_t(u64, DMSGPU_CRC_CHUNK, gpu->mem_size);
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
		if (!r.len || r.len > job_bytes || r.offset > buf->size ||
		    r.len > buf->size - r.offset) {
			ret = -EINVAL;
			break;
		}
		if (n == per_job || bytes + r.len > job_bytes) {
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

const struct file_operations dmsgpu_fops = {
	.owner = THIS_MODULE,
	.open = dmsgpu_open,
	.release = dmsgpu_release,
	.unlocked_ioctl = dmsgpu_ioctl,
	.compat_ioctl = compat_ptr_ioctl,
};
