/* SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note */
/*
 * dmsgpu user API: the ioctls of /dev/dmsgpuN, the character device of the
 * devmemsim GPU-like device (PCI 1af4:10f1).
 *
 * Device memory (BAR2) is handed out as dma-bufs. A dma-buf from
 * DMSGPU_IOCTL_ALLOC can be
 *   - mmap()ed MAP_SHARED for CPU access (write-combined, straight to
 *     device memory; MAP_PRIVATE gets -EINVAL, as device memory cannot be
 *     copy-on-write),
 *   - imported by other devices, e.g. bound to a NIC queue for devmem TCP
 *     (the mapping the importer gets holds bus addresses inside BAR2),
 *   - passed back to DMSGPU_IOCTL_COPY and DMSGPU_IOCTL_CRC to run the
 *     device's copy and CRC32C engines on a range of it.
 * The memory returns to the device's allocator when the last reference to
 * the dma-buf (fd, mapping or importer) is gone.
 *
 * When the device goes away (its driver unbound), open /dev/dmsgpuN and
 * dma-buf fds stay valid but their ioctls and mmap() fail with -ENODEV, an
 * engine ioctl in progress ends with -ENODEV, and CPU mappings of its
 * dma-bufs raise SIGBUS. The unbind waits until importers that cannot be
 * told to let go (devmem TCP bindings) have released the device memory.
 *
 * All structures use fixed-width types and have no padding, so 32- and
 * 64-bit callers share them. Fields marked "must be 0" are checked
 * (-EINVAL otherwise) so that they can gain a meaning later.
 */
#ifndef _UAPI_DMSGPU_H
#define _UAPI_DMSGPU_H

#include <linux/ioctl.h>
#include <linux/types.h>

#define DMSGPU_IOCTL_MAGIC 0xd5

/**
 * struct dmsgpu_info - DMSGPU_IOCTL_INFO: device memory and identity
 * @mem_size: device memory (BAR2) managed by the driver, bytes
 * @mem_used: bytes currently allocated to dma-bufs
 * @mem_free: @mem_size - @mem_used (may be fragmented)
 * @hw_version: the device's VERSION register (major << 16 | minor)
 * @buffers: number of live dma-bufs
 */
struct dmsgpu_info {
	__u64 mem_size;
	__u64 mem_used;
	__u64 mem_free;
	__u32 hw_version;
	__u32 buffers;
};

/**
 * struct dmsgpu_alloc - DMSGPU_IOCTL_ALLOC: allocate device memory as a dma-buf
 * @size: in: bytes wanted (> 0); out: bytes allocated (@size rounded up
 *	to the page size), the size of the dma-buf
 * @align: in: alignment of the allocation's device-memory offset, a power
 *	of two up to 1 GiB; 0 or anything below the page size means page
 *	alignment (e.g. devmem TCP's rx-page-size needs niov-aligned buffers)
 * @offset: out: the allocation's offset in device memory (BAR2)
 * @flags: in: must be 0
 * @fd: out: the dma-buf, opened O_RDWR | O_CLOEXEC
 *
 * Errors: -EINVAL (bad @size, @align or @flags), -ENOMEM (no free range of
 * device memory large enough). The contents of new memory are undefined.
 */
struct dmsgpu_alloc {
	__u64 size;
	__u64 align;
	__u64 offset;
	__u32 flags;
	__s32 fd;
};

/* struct dmsgpu_copy.direction */
#define DMSGPU_COPY_TO_DEVICE 0 /* user memory -> dma-buf */
#define DMSGPU_COPY_FROM_DEVICE 1 /* dma-buf -> user memory */

/**
 * struct dmsgpu_copy - DMSGPU_IOCTL_COPY: move data with the copy engine
 * @fd: a dma-buf from DMSGPU_IOCTL_ALLOC on the same device
 * @direction: DMSGPU_COPY_TO_DEVICE or DMSGPU_COPY_FROM_DEVICE
 * @offset: byte offset in the dma-buf
 * @len: bytes to copy; 0 copies nothing
 * @user_ptr: user-space address of @len bytes, source or destination
 *
 * The data goes through a host bounce buffer that the device's copy engine
 * reads or writes by DMA, so every byte crosses PCIe (and is counted by
 * the fabric model). Errors: -EINVAL (@offset + @len beyond the dma-buf,
 * bad @direction, @fd not a dma-buf of this device), -EBADF (@fd not
 * open), -EFAULT (@user_ptr), -EIO (the engine reported an error),
 * -ETIMEDOUT (the engine did not finish), -EBUSY (an engine still runs a
 * job that timed out), -ENODEV (the device went away), -ENOMEM, -EINTR
 * (fatal signal); on an error, part of the range may have been copied.
 */
