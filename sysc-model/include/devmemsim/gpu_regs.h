/* SPDX-License-Identifier: MIT */
/*
 * devmemsim GPU register map (BAR0). All registers are 32 bits wide,
 * little endian, accessed with aligned 32-bit reads and writes; see
 * docs/datasheet.md. Device memory is BAR2 (64-bit, prefetchable).
 * Included by the model, the QEMU glue and dmsgpu.
 */
#ifndef DEVMEMSIM_GPU_REGS_H
#define DEVMEMSIM_GPU_REGS_H

#include "regs_common.h"

#define DMS_GPU_ID_MAGIC 0x47534d44 /* "DMSG" in memory order */
#define DMS_GPU_VERSION 0x00010002  /* major 1, minor 2 */

/* Identity (read only). */
#define DMS_GPU_REG_ID 0x0000	       /* DMS_GPU_ID_MAGIC */
#define DMS_GPU_REG_VERSION 0x0004     /* major << 16 | minor */
#define DMS_GPU_REG_MEM_SIZE_LO 0x0008 /* device memory size, bytes */
#define DMS_GPU_REG_MEM_SIZE_HI 0x000c

/*
 * Interrupts: one MSI-X vector (0). An event sets its IRQ_STATUS bit; the
 * vector fires when a bit is set in both IRQ_STATUS and IRQ_MASK. Writing
 * 1 to a status bit clears it.
 */
#define DMS_GPU_REG_IRQ_STATUS 0x0010 /* RW1C */
#define DMS_GPU_REG_IRQ_MASK 0x0014   /* RW, 1 = enabled; 0 after reset */
#define DMS_GPU_IRQ_COPY_DONE (1U << 0)
#define DMS_GPU_IRQ_CRC_DONE (1U << 1)
#define DMS_GPU_IRQ_ERROR (1U << 2) /* an engine finished with an error */

/*
 * Engine status (COPY_STATUS, CRC_STATUS). A doorbell write while the
 * engine is BUSY is refused with DMS_GPU_ERR_BUSY (the running job goes
 * on). Error codes stay until the next accepted doorbell.
 */
#define DMS_GPU_STATUS_BUSY (1U << 0)
#define DMS_GPU_STATUS_DONE (1U << 1)
#define DMS_GPU_STATUS_ERROR (1U << 2)
#define DMS_GPU_STATUS_ERR_SHIFT 8
#define DMS_GPU_STATUS_ERR_MASK (0xffU << DMS_GPU_STATUS_ERR_SHIFT)
#define DMS_GPU_ERR_NONE 0
#define DMS_GPU_ERR_DEV_RANGE 1 /* device range beyond device memory */
#define DMS_GPU_ERR_HOST_DMA 2	/* host address not reachable (DMA fault) */
#define DMS_GPU_ERR_BUSY 3	/* doorbell while busy */
#define DMS_GPU_ERR_BAD_LEN 4	/* zero length, or a bad CRC_LIST_COUNT */
#define DMS_GPU_ERR_ENGINE 5	/* internal engine fault (fault injection) */

/*
 * Copy engine: moves LEN bytes between device memory (DEV: an offset in
 * BAR2) and a host bus address (HOST), through the PCIe fabric.
 */
#define DMS_GPU_REG_COPY_DEV_LO 0x0100
#define DMS_GPU_REG_COPY_DEV_HI 0x0104
#define DMS_GPU_REG_COPY_HOST_LO 0x0108
#define DMS_GPU_REG_COPY_HOST_HI 0x010c
#define DMS_GPU_REG_COPY_LEN_LO 0x0110
#define DMS_GPU_REG_COPY_LEN_HI 0x0114
#define DMS_GPU_REG_COPY_CTRL 0x0118
#define DMS_GPU_COPY_TO_HOST 0		      /* CTRL bit 0 = 0: device memory -> host */
#define DMS_GPU_COPY_TO_DEV 1		      /* CTRL bit 0 = 1: host -> device memory */
#define DMS_GPU_REG_COPY_DOORBELL 0x011c      /* write: start (value ignored) */
#define DMS_GPU_REG_COPY_STATUS 0x0120	      /* RO */
#define DMS_GPU_REG_COPY_DONE_BYTES_LO 0x0128 /* RO: bytes moved by the last job */
#define DMS_GPU_REG_COPY_DONE_BYTES_HI 0x012c

/*
 * CRC32C engine over device memory (never crosses PCIe). RESULT is the
 * CRC32C (Castagnoli, reflected) register after the data, starting from
 * SEED, without final inversion: Linux's crc32c(seed, data, len). The
 * standard CRC32C of the data is ~RESULT with SEED = 0xffffffff.
 */
#define DMS_GPU_REG_CRC_DEV_LO 0x0200
#define DMS_GPU_REG_CRC_DEV_HI 0x0204
#define DMS_GPU_REG_CRC_LEN_LO 0x0208
#define DMS_GPU_REG_CRC_LEN_HI 0x020c
#define DMS_GPU_REG_CRC_SEED 0x0210
#define DMS_GPU_REG_CRC_DOORBELL 0x0214 /* write: start (value ignored) */
#define DMS_GPU_REG_CRC_STATUS 0x0218	/* RO */
#define DMS_GPU_REG_CRC_RESULT 0x021c	/* RO */

/*
 * CRC gather mode (v1.2): with CRC_LIST_COUNT != 0, a doorbell makes the
 * engine read CRC_LIST_COUNT entries of struct dms_gpu_crc_range from the
 * host bus address CRC_LIST (by DMA, through the fabric) and run the CRC
 * over those ranges of device memory in list order, as one stream from
 * SEED; DEV and LEN are not used. A count above DMS_GPU_CRC_LIST_MAX, a
 * zero-length range or ranges adding up to more than the device memory's
 * size end the job with DMS_GPU_ERR_BAD_LEN, a range beyond
 * device memory with DMS_GPU_ERR_DEV_RANGE, a list the engine cannot read
 * with DMS_GPU_ERR_HOST_DMA; RESULT is then undefined. Write 0 to
 * CRC_LIST_COUNT for single-range jobs again.
 */
#define DMS_GPU_REG_CRC_LIST_LO 0x0220
#define DMS_GPU_REG_CRC_LIST_HI 0x0224
#define DMS_GPU_REG_CRC_LIST_COUNT 0x0228
#define DMS_GPU_CRC_LIST_MAX 4096

/* One entry of the CRC gather list (16 bytes, little endian). */
struct dms_gpu_crc_range {
	dms_le64 dev; /* offset in device memory */
	dms_le64 len; /* bytes, > 0 */
};
DMS_STATIC_ASSERT(sizeof(struct dms_gpu_crc_range) == 16, "dms_gpu_crc_range is 16 bytes");

#endif /* DEVMEMSIM_GPU_REGS_H */
