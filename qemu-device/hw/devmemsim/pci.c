/*
 * Common realize for devmemsim PCIe functions.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include "qemu/osdep.h"
#include "qapi/error.h"
#include "hw/pci/msix.h"
#include "hw/pci/pcie.h"
#include "devmemsim-pci.h"

#define DEVMEMSIM_PCIE_CAP_OFFSET 0xa0

static uint64_t devmemsim_regs_read(void *opaque, hwaddr addr, unsigned size)
{
    DevmemsimFunction *fn = opaque;

    return dms_reg_read(fn->node->model, fn->dev, addr, size);
}

static void devmemsim_regs_write(void *opaque, hwaddr addr, uint64_t val,
                                 unsigned size)
{
    DevmemsimFunction *fn = opaque;

    dms_reg_write(fn->node->model, fn->dev, addr, val, size);
    devmemsim_node_kick(fn->node);
}

static const MemoryRegionOps devmemsim_regs_ops = {
    .read = devmemsim_regs_read,
    .write = devmemsim_regs_write,
    .endianness = DEVICE_LITTLE_ENDIAN,
    .valid = {
        .min_access_size = 1,
        .max_access_size = 8,
    },
    .impl = {
        .min_access_size = 1,
        .max_access_size = 8,
    },
};

bool devmemsim_function_realize(PCIDevice *pdev, DevmemsimFunction *fn,
                                enum dms_dev dev, int regs_bar,
                                uint64_t regs_size, int msix_bar,
                                unsigned nvectors, Error **errp)
{
    const char *name = object_get_typename(OBJECT(pdev));
    g_autofree char *regs_name = g_strdup_printf("%s-regs", name);

    if (!fn->node) {
        error_setg(errp, "%s: the node property is required "
                   "(-object devmemsim-node,id=ID ... -device %s,node=ID)",
                   name, name);
        return false;
    }
    if (!fn->node->model) {
        error_setg(errp, "%s: node has no model", name);
        return false;
    }
    if (!devmemsim_node_claim(fn->node, dev, errp)) {
        return false;
    }
    fn->dev = dev;

    pci_config_set_interrupt_pin(pdev->config, 1);
    memory_region_init_io(&fn->regs, OBJECT(pdev), &devmemsim_regs_ops, fn,
                          regs_name, regs_size);
    pci_register_bar(pdev, regs_bar,
                     PCI_BASE_ADDRESS_SPACE_MEMORY |
                     PCI_BASE_ADDRESS_MEM_TYPE_64, &fn->regs);

    if (msix_init_exclusive_bar(pdev, nvectors, msix_bar, errp)) {
        return false;
    }
    for (unsigned v = 0; v < nvectors; v++) {
        msix_vector_use(pdev, v);
    }
    if (pcie_endpoint_cap_init(pdev, DEVMEMSIM_PCIE_CAP_OFFSET) < 0) {
        error_setg(errp, "%s: cannot add the PCIe capability", name);
        msix_uninit_exclusive_bar(pdev);
        return false;
    }
    return true;
}

void devmemsim_function_exit(PCIDevice *pdev)
{
    msix_unuse_all_vectors(pdev);
    msix_uninit_exclusive_bar(pdev);
}
