/* SPDX-License-Identifier: MIT */
/*
 * devmemsim NIC register map (BAR0). All registers are 32 bits wide,
 * little endian, accessed with aligned 32-bit reads and writes; see
 * docs/datasheet.md. Included by the model, the QEMU glue and dmsnic.
 */
#ifndef DEVMEMSIM_NIC_REGS_H
#define DEVMEMSIM_NIC_REGS_H

#include "regs_common.h"

#define DMS_NIC_ID_MAGIC 0x4e534d44 /* "DMSN" in memory order */
#define DMS_NIC_VERSION 0x00010000 /* major 1, minor 0 */

/* Identity and capabilities (read only). */
#define DMS_NIC_REG_ID 0x0000 /* DMS_NIC_ID_MAGIC */
#define DMS_NIC_REG_VERSION 0x0004 /* major << 16 | minor */
#define DMS_NIC_REG_NUM_QUEUES 0x0008 /* queue pairs */
#define DMS_NIC_REG_MAC_LO 0x000c /* MAC bytes 0..3, byte 0 in bits 7:0 */
#define DMS_NIC_REG_MAC_HI 0x0010 /* MAC bytes 4..5 in bits 15:0 */
#define DMS_NIC_REG_NODE_INDEX 0x0014 /* index of the node in its cluster */

#endif /* DEVMEMSIM_NIC_REGS_H */
