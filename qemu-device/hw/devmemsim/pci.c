/*
 * Common realize for devmemsim PCIe functions.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include "qemu/osdep.h"
#include "qapi/error.h"
#include "hw/pci/msix.h"
#include "hw/pci/pcie.h"
#include "migration/vmstate.h"
#include "devmemsim/pci_ids.h"
#include "exec/memory.h"
#include "qemu/range.h"
#include "qemu/rcu.h"
#include "qemu/bitmap.h"
#include "qemu/main-loop.h"
#include "qemu/timer.h"
#include "devmemsim-pci.h"
#include "trace.h"

#define DEVMEMSIM_PCIE_CAP_OFFSET 0xa0

static uint64_t devmemsim_regs_read(void *opaque, hwaddr addr, unsigned size)
{
    DevmemsimFunction *fn = opaque;
    uint64_t val;

    /* Device clocks (the NIC's PTP clock) read the time of the access. */
    dms_node_set_time(fn->node->model, qemu_clock_get_ns(QEMU_CLOCK_VIRTUAL));
    val = dms_reg_read(fn->node->model, fn->dev, addr, size);

    trace_devmemsim_mmio_read(fn->name, addr, size, val);
    return val;
}

static void devmemsim_regs_write(void *opaque, hwaddr addr, uint64_t val,
                                 unsigned size)
{
    DevmemsimFunction *fn = opaque;

    trace_devmemsim_mmio_write(fn->name, addr, size, val);
    dms_node_set_time(fn->node->model, qemu_clock_get_ns(QEMU_CLOCK_VIRTUAL));
    dms_reg_write(fn->node->model, fn->dev, addr, val, size);
    devmemsim_node_kick(fn->node);
}

static const MemoryRegionOps devmemsim_regs_ops = {
    .read = devmemsim_regs_read,
    .write = devmemsim_regs_write,
    .endianness = DEVICE_LITTLE_ENDIAN,
    .valid =
        {
            .min_access_size = 1,
            .max_access_size = 8,
        },
    .impl =
        {
            .min_access_size = 1,
            .max_access_size = 8,
        },
};

/*
 * Only guest RAM (and RAM-backed BARs such as a GPU's memory) is a DMA
 * target: anything else, including another device's registers and holes,
 * is a fault the model reports to the driver.
 */
static bool devmemsim_dma_is_ram(AddressSpace *as, hwaddr addr, hwaddr len,
                                 bool is_write)
{
    RCU_READ_LOCK_GUARD();
    while (len) {
        hwaddr xlat, l = len;
        MemoryRegion *mr = address_space_translate(
            as, addr, &xlat, &l, is_write, MEMTXATTRS_UNSPECIFIED);

        if (!memory_region_is_ram(mr) || memory_region_is_ram_device(mr) ||
            (is_write && memory_region_is_rom(mr)) || !l) {
            return false;
        }
        addr += l;
        len -= l;
    }
    return true;
}

static int devmemsim_dma(void *opaque, uint64_t addr, void *buf, uint64_t len,
                         int is_write)
{
    DevmemsimFunction *fn = opaque;
    AddressSpace *as = pci_get_address_space(fn->pdev);
    const char *name = fn->name;

    if (addr + len < addr || !devmemsim_dma_is_ram(as, addr, len, is_write) ||
        pci_dma_rw(fn->pdev, addr, buf, len,
                   is_write ? DMA_DIRECTION_FROM_DEVICE
                            : DMA_DIRECTION_TO_DEVICE,
                   MEMTXATTRS_UNSPECIFIED) != MEMTX_OK) {
        trace_devmemsim_dma_fault(name, addr, len, is_write);
        return -1;
    }
    trace_devmemsim_dma(name, addr, len, is_write);
    return 0;
}

/* From inside a model call: only note the vector (see irq_bh). */
static void devmemsim_irq(void *opaque, unsigned vector)
{
    DevmemsimFunction *fn = opaque;

    if (vector >= fn->pdev->msix_entries_nr) {
        return;
    }
    set_bit(vector, fn->irq_pending);
    qemu_bh_schedule(fn->irq_bh);
}

static void devmemsim_irq_deliver(void *opaque)
{
    DevmemsimFunction *fn = opaque;
    unsigned nr = fn->pdev->msix_entries_nr;

    for (unsigned v = find_first_bit(fn->irq_pending, nr); v < nr;
         v = find_next_bit(fn->irq_pending, nr, v + 1)) {
        clear_bit(v, fn->irq_pending);
        trace_devmemsim_msix(fn->name, v);
        msix_notify(fn->pdev, v);
    }
}

void devmemsim_function_sync_config(DevmemsimFunction *fn)
{
    const char *name = fn->name;
    bool master =
        pci_get_word(fn->pdev->config + PCI_COMMAND) & PCI_COMMAND_MASTER;

    if (!fn->attached) {
        return;
    }
    for (int bar = 0; bar < PCI_NUM_REGIONS - 1; bar++) {
        pcibus_t addr = pci_get_bar_addr(fn->pdev, bar);
        uint64_t size = fn->pdev->io_regions[bar].size;

        if (addr == PCI_BAR_UNMAPPED) {
            addr = 0;
            size = 0;
        }
        if (addr != fn->bar_addr[bar] || size != fn->bar_size[bar]) {
            trace_devmemsim_bar(name, bar, addr, size);
            fn->bar_addr[bar] = addr;
            fn->bar_size[bar] = size;
        }
        dms_set_bar(fn->node->model, fn->dev, bar, addr, size);
    }
    if (master != fn->bus_master) {
        trace_devmemsim_bus_master(name, master);
        fn->bus_master = master;
    }
    dms_set_bus_master(fn->node->model, fn->dev, master);
}

