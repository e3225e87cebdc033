/* SPDX-License-Identifier: MIT */
/*
 * devmemsim PCI identity: the one place that names our devices' IDs.
 * Included by the SystemC model, the QEMU glue and the Linux drivers.
 *
 * Vendor 0x1af4 with device IDs 0x10f0..0x10ff is the range QEMU's
 * docs/specs/pci-ids.rst leaves "available for experimental usage without
 * registration"; devmemsim takes 0x10f0 (NIC) and 0x10f1 (GPU).
 */
#ifndef DEVMEMSIM_PCI_IDS_H
#define DEVMEMSIM_PCI_IDS_H

#define DMS_PCI_VENDOR_ID 0x1af4
#define DMS_PCI_DEVICE_ID_NIC 0x10f0
#define DMS_PCI_DEVICE_ID_GPU 0x10f1
#define DMS_PCI_SUBSYS_VENDOR_ID 0x1af4
#define DMS_PCI_SUBSYS_ID 0x0001
#define DMS_PCI_REVISION 0x01

/* PCI class codes (base class << 8 | subclass). */
#define DMS_PCI_CLASS_NIC 0x0200 /* network: Ethernet */
#define DMS_PCI_CLASS_GPU 0x0302 /* display: 3D controller */

/* BAR numbers. MSI-X table and PBA sit in their own BAR on both devices. */
#define DMS_NIC_BAR_REGS 0
#define DMS_NIC_BAR_MSIX 4
#define DMS_GPU_BAR_REGS 0
#define DMS_GPU_BAR_MEM 2 /* 64-bit prefetchable device memory */
#define DMS_GPU_BAR_MSIX 4

#define DMS_NIC_REGS_SIZE 0x10000 /* 64 KiB */
#define DMS_GPU_REGS_SIZE 0x10000 /* 64 KiB */

#endif /* DEVMEMSIM_PCI_IDS_H */
