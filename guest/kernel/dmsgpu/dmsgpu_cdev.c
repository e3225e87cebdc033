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
#include <linux/slab.h>
#include <linux/uaccess.h>

#include <devmemsim/gpu_regs.h>
#include <uapi/dmsgpu.h>

#include "dmsgpu.h"

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

/*
 * User memory and the engines meet in @data, a kernel buffer of the
 * ioctl's own: a user copy (whose fault may wait on FUSE, userfaultfd...)
 * holds no lock that remove() needs. Each chunk is one engine job.
 */
static int dmsgpu_copy_chunks(struct dmsgpu *gpu, u64 dev, u8 __user *uptr,
			      u64 total, bool to_dev, void *data)
{
	u64 left, len;
	int ret;

	for (left = total; left; left -= len) {
		len = min_t(u64, left, gpu->bounce_size);
		if (fatal_signal_pending(current))
			return -EINTR;
		if (to_dev && copy_from_user(data, uptr, len))
			return -EFAULT;
		ret = dmsgpu_copy_job(gpu, dev, data, len, to_dev);
		if (ret)
			return ret;
		if (!to_dev && copy_to_user(uptr, data, len))
			return -EFAULT;
		dev += len;
		uptr += len;
	}
	return 0;
}

static int dmsgpu_ioctl_copy(struct dmsgpu *gpu, void __user *uarg)
{
	struct dmsgpu_copy arg;
	struct dmsgpu_buf *buf;
	struct dma_buf *dmabuf;
	void *data;
	int ret;

	if (copy_from_user(&arg, uarg, sizeof(arg)))
		return -EFAULT;
	if (arg.direction != DMSGPU_COPY_TO_DEVICE &&
	    arg.direction != DMSGPU_COPY_FROM_DEVICE)
		return -EINVAL;
	buf = dmsgpu_buf_get(gpu, arg.fd, arg.offset, arg.len, &dmabuf);
	if (IS_ERR(buf))
		return PTR_ERR(buf);
	ret = 0;
	if (!arg.len)
		goto out;
	data = kvmalloc(min_t(u64, arg.len, gpu->bounce_size), GFP_KERNEL);
	if (!data) {
		ret = -ENOMEM;
		goto out;
	}
	ret = dmsgpu_copy_chunks(gpu, buf->offset + arg.offset,
				 u64_to_user_ptr(arg.user_ptr), arg.len,
				 arg.direction == DMSGPU_COPY_TO_DEVICE, data);
	kvfree(data);
out:
	dma_buf_put(dmabuf);
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
	buf = dmsgpu_buf_get(gpu, arg.fd, arg.offset, arg.len, &dmabuf);
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
	dma_buf_put(dmabuf);
	if (ret)
		return ret;
	arg.crc = crc;
	return copy_to_user(uarg, &arg, sizeof(arg)) ? -EFAULT : 0;
}

/*
 * The user's ranges become the device's gather list, translated to
 * device-memory offsets, in @list (a kernel buffer of @per_job entries):
 * at most @per_job entries and DMSGPU_CRC_CHUNK bytes of data (and no more
 * than the device memory, the device's limit for one job) per engine job.
 */
static int dmsgpu_crc_ranges(struct dmsgpu *gpu, struct dmsgpu_buf *buf,
			     const struct dmsgpu_crc_list *arg,
			     struct dms_gpu_crc_range *list, u32 per_job,
			     u32 *crc)
{
	struct dmsgpu_range __user *uranges = u64_to_user_ptr(arg->ranges);
	u64 job_bytes = min_t(u64, DMSGPU_CRC_CHUNK, gpu->mem_size);
	struct dmsgpu_range r;
	u32 i, n = 0;
	u64 bytes = 0;
	int ret;

	for (i = 0; i < arg->count; i++) {
		if (copy_from_user(&r, &uranges[i], sizeof(r)))
			return -EFAULT;
		if (!r.len || r.len > job_bytes || r.offset > buf->size ||
		    r.len > buf->size - r.offset)
			return -EINVAL;
		if (n == per_job || bytes + r.len > job_bytes) {
			ret = dmsgpu_crc_list_job(gpu, list, n, crc);
			if (ret)
				return ret;
			n = 0;
			bytes = 0;
		}
		list[n].dev = cpu_to_le64(buf->offset + r.offset);
		list[n].len = cpu_to_le64(r.len);
		n++;
		bytes += r.len;
		if (fatal_signal_pending(current))
			return -EINTR;
	}
	return dmsgpu_crc_list_job(gpu, list, n, crc);
}

static int dmsgpu_ioctl_crc_list(struct dmsgpu *gpu, void __user *uarg)
{
	u32 per_job = min_t(u32, DMS_GPU_CRC_LIST_MAX,
			    gpu->bounce_size / sizeof(struct dms_gpu_crc_range));
	struct dms_gpu_crc_range *list;
	struct dmsgpu_crc_list arg;
	struct dmsgpu_buf *buf;
	struct dma_buf *dmabuf;
	u32 crc;
	int ret;

	if (copy_from_user(&arg, uarg, sizeof(arg)))
		return -EFAULT;
	if (arg.flags || arg.reserved || !arg.count ||
	    arg.count > DMSGPU_CRC_LIST_MAX)
		return -EINVAL;
	buf = dmsgpu_buf_get(gpu, arg.fd, 0, 0, &dmabuf);
	if (IS_ERR(buf))
		return PTR_ERR(buf);
	list = kvmalloc_array(min(per_job, arg.count), sizeof(*list), GFP_KERNEL);
	if (list) {
		crc = arg.seed;
		ret = dmsgpu_crc_ranges(gpu, buf, &arg, list, per_job, &crc);
		kvfree(list);
	} else {
		ret = -ENOMEM;
	}
	dma_buf_put(dmabuf);
	if (ret)
		return ret;
	arg.crc = crc;
	return copy_to_user(uarg, &arg, sizeof(arg)) ? -EFAULT : 0;
}

static long dmsgpu_ioctl(struct file *file, unsigned int cmd, unsigned long arg)
{
	struct dmsgpu *gpu = file->private_data;
	void __user *uarg = (void __user *)arg;

	/*
	 * No section here spans the ioctl: allocation enters the removal SRCU
	 * section only to export, each engine job takes the engine lock (and
	 * sees the device gone there), user copies hold neither.
	 */
	if (READ_ONCE(gpu->removed))
		return -ENODEV;
	switch (cmd) {
	case DMSGPU_IOCTL_INFO:
		return dmsgpu_ioctl_info(gpu, uarg);
	case DMSGPU_IOCTL_ALLOC:
		return dmsgpu_ioctl_alloc(gpu, uarg);
	case DMSGPU_IOCTL_COPY:
		return dmsgpu_ioctl_copy(gpu, uarg);
	case DMSGPU_IOCTL_CRC:
		return dmsgpu_ioctl_crc(gpu, uarg);
	case DMSGPU_IOCTL_CRC_LIST:
		return dmsgpu_ioctl_crc_list(gpu, uarg);
	default:
		return -ENOTTY;
	}
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
