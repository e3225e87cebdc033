/* SPDX-License-Identifier: MIT */
/*
 * libdevmemsim C ABI: what the QEMU glue (qemu-device/hw/devmemsim) calls.
 *
 * The SystemC kernel is global to the process and cannot elaborate once
 * it has run: a QEMU process hosts one node; a process that hosts several
 * (dms-sim) creates them all before the first step, and then stepping any
 * of them (dms_node_step, dms_node_deadline_ns) runs the shared kernel,
 * so all of them. Every call must come from the thread that holds QEMU's
 * BQL; none of them blocks.
 *
 * Time: the host steps the model with dms_node_step(now_ns), where now_ns
 * is QEMU_CLOCK_VIRTUAL in nanoseconds. The model never runs by itself.
 * After any call, dms_node_deadline_ns() says when the model next needs a
 * step (DMS_NO_DEADLINE if it is idle).
 *
 * Bounded work: one dms_node_step() does a bounded amount of work,
 * whatever the guest programmed or a peer sent (see "Work budget" below).
 * If it stopped early, dms_node_deadline_ns() is at or before now_ns: the
 * host lets its own main loop run (QEMU: monitor, I/O) and steps again,
 * e.g. from a bottom half rather than a timer that would fire at once.
 * The model's time then lags the host's until it catches up.
 *
 * Re-entrancy: the callbacks in struct dms_dev_ops run inside
 * dms_node_step() (irq also inside calls that post MSIs, see below). They
 * must not call back into the model synchronously: irq only records the
 * vector and delivers it later (QEMU: a bottom half guarded by the
 * device's re-entrancy guard), so an MSI-X message aimed at a device
 * register cannot re-enter a step; dma only touches RAM, never device
 * registers.
 *
 * Interrupts: a device raises a vector when a cause becomes pending while
 * unmasked (a status bit going from 0 to 1, a queue completion while its
 * vector is armed) or when a mask or arm write enables a cause already
 * pending; a write that changes nothing raises nothing (datasheet,
 * "Interrupts"). A vector raised by the model's own work in a step reaches
 * irq at once. One raised by a host call (a register write above all: an
 * unmask, an arm, a doorbell refused; also a link change) reaches irq at
 * once, from inside the call, if that vector sent nothing for
 * DMS_MSI_GAP_NS before the host's time of the call (dms_node_set_time);
 * else it is posted to the end of that gap and irq sees it from a step
 * then. Posted messages of one vector merge until delivered. So messages
 * that write device registers (one device's MSI-X entry aimed at another's
 * IRQ_MASK or doorbell, and back) send each vector at most once per
 * DMS_MSI_GAP_NS of simulated time: no device-to-device loop runs without
 * simulated time passing, while a driver's unmask or arm goes at once.
 */
#ifndef DEVMEMSIM_DEVMEMSIM_H
#define DEVMEMSIM_DEVMEMSIM_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct dms_node dms_node;

/*
 * Device instances. A node has K NIC/GPU pairs (K = dms_node_num_pairs(),
 * from the node's [topology]; 1 by default): NIC i
 * and GPU i form pair i and share its fault injector. A device id encodes
 * the kind in bit 0 and the index above it: DMS_NIC(i), DMS_GPU(i).
 * DMS_DEV_NIC and DMS_DEV_GPU are DMS_NIC(0) and DMS_GPU(0), so a host
 * with one pair names its devices as it always did. Every call taking an
 * id checks it: an id that names no device of the node (an index >= K, or
 * a NIC-only call given a GPU) is refused as the call says, never used.
 */
enum dms_dev {
	DMS_DEV_NIC = 0,
	DMS_DEV_GPU = 1,
	/* Not a device: makes every id up to it a value of the type in C++
	 * too, so a host's out-of-range id reaches the check. */
	DMS_DEV_ID_MAX = 0x7fffffff,
};

