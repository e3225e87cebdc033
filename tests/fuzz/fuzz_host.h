// SPDX-License-Identifier: MIT
// The fuzzer's host: what QEMU does around libdevmemsim, with the checks
// the fuzzer relies on. Guest RAM and the GPU's device memory are
// exact-size heap buffers (ASan sees any byte beyond them); DMA reaches
// RAM and the GPU memory BAR only, like qemu-device's devmemsim_dma();
// MSI-X vectors are decoded from a per-device table like msix_notify(): a
// message to the APIC range is an interrupt, one to RAM or GPU memory is a
// 4-byte store, one to a register BAR is a register write delivered after
// dms_node_step() returns (the guarded bottom half of the glue). Frames the
// NIC sends can loop back to its wire, or make a synchronous peer reset it.
#ifndef DEVMEMSIM_TESTS_FUZZ_HOST_H
#define DEVMEMSIM_TESTS_FUZZ_HOST_H

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <vector>

#include "devmemsim/devmemsim.h"
#include "devmemsim/pci_ids.h"

namespace fuzz
{

// Bus addresses of the fake machine.
constexpr uint64_t kRamBase = 0x100000;
constexpr uint64_t kRamSize = 4 << 20;
constexpr uint64_t kMsiBase = 0xfee00000, kMsiSize = 0x100000;
constexpr uint64_t kNicRegsBar = 0xfe000000, kGpuRegsBar = 0xfe100000;
constexpr uint64_t kGpuMemBar = 0x800000000ull;
constexpr uint64_t kGpuMemSize = 1 << 20; // gpu.mem_size in the fuzz config

// Work bounds per dms_node_step() call (the model's own budget is far
// below them; these catch a step that does not return in time).
constexpr double kStepSeconds = 1.0;
constexpr unsigned kMaxPendingWrites = 1024, kMaxPendingFrames = 64;
constexpr uint64_t kMaxHopNs = 100000000; // 100 ms

[[noreturn]] inline void fail(const char *fmt, uint64_t a = 0, uint64_t b = 0)
{
	std::fprintf(stderr, "fuzz-node: invariant broken: ");
	std::fprintf(stderr, fmt, static_cast<unsigned long long>(a),
		     static_cast<unsigned long long>(b));
	std::fprintf(stderr, "\n");
	std::abort();
}

struct MsixEntry {
	uint64_t addr = 0;
	uint32_t data = 0;
	bool masked = true;
	bool pending = false;
};

struct RegWrite {
	dms_dev dev;
	uint64_t off;
	uint32_t val;
};

// What a synchronous network peer does with a frame the NIC sends.
enum class Peer { Drop, LoopBack, ResetNic };

class Host
{
public:
	explicit Host(dms_node *node) : node_(node), ram_(new uint8_t[kRamSize])
	{
		attach(DMS_DEV_NIC);
		attach(DMS_DEV_GPU);
		msix_[DMS_DEV_NIC].resize(dms_nic_num_vectors(node));
		msix_[DMS_DEV_GPU].resize(dms_gpu_num_vectors(node));
	}

	dms_node *node() { return node_; }
	uint8_t *ram() { return ram_; }
	uint8_t *gpu_mem() { return gpu_mem_; }
	uint64_t now() const { return now_; }
	Peer peer = Peer::Drop;
	// Called for every NIC write into guest RAM, before it lands.
	void (*nic_ram_write)(uint64_t addr, uint64_t len) = nullptr;

	// A fresh machine for the next input: RAM, tables and queues cleared,
	// BARs at their places; the caller resets the devices.
	void clear()
	{
		std::memset(ram_, 0, kRamSize);
		std::memset(gpu_mem_, 0, kGpuMemSize);
		for (auto &table : msix_)
			for (MsixEntry &e : table)
				e = MsixEntry{};
		writes_.clear();
		frames_.clear();
		peer = Peer::Drop;
		place_bars(true);
		set_bus_master(DMS_DEV_NIC, true);
		set_bus_master(DMS_DEV_GPU, true);
		offered_ = sent_ = 0;
	}
	void place_bars(bool gpu_mem_mapped)
	{
		dms_set_bar(node_, DMS_DEV_NIC, DMS_NIC_BAR_REGS, kNicRegsBar, DMS_NIC_REGS_SIZE);
		dms_set_bar(node_, DMS_DEV_GPU, DMS_GPU_BAR_REGS, kGpuRegsBar, DMS_GPU_REGS_SIZE);
		dms_set_bar(node_, DMS_DEV_GPU, DMS_GPU_BAR_MEM, kGpuMemBar,
			    gpu_mem_mapped ? kGpuMemSize : 0);
		gpu_mem_mapped_ = gpu_mem_mapped;
	}
	void reset_counts() { offered_ = sent_ = 0; }

