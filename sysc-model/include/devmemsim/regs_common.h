/* SPDX-License-Identifier: MIT */
/* Register rules common to every devmemsim device (docs/datasheet.md). */
#ifndef DEVMEMSIM_REGS_COMMON_H
#define DEVMEMSIM_REGS_COMMON_H

/* Reads of unknown offsets return this; writes to them are ignored. */
#define DMS_REG_UNDEFINED 0xffffffffU

#endif /* DEVMEMSIM_REGS_COMMON_H */
