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
    dms_node *model;          /* created when the object is completed */
    QEMUTimer step_timer;     /* QEMU_CLOCK_VIRTUAL; steps the SystemC kernel */
    QEMUBH *step_bh;          /* continues a step that ran out of budget */
    bool stepping;            /* inside dms_node_step() */
    int64_t step_wall_max_ns; /* the longest dms_node_step(), host time */
    unsigned pairs;           /* the topology's NIC/GPU pairs */
    /*
     * One bit per device id of the model (DMS_NIC(i), DMS_GPU(i)): set
     * while a devmemsim-nic or devmemsim-gpu with that index holds it.
     */
    unsigned long *claimed;
    Notifier machine_done; /* checks that every device was claimed */
};

/*
 * Claim the model's NIC (gpu false) or GPU with this index for a device
 * being realized; its id is then DMS_NIC(index) or DMS_GPU(index).
 */
bool devmemsim_node_claim(DevmemsimNode *node, bool gpu, uint32_t index,
                          Error **errp);
/* Give a claimed device id back (its device is gone). */
void devmemsim_node_release(DevmemsimNode *node, enum dms_dev dev);
/* Re-arm the step timer after the model was poked from a register access. */
void devmemsim_node_kick(DevmemsimNode *node);

#endif
