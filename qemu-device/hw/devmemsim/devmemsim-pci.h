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
    uint32_t index;      /* "index" property: the model's instance */
    PCIDevice *pdev;
    enum dms_dev dev;  /* DMS_NIC(index) or DMS_GPU(index) */
    const char *name;  /* the model's name for it, as traces say */
    bool claimed;      /* holds dev in its node's claim bitmap */
    MemoryRegion regs; /* register BAR, forwarded to the model */
    struct dms_dev_ops ops;
    /*
     * MSI-X vectors the model raised, delivered by irq_bh: a bottom half
     * under the device's re-entrancy guard, never from inside a model
     * call, so a message aimed at our own registers is refused by QEMU
     * instead of re-entering the model.
     */
    unsigned long *irq_pending;
    QEMUBH *irq_bh;
    uint64_t bar_addr[PCI_NUM_REGIONS - 1]; /* as last told to the model */
    uint64_t bar_size[PCI_NUM_REGIONS - 1];
    bool bus_master; /* as last told to the model */
    bool attached;
} DevmemsimFunction;

/*
 * Realize the parts every devmemsim function has: claim the node's NIC
 * (gpu false) or GPU with the index property, register the register BAR
 * (regs_bar, regs_size bytes), MSI-X with the model's number of vectors in
 * its own BAR msix_bar, the PCIe endpoint capability, and attach to the
 * model (DMA, MSI-X; send and rx_ready for a NIC, their opaque being fn).
 */
bool devmemsim_function_realize(PCIDevice *pdev, DevmemsimFunction *fn,
                                bool gpu, int regs_bar, uint64_t regs_size,
                                int msix_bar,
                                void (*send)(void *, const uint8_t *, size_t),
                                void (*rx_ready)(void *), Error **errp);
/*
 * Undo realize: detach from the model (it forgets every pointer this
 * function gave it), drop pending interrupts, free MSI-X, give the
 * device id back to the node.
 */
void devmemsim_function_exit(DevmemsimFunction *fn);

/*
 * Class setup every devmemsim function shares: our vendor, subsystem and
 * revision, the given device and class IDs, no migration (the model's
 * state is not migratable) and no hot-unplug (the node's model outlives
 * the device; a guest must not be able to eject it).
 */
void devmemsim_function_class_init(PCIDeviceClass *k, uint16_t device_id,
                                   uint16_t class_id);

/*
 * Config space writes of every devmemsim function: after QEMU's own
 * handling, tell the model where the guest put the BARs, so the fabric can
 * route peer-to-peer, and whether bus mastering is on, so the fabric
 * refuses the device's DMA (P2P included) when it is off. Also called
 * after a reset, which unmaps them and turns bus mastering off.
 */
void devmemsim_function_config_write(DevmemsimFunction *fn, uint32_t addr,
                                     uint32_t val, int len);
void devmemsim_function_sync_config(DevmemsimFunction *fn);

#endif