	// Hot-unplug and plug again (QEMU: unrealize, realize): the GPU's
	// memory is freed at once, so ASan reports any later use by the model;
	// no callback may come for the device in between.
	void replug(dms_dev dev)
	{
		dms_dev_detach(node_, dev);
		attached_[dev] = false;
		if (dev == DMS_DEV_GPU) {
			delete[] gpu_mem_;
			gpu_mem_ = nullptr;
			gpu_mem_mapped_ = false;
		}
		step(0);
		run(4);
		attach(dev);
		place_bars(true);
	}
	// The PCI command register's Bus Master Enable bit.
	void set_bus_master(dms_dev dev, bool on)
	{
		bus_master_[dev] = on;
		dms_set_bus_master(node_, dev, on);
	}
	uint64_t frames_taken() const { return offered_; }
	uint64_t frames_sent() const { return sent_; }

	void set_msix(dms_dev dev, unsigned vector, const MsixEntry &e)
	{
		std::vector<MsixEntry> &table = msix_[dev];
		if (vector >= table.size())
			return;
		const bool was_pending = table[vector].pending;
		table[vector] = e;
		// Unmasking a vector with its pending bit set sends it (PCIe 6.1.4.5).
		if (!e.masked && was_pending)
			deliver(table[vector]);
	}

	// A frame from the wire; kept for later when the NIC has no room.
	void offer(const uint8_t *frame, size_t len)
	{
		if (dms_nic_receive(node_, frame, len)) {
			offered_++;
		} else if (frames_.size() < kMaxPendingFrames) {
			frames_.emplace_back(frame, frame + len);
		}
	}

	// One dms_node_step() to now + delta_ns, timed, then what QEMU does
	// after it: register writes from MSIs, frames re-offered.
	void step(uint64_t delta_ns)
	{
		now_ += delta_ns;
		irqs_in_step_ = 0;
		const auto t0 = std::chrono::steady_clock::now();
		dms_node_step(node_, now_);
		const std::chrono::duration<double> took = std::chrono::steady_clock::now() - t0;
		if (took.count() > kStepSeconds)
			fail("dms_node_step took %llu ms (%llu MSIs in it): unbounded work",
			     uint64_t(took.count() * 1000), irqs_in_step_);
		after_step();
	}

	// Steps at each deadline until the model is idle (or max_steps). A
	// deadline more than kMaxHopNs away counts as idle: QEMU's clock would
	// take that long to get there, and kStep ops move time on anyway.
	void run(unsigned max_steps)
	{
		for (unsigned i = 0; i < max_steps; i++) {
			const uint64_t d = dms_node_deadline_ns(node_);
			const bool idle =
				d == DMS_NO_DEADLINE || (d > now_ && d - now_ > kMaxHopNs);
			if (idle && writes_.empty() && !rx_room_)
				return;
			step(idle || d <= now_ ? 0 : d - now_);
		}
	}

private:
	void attach(dms_dev dev)
	{
		static const dms_dev_ops nic_ops = {dma<DMS_DEV_NIC>, irq<DMS_DEV_NIC>, send,
						    rx_ready};
		static const dms_dev_ops gpu_ops = {dma<DMS_DEV_GPU>, irq<DMS_DEV_GPU>, nullptr,
						    nullptr};
		dms_dev_attach(node_, dev, dev == DMS_DEV_NIC ? &nic_ops : &gpu_ops, this);
		attached_[dev] = true;
		if (dev == DMS_DEV_GPU) {
			gpu_mem_ = new uint8_t[kGpuMemSize]();
			dms_gpu_set_memory(node_, gpu_mem_);
		}
		set_bus_master(dev, true);
	}
	void check_attached(dms_dev dev) const
	{
		if (!attached_[dev])
			fail("a callback of device %llu after dms_dev_detach", dev);
	}

	void after_step()
	{
		for (unsigned n = 0; n < kMaxPendingWrites && !writes_.empty(); n++) {
			const RegWrite w = writes_.front();
			writes_.pop_front();
			dms_reg_write(node_, w.dev, w.off, w.val, 4);
		}
		if (rx_room_) {
			rx_room_ = false;
			while (!frames_.empty() && dms_nic_receive(node_, frames_.front().data(),
								   frames_.front().size())) {
				offered_++;
				frames_.pop_front();
			}
		}
	}

