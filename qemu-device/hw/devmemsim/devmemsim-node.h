/*
 * devmemsim-node: the QOM object that owns one node's SystemC model.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#ifndef HW_DEVMEMSIM_NODE_H
#define HW_DEVMEMSIM_NODE_H

#include "qom/object.h"
#include "qemu/notify.h"
#include "qemu/timer.h"
#include "devmemsim/devmemsim.h"

#define TYPE_DEVMEMSIM_NODE "devmemsim-node"
OBJECT_DECLARE_SIMPLE_TYPE(DevmemsimNode, DEVMEMSIM_NODE)

struct DevmemsimNode {
    Object parent_obj;

    char *config;     /* path of the node's TOML configuration */
    char *stats_json; /* where to write the counters when QEMU exits */
    Notifier exit_notifier;
    dms_node *model;      /* created when the object is completed */
    QEMUTimer step_timer; /* QEMU_CLOCK_VIRTUAL; steps the SystemC kernel */
    QEMUBH *step_bh;      /* continues a step that ran out of budget */
    bool stepping;        /* inside dms_node_step() */
    bool has_nic;
    bool has_gpu;
};

/* "nic" or "gpu", as trace events name the devices. */
static inline const char *devmemsim_dev_name(enum dms_dev dev)
{
    return dev == DMS_DEV_NIC ? "nic" : "gpu";
}

/* Claim the node's NIC or GPU for a device being realized. */
bool devmemsim_node_claim(DevmemsimNode *node, enum dms_dev dev, Error **errp);
/* Re-arm the step timer after the model was poked from a register access. */
void devmemsim_node_kick(DevmemsimNode *node);

#endif