#define DMS_NIC(i) ((enum dms_dev)((unsigned)(i) << 1))
#define DMS_GPU(i) ((enum dms_dev)((unsigned)(i) << 1 | 1u))
/* The pair index of an id, and whether it names a GPU. */
#define DMS_DEV_INDEX(dev) ((unsigned)(dev) >> 1)
#define DMS_DEV_IS_GPU(dev) (((unsigned)(dev)&1u) != 0)

#define DMS_NO_DEADLINE UINT64_MAX

/*
 * Create the node from a TOML node configuration file (see
 * configs/node/default.toml). A NULL or empty path takes every default.
 * On failure returns NULL and writes a one-line message naming the file,
 * the key and the problem into err (errlen bytes, always terminated).
 */
dms_node *dms_node_new(const char *config_path, char *err, size_t errlen);
/*
 * The same for a host without QEMU (dms-sim): any [topology] the schema
 * allows. dms_node_new() refuses the trees QEMU cannot lay out for the
 * guest (tools/devmemsim/topology.py): more than 16 root ports in use
 * (switches and devices on root ports), or more than 32 devices under
 * one switch.
 */
dms_node *dms_node_new_topology(const char *config_path, char *err, size_t errlen);
void dms_node_free(dms_node *node);
/* K, the number of NIC/GPU pairs: ids DMS_NIC(0..K-1), DMS_GPU(0..K-1). */
unsigned dms_node_num_pairs(const dms_node *node);
/*
 * The topology's name of a device ("nic", "gpu" with one pair; "nic0",
 * "gpu3" or the names the file gives), as the stats JSON names it; NULL
 * for an id that names no device. Valid as long as the node.
 */
const char *dms_dev_name(const dms_node *node, enum dms_dev dev);

/*
 * Advance the model toward now_ns (monotonic; earlier values are ignored),
 * doing at most a bounded amount of work (see "Bounded work" above).
 */
void dms_node_step(dms_node *node, uint64_t now_ns);
/* Absolute time of the next pending model activity, or DMS_NO_DEADLINE. */
uint64_t dms_node_deadline_ns(const dms_node *node);

/*
 * Work budget. Every unit of work a guest or a peer can cause is charged
 * as it happens, in units: a DMA transaction of len bytes (descriptor and
 * buffer reads, data and completion writes, gather lists, peer-to-peer
 * included, faulting ones too) costs 1 + len / DMS_WORK_UNIT_BYTES, a
 * frame handed to the wire or taken from it the same by its length,
 * DMS_WORK_UNIT_BYTES of device computation (the CRC engine) one, an MSI
 * one. Re-reading descriptors is DMA like any other: nothing is free.
 *
 * Two budgets bound it:
 * - the NIC's receive and transmit engines each do at most
 *   DMS_ENGINE_FRAMES frames or DMS_ENGINE_WORK units at one simulated
 *   time, checked between frames (a frame or a descriptor scan costs at
 *   most DMS_FRAME_WORK_MAX), then let DMS_WORK_YIELD_NS of simulated time
 *   pass; the GPU's engines yield after every burst (less than that): this
 *   is the devices' behaviour, the same however the host steps them;
 * - dms_node_step() stops once DMS_STEP_WORK units were charged in it
 *   (or after a fixed number of SystemC kernel steps), between two kernel
 *   steps: where it stops changes nothing the devices do.
 * So one dms_node_step() does at most DMS_STEP_WORK units plus what one
 * kernel step can add, one activation of each engine and the node's due
 * MSIs: dms_node_work()'s step_units_bound, fixed by the node's topology.
 */
#define DMS_WORK_UNIT_BYTES 4096
#define DMS_STEP_WORK 4096
#define DMS_ENGINE_FRAMES 64
#define DMS_ENGINE_WORK 1024
#define DMS_FRAME_WORK_MAX 512
#define DMS_WORK_YIELD_NS 10
#define DMS_MSI_GAP_NS 2000 /* a posted MSI after its vector's previous one */

