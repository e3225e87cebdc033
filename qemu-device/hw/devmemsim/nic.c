/*
 * devmemsim-nic: the header-split NIC of a devmemsim node, a PCIe endpoint
 * whose registers, rings and DMA engine live in the SystemC model.
 *
 *   -device devmemsim-nic,node=n0[,index=I],netdev=data0[,mac=...]
 *
 * index names the node's NIC in the model (its topology's NIC I, pair I).
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include "qemu/osdep.h"
#include "qapi/error.h"
#include "hw/pci/pci_device.h"
#include "hw/qdev-properties.h"
#include "net/net.h"
#include "qemu/module.h"
#include "devmemsim/pci_ids.h"
#include "devmemsim-pci.h"
#include "trace.h"

#define TYPE_DEVMEMSIM_NIC "devmemsim-nic"
OBJECT_DECLARE_SIMPLE_TYPE(DevmemsimNic, DEVMEMSIM_NIC)

struct DevmemsimNic {
    PCIDevice parent_obj;

    DevmemsimFunction fn;
    NICConf conf;
    NICState *nic;
};

static ssize_t devmemsim_nic_receive(NetClientState *nc, const uint8_t *buf,
                                     size_t size)
{
    DevmemsimNic *s = qemu_get_nic_opaque(nc);

    /* The frame's arrival time, for its PTP timestamp: the model may only
     * get to it in a later step, at a time that lags QEMU's. */
    dms_node_set_time(s->fn.node->model, qemu_clock_get_ns(QEMU_CLOCK_VIRTUAL));
    /* 0: the NIC's FIFO is full; QEMU queues the frame until rx_ready. */
    if (dms_dev_receive(s->fn.node->model, s->fn.dev, buf, size) != 1) {
        trace_devmemsim_nic_rx(s->fn.name, size, false);
        return 0;
    }
    trace_devmemsim_nic_rx(s->fn.name, size, true);
    devmemsim_node_kick(s->fn.node);
    /*
     * Taken, even if the model is to drop it (an empty or runt frame, one
     * longer than the MTU): never 0, which QEMU's net layer reads as "no
     * room" and answers by holding every later frame until rx_ready, which
     * the model only sends after it refused one.
     */
    return size ? size : 1;
}

static void devmemsim_nic_link_status_changed(NetClientState *nc)
{
    DevmemsimNic *s = qemu_get_nic_opaque(nc);

    dms_dev_set_link(s->fn.node->model, s->fn.dev, !nc->link_down);
    devmemsim_node_kick(s->fn.node);
}

static NetClientInfo devmemsim_nic_net_info = {
    .type = NET_CLIENT_DRIVER_NIC,
    .size = sizeof(NICState),
    .receive = devmemsim_nic_receive,
    .link_status_changed = devmemsim_nic_link_status_changed,
};

static void devmemsim_nic_send(void *opaque, const uint8_t *frame, size_t len)
{
    DevmemsimNic *s = container_of(opaque, DevmemsimNic, fn);

    trace_devmemsim_nic_tx(s->fn.name, len);
    qemu_send_packet(qemu_get_queue(s->nic), frame, len);
}

static void devmemsim_nic_rx_ready(void *opaque)
{
    DevmemsimNic *s = container_of(opaque, DevmemsimNic, fn);

    qemu_flush_queued_packets(qemu_get_queue(s->nic));
}

static void devmemsim_nic_realize(PCIDevice *pdev, Error **errp)
{
    DevmemsimNic *s = DEVMEMSIM_NIC(pdev);
    DeviceState *d = DEVICE(pdev);

    if (!devmemsim_function_realize(pdev, &s->fn, false, DMS_NIC_BAR_REGS,
                                    DMS_NIC_REGS_SIZE, DMS_NIC_BAR_MSIX,
                                    devmemsim_nic_send, devmemsim_nic_rx_ready,
                                    errp)) {
        return;
    }
    qemu_macaddr_default_if_unset(&s->conf.macaddr);
    dms_dev_set_mac(s->fn.node->model, s->fn.dev, s->conf.macaddr.a);
    s->nic = qemu_new_nic(&devmemsim_nic_net_info, &s->conf,
                          object_get_typename(OBJECT(s)), d->id,
                          &d->mem_reentrancy_guard, s);
    qemu_format_nic_info_str(qemu_get_queue(s->nic), s->conf.macaddr.a);
}

static void devmemsim_nic_write_config(PCIDevice *pdev, uint32_t addr,
                                       uint32_t val, int len)
{
    devmemsim_function_config_write(&DEVMEMSIM_NIC(pdev)->fn, addr, val, len);
}

static void devmemsim_nic_reset(DeviceState *dev)
{
    DevmemsimNic *s = DEVMEMSIM_NIC(dev);

    dms_dev_reset(s->fn.node->model, s->fn.dev);
    devmemsim_function_sync_config(&s->fn);
}

static void devmemsim_nic_exit(PCIDevice *pdev)
{
    DevmemsimNic *s = DEVMEMSIM_NIC(pdev);

    devmemsim_function_exit(&s->fn);
    qemu_del_nic(s->nic);
}

static const Property devmemsim_nic_props[] = {
    DEFINE_PROP_LINK("node", DevmemsimNic, fn.node, TYPE_DEVMEMSIM_NODE,
                     DevmemsimNode *),
    DEFINE_PROP_UINT32("index", DevmemsimNic, fn.index, 0),
    DEFINE_NIC_PROPERTIES(DevmemsimNic, conf),
};

static void devmemsim_nic_class_init(ObjectClass *oc, void *data)
{
    DeviceClass *dc = DEVICE_CLASS(oc);
    PCIDeviceClass *k = PCI_DEVICE_CLASS(oc);

    k->realize = devmemsim_nic_realize;
    k->exit = devmemsim_nic_exit;
    k->config_write = devmemsim_nic_write_config;
    device_class_set_legacy_reset(dc, devmemsim_nic_reset);
    devmemsim_function_class_init(k, DMS_PCI_DEVICE_ID_NIC, DMS_PCI_CLASS_NIC);
    dc->desc = "devmemsim header-split NIC";
    device_class_set_props(dc, devmemsim_nic_props);
    set_bit(DEVICE_CATEGORY_NETWORK, dc->categories);
}

static const TypeInfo devmemsim_nic_info = {
    .name = TYPE_DEVMEMSIM_NIC,
    .parent = TYPE_PCI_DEVICE,
    .instance_size = sizeof(DevmemsimNic),
    .class_init = devmemsim_nic_class_init,
    .interfaces = (InterfaceInfo[]){{INTERFACE_PCIE_DEVICE}, {}},
};

static void devmemsim_nic_register_types(void)
{
    type_register_static(&devmemsim_nic_info);
}

type_init(devmemsim_nic_register_types)
