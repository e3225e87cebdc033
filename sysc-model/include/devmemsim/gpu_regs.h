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
#define DMS_GPU_VERSION 0x00010000 /* major 1, minor 0 */

/* Identity (read only). */
#define DMS_GPU_REG_ID 0x0000 /* DMS_GPU_ID_MAGIC */
#define DMS_GPU_REG_VERSION 0x0004 /* major << 16 | minor */
#define DMS_GPU_REG_MEM_SIZE_LO 0x0008 /* device memory size, bytes */
#define DMS_GPU_REG_MEM_SIZE_HI 0x000c

#endif /* DEVMEMSIM_GPU_REGS_H */