/*
 * What the budget saw. The SystemC kernel is the process's: steps and
 * units count every node of the process (QEMU: one), the MSIs this node's.
 * dms_node_reset_stats() zeroes all but step_units_bound.
 */
struct dms_work_stats {
	uint64_t steps;		   /* dms_node_step() calls */
	uint64_t units;		   /* units charged inside them */
	uint64_t max_step_units;   /* the most one call did */
	uint64_t cut_steps;	   /* calls that stopped with work left at or before now_ns */
	uint64_t msis;		   /* MSIs handed to the host's irq callbacks */
	uint64_t posted_msis;	   /* of them, raised by a host call within their vector's gap */
	uint64_t step_units_bound; /* no call does more (see "Work budget") */
};
void dms_node_work(const dms_node *node, struct dms_work_stats *out);
/*
 * The host's time now (QEMU_CLOCK_VIRTUAL ns; monotonic, earlier values
 * are ignored), without stepping. The model steps only when it has work,
 * so its time lags the host's while it is idle; device clocks (the NIC's
 * PTP clock) run on the later of the two. A host calls it before register
 * accesses and before dms_nic_receive() so that a clock read between steps
 * sees the time of the read, and a frame's RX stamp its arrival.
 */
void dms_node_set_time(dms_node *node, uint64_t now_ns);

/*
 * BAR0 register access. off is the byte offset in the register BAR, size
 * 1, 2, 4 or 8. Unknown or misaligned accesses read DMS_REG_UNDEFINED
 * (truncated to size) and are ignored on write: a guest can never make the
 * model fail through registers. An id that names no device reads all ones
 * and ignores writes, as do dms_dev_detach, dms_set_bus_master and
 * dms_set_bar.
 */
uint64_t dms_reg_read(dms_node *node, enum dms_dev dev, uint64_t off, unsigned size);
void dms_reg_write(dms_node *node, enum dms_dev dev, uint64_t off, uint64_t val, unsigned size);

/*
 * What a device's host side (its QEMU PCI function) does for the model.
 * dma: move len bytes between buf and bus address addr in the device's
 * bus-master address space; returns 0, or -1 if addr is not guest RAM (a
 * DMA fault: the model reports it to the driver). irq: fire MSI-X vector
 * (deferred by the host, see "Re-entrancy" above).
 * NIC only (NULL for the GPU): send puts a frame on the wire; rx_ready
 * says the NIC has room again after dms_nic_receive() refused a frame.
 */
struct dms_dev_ops {
	int (*dma)(void *opaque, uint64_t addr, void *buf, uint64_t len, int is_write);
	void (*irq)(void *opaque, unsigned vector);
	void (*send)(void *opaque, const uint8_t *frame, size_t len);
	void (*rx_ready)(void *opaque);
};
/* Returns 0, or -1 (nothing attached) if dev names no device or ops is NULL. */
int dms_dev_attach(dms_node *node, enum dms_dev dev, const struct dms_dev_ops *ops, void *opaque);
/*
 * The device's host side goes away (QEMU: unrealize, hot-unplug): the
 * device is reset (running jobs stop), the model forgets its callbacks,
 * its BAR windows and, for the GPU, the device memory, and the fabric
 * refuses its DMA. No pointer the host gave for this device is used after
 * the call.
 */
void dms_dev_detach(dms_node *node, enum dms_dev dev);

/*
 * The Bus Master Enable bit of the device's PCI command register. Without
 * it the fabric refuses every request of the device (host memory and
 * peer-to-peer alike) as a DMA fault. On until the host first calls this.
 */
void dms_set_bus_master(dms_node *node, enum dms_dev dev, int on);

/*
 * A BAR the guest placed at bus address addr (size bytes), or removed
 * (size 0). The fabric routes peer-to-peer requests into the GPU's memory
 * BAR by these windows; register BARs are not peer-to-peer targets.
 */
void dms_set_bar(dms_node *node, enum dms_dev dev, unsigned bar, uint64_t addr, uint64_t size);