void devmemsim_function_config_write(DevmemsimFunction *fn, uint32_t addr,
                                     uint32_t val, int len)
{
    pci_default_write_config(fn->pdev, addr, val, len);
    if (ranges_overlap(addr, len, PCI_BASE_ADDRESS_0, 24) ||
        ranges_overlap(addr, len, PCI_COMMAND, 2)) {
        devmemsim_function_sync_config(fn);
    }
}

/* The parts of realize that can fail after the claim. */
static bool devmemsim_function_init_pci(PCIDevice *pdev, DevmemsimFunction *fn,
                                        int regs_bar, uint64_t regs_size,
                                        int msix_bar, Error **errp)
{
    const char *name = object_get_typename(OBJECT(pdev));
    g_autofree char *regs_name = g_strdup_printf("%s-regs", name);
    unsigned nvectors = dms_dev_num_vectors(fn->node->model, fn->dev);

    pci_config_set_interrupt_pin(pdev->config, 1);
    memory_region_init_io(&fn->regs, OBJECT(pdev), &devmemsim_regs_ops, fn,
                          regs_name, regs_size);
    pci_register_bar(pdev, regs_bar,
                     PCI_BASE_ADDRESS_SPACE_MEMORY |
                         PCI_BASE_ADDRESS_MEM_TYPE_64,
                     &fn->regs);

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
    fn->irq_pending = bitmap_new(nvectors);
    fn->irq_bh = qemu_bh_new_guarded(devmemsim_irq_deliver, fn,
                                     &DEVICE(pdev)->mem_reentrancy_guard);
    return true;
}

bool devmemsim_function_realize(PCIDevice *pdev, DevmemsimFunction *fn,
                                bool gpu, int regs_bar, uint64_t regs_size,
                                int msix_bar,
                                void (*send)(void *, const uint8_t *, size_t),
                                void (*rx_ready)(void *), Error **errp)
{
    const char *name = object_get_typename(OBJECT(pdev));

    if (!fn->node) {
        error_setg(errp,
                   "%s: the node property is required "
                   "(-object devmemsim-node,id=ID ... -device %s,node=ID)",
                   name, name);
        return false;
    }
    if (!fn->node->model) {
        error_setg(errp, "%s: node has no model", name);
        return false;
    }
    if (!devmemsim_node_claim(fn->node, gpu, fn->index, errp)) {
        return false;
    }
    fn->dev = gpu ? DMS_GPU(fn->index) : DMS_NIC(fn->index);
    fn->claimed = true;
    fn->name = dms_dev_name(fn->node->model, fn->dev);
    fn->pdev = pdev;
    fn->ops = (struct dms_dev_ops){
        .dma = devmemsim_dma,
        .irq = devmemsim_irq,
        .send = send,
        .rx_ready = rx_ready,
    };
    if (!devmemsim_function_init_pci(pdev, fn, regs_bar, regs_size, msix_bar,
                                     errp)) {
        devmemsim_node_release(fn->node, fn->dev);
        fn->claimed = false;
        return false;
    }
    dms_dev_attach(fn->node->model, fn->dev, &fn->ops, fn);
    fn->attached = true;
    devmemsim_function_sync_config(fn);
    return true;
}

void devmemsim_function_exit(DevmemsimFunction *fn)
{
    /* However the device goes (unplug, failed realize), nothing the model
     * holds may point into it afterwards. */
    if (fn->attached) {
        dms_dev_detach(fn->node->model, fn->dev);
        fn->attached = false;
        devmemsim_node_kick(fn->node);
    }
    g_clear_pointer(&fn->irq_bh, qemu_bh_delete);
    g_clear_pointer(&fn->irq_pending, g_free);
    msix_unuse_all_vectors(fn->pdev);
    msix_uninit_exclusive_bar(fn->pdev);
    if (fn->claimed) {
        devmemsim_node_release(fn->node, fn->dev);
        fn->claimed = false;
    }
}

static const VMStateDescription devmemsim_vmstate = {
    .name = "devmemsim-function",
    .unmigratable = 1,
};

void devmemsim_function_class_init(PCIDeviceClass *k, uint16_t device_id,
                                   uint16_t class_id)
{
    DeviceClass *dc = DEVICE_CLASS(k);

    k->vendor_id = DMS_PCI_VENDOR_ID;
    k->device_id = device_id;
    k->subsystem_vendor_id = DMS_PCI_SUBSYS_VENDOR_ID;
    k->subsystem_id = DMS_PCI_SUBSYS_ID;
    k->revision = DMS_PCI_REVISION;
    k->class_id = class_id;
    dc->vmsd = &devmemsim_vmstate;
    dc->hotpluggable = false;
}
