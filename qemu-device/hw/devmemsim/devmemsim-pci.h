/*
 * What devmemsim-nic and devmemsim-gpu share: the link to their node,
 * the register BAR forwarded to the model, MSI-X and the PCIe capability.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#ifndef HW_DEVMEMSIM_PCI_H
#define HW_DEVMEMSIM_PCI_H

#include "hw/pci/pci_device.h"
#include "devmemsim-node.h"

typedef struct DevmemsimFunction {
    DevmemsimNode *node; /* "node" link property */
    PCIDevice *pdev;
    enum dms_dev dev;
    MemoryRegion regs; /* register BAR, forwarded to the model */
    struct dms_dev_ops ops;
} DevmemsimFunction;

/*
 * Realize the parts every devmemsim function has: claim the node's device,
 * register the register BAR (regs_bar, regs_size bytes), MSI-X with
 * nvectors vectors in its own BAR msix_bar, the PCIe endpoint capability,
 * and attach to the model (DMA, MSI-X; send and rx_ready for a NIC, their
 * opaque being fn).
 */
bool devmemsim_function_realize(PCIDevice *pdev, DevmemsimFunction *fn,
                                enum dms_dev dev, int regs_bar,
                                uint64_t regs_size, int msix_bar,
                                unsigned nvectors,
                                void (*send)(void *, const uint8_t *, size_t),
                                void (*rx_ready)(void *), Error **errp);
void devmemsim_function_exit(PCIDevice *pdev);

/*
 * Class setup every devmemsim function shares: our vendor, subsystem and
 * revision, the given device and class IDs, and no migration (the model's
 * state is not migratable).
 */
void devmemsim_function_class_init(PCIDeviceClass *k, uint16_t device_id,
                                   uint16_t class_id);

/*
 * Config space writes of every devmemsim function: after QEMU's own
 * handling, tell the model where the guest put the BARs, so the fabric can
 * route peer-to-peer. Also called after a reset, which unmaps them.
 */
void devmemsim_function_config_write(DevmemsimFunction *fn, uint32_t addr,
                                     uint32_t val, int len);
void devmemsim_function_update_bars(DevmemsimFunction *fn);

#endif