/*
 * The GPU's device memory: dms_gpu_mem_size() bytes shared with QEMU.
 * dms_dev_set_memory() gives GPU dev's; -1 if dev names no GPU.
 */
void dms_gpu_set_memory(dms_node *node, void *mem);
int dms_dev_set_memory(dms_node *node, enum dms_dev dev, void *mem);
/*
 * Function-level reset of the GPU (QEMU device reset): running and posted
 * jobs stop without completing, every register takes its reset value.
 * dms_dev_reset() resets device dev, NIC or GPU; -1 if it names none.
 */
void dms_gpu_reset(dms_node *node);
int dms_dev_reset(dms_node *node, enum dms_dev dev);

/*
 * The node's counters as JSON (schema in docs/stats.md). The string stays
 * valid until the next call for this node.
 */
const char *dms_node_stats_json(dms_node *node);
void dms_node_reset_stats(dms_node *node);

/*
 * The model's own trace: while fn is set, every device hands it one line
 * per event (doorbells, jobs, descriptors, completions, drops and their
 * reasons); dev says which device instance (dms_dev_name() names it). NULL turns tracing off, which
 * then costs nothing. fn runs inside model calls and must not call the model.
 */
void dms_node_set_trace(dms_node *node,
			void (*fn)(void *opaque, enum dms_dev dev, const char *line), void *opaque);

/*
 * Replace the node's fault injection settings (the [faults] table of
 * configs/node/default.toml) at run time: "key=value" pairs separated by
 * commas or blanks; keys not given are off, "" turns every fault off.
 * Every pair gets them, pair i with the seed faults.seed + i.
 * Returns 0, or -1 with a one-line message in err (errlen bytes) and the
 * settings unchanged.
 */
int dms_node_set_faults(dms_node *node, const char *settings, char *err, size_t errlen);

/*
 * The dms_nic_* and dms_gpu_* calls act on NIC 0 and GPU 0; each has a
 * dms_dev_* twin for any instance, which refuses (-1, or 0 for sizes and
 * counts) an id that names no device of the kind the call needs.
 */

/*
 * A frame from the wire (Ethernet, no FCS). Returns 1 if the NIC took it,
 * 0 if it has no room now: the host keeps the frame and offers it again
 * after the rx_ready callback. dms_dev_receive: -1 if dev names no NIC.
 */
int dms_nic_receive(dms_node *node, const uint8_t *frame, size_t len);
int dms_dev_receive(dms_node *node, enum dms_dev dev, const uint8_t *frame, size_t len);
void dms_nic_set_link(dms_node *node, int up);
int dms_dev_set_link(dms_node *node, enum dms_dev dev, int up);
/* Function-level reset of the NIC (QEMU device reset); see dms_dev_reset. */
void dms_nic_reset(dms_node *node);

/* The NIC's MAC address comes from QEMU's NIC layer (mac= property). */
void dms_nic_set_mac(dms_node *node, const uint8_t mac[6]);
int dms_dev_set_mac(dms_node *node, enum dms_dev dev, const uint8_t mac[6]);

/* Configuration the glue needs to lay out the PCI functions. */
uint64_t dms_gpu_mem_size(const dms_node *node);
uint64_t dms_dev_mem_size(const dms_node *node, enum dms_dev dev); /* GPUs */
unsigned dms_nic_num_queues(const dms_node *node);
unsigned dms_dev_num_queues(const dms_node *node, enum dms_dev dev); /* NICs */
/* MSI-X vectors of the NIC: one per queue pair plus the admin vector. */
unsigned dms_nic_num_vectors(const dms_node *node);
unsigned dms_gpu_num_vectors(const dms_node *node);
unsigned dms_dev_num_vectors(const dms_node *node, enum dms_dev dev);
/* Mode name from the configuration: "functional" or "timed". */
const char *dms_node_mode(const dms_node *node);

#ifdef __cplusplus
}
#endif

#endif /* DEVMEMSIM_DEVMEMSIM_H */
