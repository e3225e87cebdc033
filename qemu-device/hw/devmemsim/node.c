/*
 * devmemsim-node: owns one node's SystemC model (libdevmemsim) and steps
 * its kernel from a QEMU_CLOCK_VIRTUAL timer, always under the BQL.
 *
 *   -object devmemsim-node,id=n0,config=node.toml
 *   -device devmemsim-nic,node=n0,index=0,... -device devmemsim-gpu,node=n0,...
 *
 * The node's [topology] has K NIC/GPU pairs; devmemsim-nic and
 * devmemsim-gpu name theirs with index= (0..K-1, default 0), and every
 * one of the 2K devices must be on the command line.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include "qemu/osdep.h"
#include "qapi/error.h"
#include "qapi/visitor.h"
#include "qom/object_interfaces.h"
#include "qemu/error-report.h"
#include "qemu/module.h"
#include "qemu/main-loop.h"
#include "qemu/bitmap.h"
#include "system/runstate.h"
#include "system/system.h"
#include "devmemsim-node.h"
#include "trace.h"

/*
 * Work due now (a doorbell, or a step that stopped at its work budget)
 * runs from a bottom half: a timer armed in the past would fire again in
 * the same timer run, and QEMU's main loop (QMP, I/O) would not get a
 * turn until the model had nothing left to do at this time. Before the
 * VM runs, due work waits for the virtual-clock timer instead: bottom
 * halves also run from the block layer's early polls, before the
 * machine (and so the model's devices) exists.
 */
static void devmemsim_node_rearm(DevmemsimNode *s)
{
    uint64_t deadline = dms_node_deadline_ns(s->model);
    int64_t now = qemu_clock_get_ns(QEMU_CLOCK_VIRTUAL);

    if (deadline == DMS_NO_DEADLINE) {
        timer_del(&s->step_timer);
    } else if (deadline <= (uint64_t)now && runstate_is_running()) {
        timer_del(&s->step_timer);
        qemu_bh_schedule(s->step_bh);
    } else {
        timer_mod(&s->step_timer, (int64_t)MIN(deadline, INT64_MAX));
    }
}

static void devmemsim_node_step(void *opaque)
{
    DevmemsimNode *s = opaque;
    int64_t now = qemu_clock_get_ns(QEMU_CLOCK_VIRTUAL);
    int64_t start = qemu_clock_get_ns(QEMU_CLOCK_REALTIME);

    s->stepping = true;
    dms_node_step(s->model, now);
    s->stepping = false;
    /* What one step held the main loop for (the "step-wall-max-us"
     * property): the model's work budget is meant to keep it short. */
    s->step_wall_max_ns = MAX(s->step_wall_max_ns,
                              qemu_clock_get_ns(QEMU_CLOCK_REALTIME) - start);
    trace_devmemsim_step(now, dms_node_deadline_ns(s->model));
    devmemsim_node_rearm(s);
}

static void devmemsim_node_trace_line(void *opaque, enum dms_dev dev,
                                      const char *line)
{
    DevmemsimNode *s = opaque;

    trace_devmemsim_model(dms_dev_name(s->model, dev), line);
}

void devmemsim_node_kick(DevmemsimNode *s)
{
    /* While the model runs (it sent a frame, asked for more), it re-arms
     * the timer itself when the step ends. */
    if (!s->stepping) {
        devmemsim_node_rearm(s);
    }
}

static const char *devmemsim_node_id(DevmemsimNode *s)
{
    return object_get_canonical_path_component(OBJECT(s));
}

bool devmemsim_node_claim(DevmemsimNode *s, bool gpu, uint32_t index,
                          Error **errp)
{
    const char *kind = gpu ? "GPU" : "NIC";
    enum dms_dev dev;

    if (index >= s->pairs) {
        error_setg(errp,
                   "devmemsim-node '%s' has no %s with index %" PRIu32
                   " (its topology has %u NIC/GPU pair%s: index 0..%u)",
                   devmemsim_node_id(s), kind, index, s->pairs,
                   s->pairs == 1 ? "" : "s", s->pairs - 1);
        return false;
    }
    dev = gpu ? DMS_GPU(index) : DMS_NIC(index);
    if (test_bit(dev, s->claimed)) {
        error_setg(errp,
                   "devmemsim-node '%s' already has a %s with index %" PRIu32,
                   devmemsim_node_id(s), kind, index);
        return false;
    }
    set_bit(dev, s->claimed);
    return true;
}