struct dmsgpu_copy {
	__s32 fd;
	__u32 direction;
	__u64 offset;
	__u64 len;
	__u64 user_ptr;
};

/**
 * struct dmsgpu_crc - DMSGPU_IOCTL_CRC: CRC32C of a range with the CRC engine
 * @fd: a dma-buf from DMSGPU_IOCTL_ALLOC on the same device
 * @seed: in: initial CRC register
 * @offset: byte offset in the dma-buf
 * @len: bytes to checksum; 0 gives @crc = @seed
 * @crc: out: CRC32C (Castagnoli, reflected) register after the data,
 *	without final inversion, i.e. Linux's crc32c(@seed, data, @len). The
 *	standard CRC32C of the data is ~@crc with @seed = 0xffffffff.
 * @flags: in: must be 0
 *
 * The engine reads device memory directly, without the CPU or PCIe.
 * Errors as for DMSGPU_IOCTL_COPY (except -EFAULT for the data).
 */
struct dmsgpu_crc {
	__s32 fd;
	__u32 seed;
	__u64 offset;
	__u64 len;
	__u32 crc;
	__u32 flags;
};

/**
 * struct dmsgpu_range - a range of a dma-buf
 * @offset: byte offset in the dma-buf
 * @len: bytes, > 0
 */
struct dmsgpu_range {
	__u64 offset;
	__u64 len;
};

/* Most ranges one DMSGPU_IOCTL_CRC_LIST takes. */
#define DMSGPU_CRC_LIST_MAX 65536

/**
 * struct dmsgpu_crc_list - DMSGPU_IOCTL_CRC_LIST: CRC32C of ranges, in order
 * @fd: a dma-buf from DMSGPU_IOCTL_ALLOC on the same device
 * @seed: in: initial CRC register
 * @count: in: number of ranges, 1..DMSGPU_CRC_LIST_MAX
 * @flags: in: must be 0
 * @ranges: in: user-space address of @count struct dmsgpu_range
 * @crc: out: the CRC register after all ranges, taken in array order as
 *	one stream (as DMSGPU_IOCTL_CRC over each range, seeding each with
 *	the previous result)
 * @reserved: must be 0
 *
 * For scattered data, e.g. the fragments devmem TCP reports for one
 * recvmsg(): the device's CRC engine walks a gather list in one job
 * (hardware v1.2), where DMSGPU_IOCTL_CRC would take a job per range.
 * Errors: -EINVAL (bad @count, @flags or @reserved; a range that is empty,
 * longer than 64 MiB or beyond the dma-buf; @fd not a dma-buf of this
 * device), -EFAULT (@ranges), and as for DMSGPU_IOCTL_CRC.
 */
struct dmsgpu_crc_list {
	__s32 fd;
	__u32 seed;
	__u32 count;
	__u32 flags;
	__u64 ranges;
	__u32 crc;
	__u32 reserved;
};

#define DMSGPU_IOCTL_INFO _IOR(DMSGPU_IOCTL_MAGIC, 0x00, struct dmsgpu_info)
#define DMSGPU_IOCTL_ALLOC _IOWR(DMSGPU_IOCTL_MAGIC, 0x01, struct dmsgpu_alloc)
#define DMSGPU_IOCTL_COPY _IOW(DMSGPU_IOCTL_MAGIC, 0x02, struct dmsgpu_copy)
#define DMSGPU_IOCTL_CRC _IOWR(DMSGPU_IOCTL_MAGIC, 0x03, struct dmsgpu_crc)
#define DMSGPU_IOCTL_CRC_LIST \
	_IOWR(DMSGPU_IOCTL_MAGIC, 0x04, struct dmsgpu_crc_list)

#endif /* _UAPI_DMSGPU_H */
