/* SPDX-License-Identifier: MIT */
/*
 * Register rules common to every devmemsim device (docs/datasheet.md), and
 * the types of the little-endian fields of structures the devices read or
 * write in memory (descriptors, completions, gather lists).
 */
#ifndef DEVMEMSIM_REGS_COMMON_H
#define DEVMEMSIM_REGS_COMMON_H

#ifdef __KERNEL__
#include <linux/types.h>
typedef __le16 dms_le16;
typedef __le32 dms_le32;
typedef __le64 dms_le64;
#else
#include <stdint.h>
typedef uint16_t dms_le16;
typedef uint32_t dms_le32;
typedef uint64_t dms_le64;
#endif

/*
 * Compile-time checks of the memory layouts, next to the structures, in C
 * (the drivers, the glue) and C++ (the model).
 */
#ifdef __cplusplus
#define DMS_STATIC_ASSERT(cond, msg) static_assert(cond, msg)
#else
#define DMS_STATIC_ASSERT(cond, msg) _Static_assert(cond, msg)
#endif

/* Reads of unknown offsets return this; writes to them are ignored. */
#define DMS_REG_UNDEFINED 0xffffffffU

#endif /* DEVMEMSIM_REGS_COMMON_H */