void devmemsim_node_release(DevmemsimNode *s, enum dms_dev dev)
{
    clear_bit(dev, s->claimed);
}

/*
 * Once every device is realized: a device of the topology that no QEMU
 * function claimed would be a NIC or GPU the guest never sees, yet the
 * model would count it (and route to it) as part of the node. Its
 * command line is wrong, so QEMU stops before the guest runs.
 */
static void devmemsim_node_check_claims(Notifier *n, void *data)
{
    DevmemsimNode *s = container_of(n, DevmemsimNode, machine_done);
    unsigned long dev = find_first_zero_bit(s->claimed, 2 * s->pairs);
    bool gpu = DMS_DEV_IS_GPU(dev);

    if (dev >= 2 * s->pairs) {
        return;
    }
    error_report("devmemsim-node '%s': its topology's %s (%s %u of %u) has "
                 "no -device devmemsim-%s,node=%s,index=%u",
                 devmemsim_node_id(s), dms_dev_name(s->model, dev),
                 gpu ? "GPU" : "NIC", DMS_DEV_INDEX(dev), s->pairs,
                 gpu ? "gpu" : "nic", devmemsim_node_id(s), DMS_DEV_INDEX(dev));
    exit(1);
}

static void devmemsim_node_write_stats(Notifier *n, void *data)
{
    DevmemsimNode *s = container_of(n, DevmemsimNode, exit_notifier);
    g_autoptr(GError) err = NULL;
    g_autofree char *json =
        g_strdup_printf("%s\n", dms_node_stats_json(s->model));

    if (!g_file_set_contents(s->stats_json, json, -1, &err)) {
        error_report("devmemsim-node: cannot write stats-json: %s",
                     err->message);
    }
}

static void devmemsim_node_complete(UserCreatable *uc, Error **errp)
{
    DevmemsimNode *s = DEVMEMSIM_NODE(uc);
    static bool have_node;
    char err[512];

    /* A QEMU process is one machine, and the model's SystemC kernel, which
     * all nodes of a process share, is stepped by each node's timer. */
    if (have_node) {
        error_setg(errp, "devmemsim-node: one node per QEMU process");
        return;
    }
    s->model = dms_node_new(s->config, err, sizeof(err));
    if (!s->model) {
        error_setg(errp, "devmemsim-node: %s", err);
        return;
    }
    /* The model formats its trace lines only while someone reads them. */
    if (trace_event_get_state_backends(TRACE_DEVMEMSIM_MODEL)) {
        dms_node_set_trace(s->model, devmemsim_node_trace_line, s);
    }
    have_node = true;
    s->pairs = dms_node_num_pairs(s->model);
    s->claimed = bitmap_new(2 * s->pairs);
    s->machine_done.notify = devmemsim_node_check_claims;
    qemu_add_machine_init_done_notifier(&s->machine_done);
    timer_init_ns(&s->step_timer, QEMU_CLOCK_VIRTUAL, devmemsim_node_step, s);
    s->step_bh = qemu_bh_new(devmemsim_node_step, s);
    devmemsim_node_rearm(s);
    if (s->stats_json) {
        s->exit_notifier.notify = devmemsim_node_write_stats;
        qemu_add_exit_notifier(&s->exit_notifier);
    }
}

static bool devmemsim_node_can_be_deleted(UserCreatable *uc)
{
    return false; /* devices hold pointers into the model */
}

static char *devmemsim_node_get_config(Object *obj, Error **errp)
{
    return g_strdup(DEVMEMSIM_NODE(obj)->config);
}

static void devmemsim_node_set_config(Object *obj, const char *value,
                                      Error **errp)
{
    DevmemsimNode *s = DEVMEMSIM_NODE(obj);

    if (s->model) {
        error_setg(errp, "config cannot change once the node is created");
        return;
    }
    g_free(s->config);
    s->config = g_strdup(value);
}

static char *devmemsim_node_get_stats(Object *obj, Error **errp)
{
    DevmemsimNode *s = DEVMEMSIM_NODE(obj);

    if (!s->model) {
        error_setg(errp, "the node is not created yet");
        return NULL;
    }
    return g_strdup(dms_node_stats_json(s->model));
}

static void devmemsim_node_set_reset_stats(Object *obj, bool value,
                                           Error **errp)
{
    DevmemsimNode *s = DEVMEMSIM_NODE(obj);

    if (value && s->model) {
        dms_node_reset_stats(s->model);
        s->step_wall_max_ns = 0;
    }
}