	bool in(uint64_t addr, uint64_t len, uint64_t base, uint64_t size) const
	{
		return addr >= base && len <= size && addr - base <= size - len;
	}

	template <dms_dev D>
	static int dma(void *opaque, uint64_t addr, void *buf, uint64_t len, int is_write)
	{
		auto *h = static_cast<Host *>(opaque);
		h->check_attached(D);
		if (!h->bus_master_[D])
			fail("DMA at %#llx (%llu bytes) with bus mastering off", addr, len);
		if (len && !buf)
			fail("DMA of %llu bytes at %#llx without a buffer", len, addr);
		uint8_t *mem;
		if (h->in(addr, len, kRamBase, kRamSize)) {
			mem = h->ram_ + (addr - kRamBase);
			if (D == DMS_DEV_NIC && is_write && h->nic_ram_write)
				h->nic_ram_write(addr, len);
		} else if (h->gpu_mem_mapped_ && h->in(addr, len, kGpuMemBar, kGpuMemSize))
			mem = h->gpu_mem_ + (addr - kGpuMemBar);
		else
			return -1; // not RAM: a DMA fault, as in devmemsim_dma()
		// ASan checks that the model's buffer holds len bytes.
		if (is_write)
			std::memcpy(mem, buf, len);
		else
			std::memcpy(buf, mem, len);
		return 0;
	}

	template <dms_dev D> static void irq(void *opaque, unsigned vector)
	{
		auto *h = static_cast<Host *>(opaque);
		h->check_attached(D);
		if (!h->bus_master_[D])
			return; // an MSI is a memory write: dropped without bus mastering
		std::vector<MsixEntry> &table = h->msix_[D];
		if (vector >= table.size())
			fail("MSI-X vector %llu of a device with %llu vectors", vector,
			     table.size());
		h->irqs_in_step_++;
		if (table[vector].masked)
			table[vector].pending = true;
		else
			h->deliver(table[vector]);
	}

	// msi_send_message(): a 4-byte store at the message address.
	void deliver(MsixEntry &e)
	{
		e.pending = false;
		if (in(e.addr, 4, kMsiBase, kMsiSize))
			return; // an interrupt to a CPU
		if (in(e.addr, 4, kRamBase, kRamSize))
			std::memcpy(ram_ + (e.addr - kRamBase), &e.data, 4);
		else if (gpu_mem_mapped_ && in(e.addr, 4, kGpuMemBar, kGpuMemSize))
			std::memcpy(gpu_mem_ + (e.addr - kGpuMemBar), &e.data, 4);
		else if (in(e.addr, 4, kNicRegsBar, DMS_NIC_REGS_SIZE))
			queue_write({DMS_DEV_NIC, e.addr - kNicRegsBar, e.data});
		else if (in(e.addr, 4, kGpuRegsBar, DMS_GPU_REGS_SIZE))
			queue_write({DMS_DEV_GPU, e.addr - kGpuRegsBar, e.data});
	}
	void queue_write(const RegWrite &w)
	{
		if (writes_.size() < kMaxPendingWrites)
			writes_.push_back(w);
	}

	static void send(void *opaque, const uint8_t *frame, size_t len)
	{
		auto *h = static_cast<Host *>(opaque);
		h->check_attached(DMS_DEV_NIC);
		if (len && !frame)
			fail("a sent frame of %llu bytes without data", len);
		h->sent_++;
		std::vector<uint8_t> copy(frame, frame + len); // ASan: len bytes readable
		switch (h->peer) {
		case Peer::Drop:
			break;
		case Peer::LoopBack:
			if (h->frames_.size() < kMaxPendingFrames) {
				h->frames_.push_back(std::move(copy));
				h->rx_room_ = true;
			}
			break;
		case Peer::ResetNic: // a peer that resets the NIC from its receive path
			h->peer = Peer::Drop;
			dms_nic_reset(h->node_);
			break;
		}
	}
	static void rx_ready(void *opaque)
	{
		auto *h = static_cast<Host *>(opaque);
		h->check_attached(DMS_DEV_NIC);
		h->rx_room_ = true;
	}

	dms_node *node_;
	uint8_t *ram_, *gpu_mem_ = nullptr;
	bool gpu_mem_mapped_ = true;
	bool attached_[2] = {}, bus_master_[2] = {};
	std::vector<MsixEntry> msix_[2];
	std::deque<RegWrite> writes_;
	std::deque<std::vector<uint8_t>> frames_;
	bool rx_room_ = false;
	uint64_t now_ = 0;
	uint64_t offered_ = 0, sent_ = 0, irqs_in_step_ = 0;
};

} // namespace fuzz

#endif
