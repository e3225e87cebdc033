/*
 * devmemsim-gpu: the GPU-like device of a devmemsim node. BAR0 holds the
 * registers (model), BAR2 the device memory: 64-bit prefetchable RAM that
 * QEMU and the model share, so guest CPU mappings of it are direct.
 *
 *   -device devmemsim-gpu,node=n0[,index=I]
 *
 * index names the node's GPU in the model (its topology's GPU I, pair I).
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include "qemu/osdep.h"
#include "qapi/error.h"
#include "hw/pci/pci_device.h"
#include "hw/qdev-properties.h"
#include "qemu/module.h"
#include "exec/memory.h"
#include "devmemsim/pci_ids.h"
#include "devmemsim-pci.h"

#define TYPE_DEVMEMSIM_GPU "devmemsim-gpu"
OBJECT_DECLARE_SIMPLE_TYPE(DevmemsimGpu, DEVMEMSIM_GPU)

struct DevmemsimGpu {
    PCIDevice parent_obj;

    DevmemsimFunction fn;
    MemoryRegion mem; /* BAR2 device memory */
};

static void devmemsim_gpu_realize(PCIDevice *pdev, Error **errp)
{
    DevmemsimGpu *s = DEVMEMSIM_GPU(pdev);
    uint64_t size;

    if (!devmemsim_function_realize(pdev, &s->fn, true, DMS_GPU_BAR_REGS,
                                    DMS_GPU_REGS_SIZE, DMS_GPU_BAR_MSIX, NULL,
                                    NULL, errp)) {
        return;
    }
    /*
     * Shared anonymous RAM (a memfd): pages are only allocated when
     * touched, so a large device memory costs what the guest uses.
     */
    size = dms_dev_mem_size(s->fn.node->model, s->fn.dev);
    if (!memory_region_init_ram_flags_nomigrate(
            &s->mem, OBJECT(s), "devmemsim-gpu-mem", size, RAM_SHARED, errp)) {
        devmemsim_function_exit(&s->fn);
        return;
    }
    dms_dev_set_memory(s->fn.node->model, s->fn.dev,
                       memory_region_get_ram_ptr(&s->mem));
    pci_register_bar(pdev, DMS_GPU_BAR_MEM,
                     PCI_BASE_ADDRESS_SPACE_MEMORY |
                         PCI_BASE_ADDRESS_MEM_PREFETCH |
                         PCI_BASE_ADDRESS_MEM_TYPE_64,
                     &s->mem);
}

static void devmemsim_gpu_write_config(PCIDevice *pdev, uint32_t addr,
                                       uint32_t val, int len)
{
    devmemsim_function_config_write(&DEVMEMSIM_GPU(pdev)->fn, addr, val, len);
}

static void devmemsim_gpu_reset(DeviceState *dev)
{
    DevmemsimGpu *s = DEVMEMSIM_GPU(dev);

    dms_dev_reset(s->fn.node->model, s->fn.dev);
    devmemsim_function_sync_config(&s->fn);
}

static void devmemsim_gpu_exit(PCIDevice *pdev)
{
    devmemsim_function_exit(&DEVMEMSIM_GPU(pdev)->fn);
}

static const Property devmemsim_gpu_props[] = {
    DEFINE_PROP_LINK("node", DevmemsimGpu, fn.node, TYPE_DEVMEMSIM_NODE,
                     DevmemsimNode *),
    DEFINE_PROP_UINT32("index", DevmemsimGpu, fn.index, 0),
};

static void devmemsim_gpu_class_init(ObjectClass *oc, void *data)
{
    DeviceClass *dc = DEVICE_CLASS(oc);
    PCIDeviceClass *k = PCI_DEVICE_CLASS(oc);

    k->realize = devmemsim_gpu_realize;
    k->exit = devmemsim_gpu_exit;
    k->config_write = devmemsim_gpu_write_config;
    device_class_set_legacy_reset(dc, devmemsim_gpu_reset);
    devmemsim_function_class_init(k, DMS_PCI_DEVICE_ID_GPU, DMS_PCI_CLASS_GPU);
    dc->desc = "devmemsim GPU-like device with BAR memory";
    device_class_set_props(dc, devmemsim_gpu_props);
    set_bit(DEVICE_CATEGORY_MISC, dc->categories);
}

static const TypeInfo devmemsim_gpu_info = {
    .name = TYPE_DEVMEMSIM_GPU,
    .parent = TYPE_PCI_DEVICE,
    .instance_size = sizeof(DevmemsimGpu),
    .class_init = devmemsim_gpu_class_init,
    .interfaces = (InterfaceInfo[]){{INTERFACE_PCIE_DEVICE}, {}},
};

static void devmemsim_gpu_register_types(void)
{
    type_register_static(&devmemsim_gpu_info);
}

type_init(devmemsim_gpu_register_types)