static void devmemsim_node_get_step_wall_max(Object *obj, Visitor *v,
                                             const char *name, void *opaque,
                                             Error **errp)
{
    uint64_t us = DEVMEMSIM_NODE(obj)->step_wall_max_ns / 1000;

    visit_type_uint64(v, name, &us, errp);
}

/* Fault injection at run time: qom-set NODE faults "rx_drop_rate=0.01 ..." */
static void devmemsim_node_set_faults(Object *obj, const char *value,
                                      Error **errp)
{
    DevmemsimNode *s = DEVMEMSIM_NODE(obj);
    char err[512];

    if (!s->model) {
        error_setg(errp, "faults: set them in the node config ([faults]) "
                         "until the node is created");
        return;
    }
    if (dms_node_set_faults(s->model, value, err, sizeof(err)) < 0) {
        error_setg(errp, "%s", err);
        return;
    }
    /* A link schedule or held-back MSIs move the model's deadline. */
    devmemsim_node_rearm(s);
}

static char *devmemsim_node_get_stats_json(Object *obj, Error **errp)
{
    return g_strdup(DEVMEMSIM_NODE(obj)->stats_json);
}

static void devmemsim_node_set_stats_json(Object *obj, const char *value,
                                          Error **errp)
{
    DevmemsimNode *s = DEVMEMSIM_NODE(obj);

    if (s->model) {
        error_setg(errp, "stats-json cannot change once the node is created");
        return;
    }
    g_free(s->stats_json);
    s->stats_json = g_strdup(value);
}

static void devmemsim_node_finalize(Object *obj)
{
    DevmemsimNode *s = DEVMEMSIM_NODE(obj);

    if (s->model) {
        timer_del(&s->step_timer);
        qemu_bh_delete(s->step_bh);
        if (s->stats_json) {
            qemu_remove_exit_notifier(&s->exit_notifier);
        }
        qemu_remove_machine_init_done_notifier(&s->machine_done);
        g_free(s->claimed);
        dms_node_free(s->model);
    }
    g_free(s->config);
    g_free(s->stats_json);
}

static void devmemsim_node_class_init(ObjectClass *oc, void *data)
{
    UserCreatableClass *ucc = USER_CREATABLE_CLASS(oc);

    ucc->complete = devmemsim_node_complete;
    ucc->can_be_deleted = devmemsim_node_can_be_deleted;
    object_class_property_add_str(oc, "config", devmemsim_node_get_config,
                                  devmemsim_node_set_config);
    object_class_property_set_description(
        oc, "config", "path of the node's TOML configuration");
    object_class_property_add_str(oc, "stats-json",
                                  devmemsim_node_get_stats_json,
                                  devmemsim_node_set_stats_json);
    object_class_property_set_description(
        oc, "stats-json", "file the counters are written to at exit");
    object_class_property_add_str(oc, "stats", devmemsim_node_get_stats, NULL);
    object_class_property_set_description(
        oc, "stats", "the node's counters as JSON (docs/stats.md)");
    object_class_property_add_str(oc, "faults", NULL,
                                  devmemsim_node_set_faults);
    object_class_property_set_description(
        oc, "faults",
        "fault injection settings, key=value as the [faults] "
        "table of the node config (replaces the current ones)");
    object_class_property_add_bool(oc, "reset-stats", NULL,
                                   devmemsim_node_set_reset_stats);
    object_class_property_set_description(oc, "reset-stats",
                                          "write true to zero every counter");
    object_class_property_add(oc, "step-wall-max-us", "uint64",
                              devmemsim_node_get_step_wall_max, NULL, NULL,
                              NULL);
    object_class_property_set_description(
        oc, "step-wall-max-us",
        "the longest one model step held the main loop, in host "
        "microseconds (reset-stats zeroes it)");
}

static const TypeInfo devmemsim_node_info = {
    .name = TYPE_DEVMEMSIM_NODE,
    .parent = TYPE_OBJECT,
    .instance_size = sizeof(DevmemsimNode),
    .instance_finalize = devmemsim_node_finalize,
    .class_init = devmemsim_node_class_init,
    .interfaces = (InterfaceInfo[]){{TYPE_USER_CREATABLE}, {}},
};

static void devmemsim_node_register_types(void)
{
    type_register_static(&devmemsim_node_info);
}

type_init(devmemsim_node_register_types)
