// SPDX-License-Identifier: MIT
// The fuzzer's host: what QEMU does around libdevmemsim, with the checks
// the fuzzer relies on. The node has K NIC/GPU pairs (device ids
// DMS_NIC(i), DMS_GPU(i)). Guest RAM and each GPU's device memory are
// exact-size heap buffers (ASan sees any byte beyond them); DMA reaches RAM
// and the GPU memory BARs only, like qemu-device's devmemsim_dma(); MSI-X
// vectors are decoded from a per-device table like msix_notify(): a message
// to the APIC range is an interrupt, one to RAM or GPU memory is a 4-byte
// store, one to any device's register BAR is a register write delivered
// after dms_node_step() returns (the guarded bottom half of the glue), so
// it never re-enters a step. Frames a NIC sends can loop back to its wire,
// go to the next pair's NIC, or make a synchronous peer reset it.
#ifndef DEVMEMSIM_TESTS_FUZZ_HOST_H
#define DEVMEMSIM_TESTS_FUZZ_HOST_H

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <string>
#include <vector>

#include "devmemsim/devmemsim.h"
#include "devmemsim/pci_ids.h"

namespace fuzz
{

// Bus addresses of the fake machine: 4 MiB of RAM per pair (one MiB per
// queue), device i's BARs at a stride.
constexpr unsigned kMaxPairs = 4;
constexpr uint64_t kRamBase = 0x100000;
constexpr uint64_t kRamPerPair = 4 << 20;
constexpr uint64_t kMsiBase = 0xfee00000, kMsiSize = 0x100000;
constexpr uint64_t kNicRegsBar = 0xfe000000, kGpuRegsBar = 0xfe100000;
constexpr uint64_t kRegsStride = 0x200000;
constexpr uint64_t kGpuMemBar = 0x800000000ull, kGpuMemStride = 0x10000000ull;
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
enum class Peer { Drop, LoopBack, ResetNic, NextPair, kCount };

class Host;
// One device's host side (its QEMU PCI function): the callbacks' opaque.
struct Dev {
	Host *h = nullptr;
	dms_dev id = DMS_DEV_NIC;
	bool attached = false, bus_master = false;
	std::vector<MsixEntry> msix;
	uint8_t *mem = nullptr; // GPUs: device memory
	bool mem_mapped = false;
	Peer peer = Peer::Drop;
	uint64_t offered = 0, sent = 0;
};

class Host
{
public:
	Host(dms_node *node, unsigned pairs)
	    : node_(node), pairs_(pairs), ram_size_(pairs * kRamPerPair),
	      ram_(new uint8_t[ram_size_]), devs_(2 * pairs)
	{
		for (unsigned i = 0; i < devs_.size(); i++) {
			devs_[i].h = this;
			devs_[i].id = dms_dev(i);
			attach(dms_dev(i));
			devs_[i].msix.resize(dms_dev_num_vectors(node, dms_dev(i)));
			vectors_ += unsigned(devs_[i].msix.size());
		}
	}

	dms_node *node() { return node_; }
	unsigned pairs() const { return pairs_; }
	uint64_t ram_size() const { return ram_size_; }
	uint8_t *ram() { return ram_; }
	uint8_t *gpu_mem(unsigned pair = 0) { return devs_[2 * pair + 1].mem; }
	uint64_t now() const { return now_; }
	void set_peer(unsigned nic, Peer p) { devs_[2 * nic].peer = p; }
	// Called for every NIC write into guest RAM, before it lands.
	void (*nic_ram_write)(unsigned nic, uint64_t addr, uint64_t len) = nullptr;

	// A fresh machine for the next input: RAM, tables and queues cleared,
	// BARs at their places; the caller resets the devices.
	void clear()
	{
		std::memset(ram_, 0, ram_size_);
		for (Dev &d : devs_) {
			if (d.mem)
				std::memset(d.mem, 0, kGpuMemSize);
			for (MsixEntry &e : d.msix)
				e = MsixEntry{};
			d.peer = Peer::Drop;
			set_bus_master(d.id, true);
		}
		writes_.clear();
		frames_.clear();
		place_bars(true);
		reset_counts();
	}
	void place_bars(bool gpu_mem_mapped)
	{
		for (unsigned i = 0; i < pairs_; i++)
			place_bars(i, gpu_mem_mapped);
	}
	void place_bars(unsigned pair, bool gpu_mem_mapped)
	{
		dms_set_bar(node_, DMS_NIC(pair), DMS_NIC_BAR_REGS, nic_regs(pair),
			    DMS_NIC_REGS_SIZE);
		dms_set_bar(node_, DMS_GPU(pair), DMS_GPU_BAR_REGS, gpu_regs(pair),
			    DMS_GPU_REGS_SIZE);
		dms_set_bar(node_, DMS_GPU(pair), DMS_GPU_BAR_MEM, gpu_bar(pair),
			    gpu_mem_mapped ? kGpuMemSize : 0);
		devs_[2 * pair + 1].mem_mapped = gpu_mem_mapped && devs_[2 * pair + 1].mem;
	}
	static uint64_t nic_regs(unsigned pair) { return kNicRegsBar + pair * kRegsStride; }
	static uint64_t gpu_regs(unsigned pair) { return kGpuRegsBar + pair * kRegsStride; }
	static uint64_t gpu_bar(unsigned pair) { return kGpuMemBar + pair * kGpuMemStride; }
	void reset_counts()
	{
		for (Dev &d : devs_)
			d.offered = d.sent = 0;
		d2d_at_time_ = 0;
		d2d_time_ = UINT64_MAX;
	}

	// Hot-unplug and plug again (QEMU: unrealize, realize): the GPU's
	// memory is freed at once, so ASan reports any later use by the model;
	// no callback may come for the device in between.
	void replug(dms_dev dev)
	{
		Dev &d = devs_[dev];
		dms_dev_detach(node_, dev);
		d.attached = false;
		if (DMS_DEV_IS_GPU(dev)) {
			delete[] d.mem;
			d.mem = nullptr;
			d.mem_mapped = false;
		}
		step(0);
		run(4);
		attach(dev);
		place_bars(DMS_DEV_INDEX(dev), true);
	}
	// The PCI command register's Bus Master Enable bit.
	void set_bus_master(dms_dev dev, bool on)
	{
		devs_[dev].bus_master = on;
		dms_set_bus_master(node_, dev, on);
	}
	uint64_t frames_taken(unsigned nic) const { return devs_[2 * nic].offered; }
	uint64_t frames_sent(unsigned nic) const { return devs_[2 * nic].sent; }

	void set_msix(dms_dev dev, unsigned vector, const MsixEntry &e)
	{
		std::vector<MsixEntry> &table = devs_[dev].msix;
		if (vector >= table.size())
			return;
		const bool was_pending = table[vector].pending;
		table[vector] = e;
		// Unmasking a vector with its pending bit set sends it (PCIe 6.1.4.5).
		if (!e.masked && was_pending)
			deliver(table[vector]);
	}

	// A frame from the wire into NIC nic; kept for later when it has no
	// room. The rx contract (devmemsim.h): 1 taken, 0 no room now, and a
	// frame refused leaves no trace (no counter moves: the host offers it
	// again, so a frame taken but reported refused would count twice).
	void offer(unsigned nic, const uint8_t *frame, size_t len)
	{
		const std::string before = dms_node_stats_json(node_);
		const int ret = dms_dev_receive(node_, DMS_NIC(nic), frame, len);
		if (ret == 1) {
			devs_[2 * nic].offered++;
			return;
		}
		if (ret != 0)
			fail("dms_dev_receive() of a %llu-byte frame returned %llu", len,
			     uint64_t(ret));
		if (before != dms_node_stats_json(node_))
			fail("NIC %llu refused a %llu-byte frame but counted it", nic, len);
		if (frames_.size() < kMaxPendingFrames)
			frames_.push_back({nic, std::vector<uint8_t>(frame, frame + len)});
	}

	// One dms_node_step() to now + delta_ns, timed and within the model's
	// own work bound, then what QEMU does after it: register writes from
	// MSIs, frames re-offered.
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
		dms_work_stats w;
		dms_node_work(node_, &w);
		if (w.max_step_units > w.step_units_bound)
			fail("a dms_node_step() did %llu units of work, over its bound %llu",
			     w.max_step_units, w.step_units_bound);
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
		static const dms_dev_ops nic_ops = {dma, irq, send, rx_ready};
		static const dms_dev_ops gpu_ops = {dma, irq, nullptr, nullptr};
		Dev &d = devs_[dev];
		dms_dev_attach(node_, dev, DMS_DEV_IS_GPU(dev) ? &gpu_ops : &nic_ops, &d);
		d.attached = true;
		if (DMS_DEV_IS_GPU(dev)) {
			d.mem = new uint8_t[kGpuMemSize]();
			dms_dev_set_memory(node_, dev, d.mem);
		}
		set_bus_master(dev, true);
	}
	static Dev &check_attached(void *opaque)
	{
		Dev &d = *static_cast<Dev *>(opaque);
		if (!d.attached)
			fail("a callback of device %llu after dms_dev_detach", d.id);
		return d;
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
			while (!frames_.empty()) {
				const Frame &f = frames_.front();
				if (!dms_dev_receive(node_, DMS_NIC(f.nic), f.bytes.data(),
						     f.bytes.size()))
					break;
				devs_[2 * f.nic].offered++;
				frames_.pop_front();
			}
		}
	}

	static bool in(uint64_t addr, uint64_t len, uint64_t base, uint64_t size)
	{
		return addr >= base && len <= size && addr - base <= size - len;
	}

	// Every DMA lands in guest RAM or a mapped GPU memory BAR (any
	// pair's: peer-to-peer), or is a fault; ASan checks the bytes.
	static int dma(void *opaque, uint64_t addr, void *buf, uint64_t len, int is_write)
	{
		Dev &d = check_attached(opaque);
		Host *h = d.h;
		if (!d.bus_master)
			fail("DMA at %#llx (%llu bytes) with bus mastering off", addr, len);
		if (len && !buf)
			fail("DMA of %llu bytes at %#llx without a buffer", len, addr);
		uint8_t *mem = nullptr;
		if (in(addr, len, kRamBase, h->ram_size_)) {
			mem = h->ram_ + (addr - kRamBase);
			if (!DMS_DEV_IS_GPU(d.id) && is_write && h->nic_ram_write)
				h->nic_ram_write(DMS_DEV_INDEX(d.id), addr, len);
		}
		for (unsigned p = 0; !mem && p < h->pairs_; p++) {
			Dev &g = h->devs_[2 * p + 1];
			if (g.mem_mapped && in(addr, len, gpu_bar(p), kGpuMemSize))
				mem = g.mem + (addr - gpu_bar(p));
		}
		if (!mem)
			return -1; // not RAM: a DMA fault, as in devmemsim_dma()
		// ASan checks that the model's buffer holds len bytes.
		if (is_write)
			std::memcpy(mem, buf, len);
		else
			std::memcpy(buf, mem, len);
		return 0;
	}

	static void irq(void *opaque, unsigned vector)
	{
		Dev &d = check_attached(opaque);
		if (!d.bus_master)
			return; // an MSI is a memory write: dropped without bus mastering
		if (vector >= d.msix.size())
			fail("MSI-X vector %llu of a device with %llu vectors", vector,
			     d.msix.size());
		d.h->irqs_in_step_++;
		if (d.msix[vector].masked)
			d.msix[vector].pending = true;
		else
			d.h->deliver(d.msix[vector]);
	}

	// msi_send_message(): a 4-byte store at the message address.
	void deliver(MsixEntry &e)
	{
		e.pending = false;
		if (in(e.addr, 4, kMsiBase, kMsiSize))
			return; // an interrupt to a CPU
		if (in(e.addr, 4, kRamBase, ram_size_)) {
			std::memcpy(ram_ + (e.addr - kRamBase), &e.data, 4);
			return;
		}
		for (unsigned p = 0; p < pairs_; p++) {
			Dev &g = devs_[2 * p + 1];
			if (g.mem_mapped && in(e.addr, 4, gpu_bar(p), kGpuMemSize))
				std::memcpy(g.mem + (e.addr - gpu_bar(p)), &e.data, 4);
			else if (in(e.addr, 4, nic_regs(p), DMS_NIC_REGS_SIZE))
				queue_write({DMS_NIC(p), e.addr - nic_regs(p), e.data});
			else if (in(e.addr, 4, gpu_regs(p), DMS_GPU_REGS_SIZE))
				queue_write({DMS_GPU(p), e.addr - gpu_regs(p), e.data});
		}
	}
	// A device-to-device message. Each one that a register write raises
	// is posted DMS_MSI_POST_NS later (devmemsim.h, "Interrupts"), so
	// messages while neither the host's nor the model's time (the stats'
	// time_ns, which lags while the model idles) moves are bounded: a few
	// per vector.
	void queue_write(const RegWrite &w)
	{
		const std::string js = dms_node_stats_json(node_);
		const size_t at = js.find("\"time_ns\": ");
		const uint64_t t = at == std::string::npos
					   ? 0
					   : std::strtoull(js.c_str() + at + 11, nullptr, 10);
		const bool same = t == d2d_time_ && now_ == d2d_host_time_;
		d2d_at_time_ = same ? d2d_at_time_ + 1 : 1;
		d2d_time_ = t;
		d2d_host_time_ = now_;
		if (d2d_at_time_ > 8ull * vectors_ + 64)
			fail("%llu device-to-device MSIs at simulated time %llu ns: a loop",
			     d2d_at_time_, t);
		if (writes_.size() < kMaxPendingWrites)
			writes_.push_back(w);
	}

	static void send(void *opaque, const uint8_t *frame, size_t len)
	{
		Dev &d = check_attached(opaque);
		Host *h = d.h;
		if (len && !frame)
			fail("a sent frame of %llu bytes without data", len);
		d.sent++;
		std::vector<uint8_t> copy(frame, frame + len); // ASan: len bytes readable
		const unsigned nic = DMS_DEV_INDEX(d.id);
		switch (d.peer) {
		case Peer::LoopBack:
		case Peer::NextPair:
			if (h->frames_.size() < kMaxPendingFrames) {
				const unsigned to =
					d.peer == Peer::LoopBack ? nic : (nic + 1) % h->pairs_;
				h->frames_.push_back({to, std::move(copy)});
				h->rx_room_ = true;
			}
			break;
		case Peer::ResetNic: // a peer that resets the NIC from its receive path
			d.peer = Peer::Drop;
			dms_dev_reset(h->node_, d.id);
			break;
		default:
			break;
		}
	}
	static void rx_ready(void *opaque) { check_attached(opaque).h->rx_room_ = true; }

	struct Frame {
		unsigned nic;
		std::vector<uint8_t> bytes;
	};
	dms_node *node_;
	unsigned pairs_, vectors_ = 0;
	uint64_t ram_size_;
	uint8_t *ram_;
	std::vector<Dev> devs_;
	std::deque<RegWrite> writes_;
	std::deque<Frame> frames_;
	bool rx_room_ = false;
	uint64_t now_ = 0;
	uint64_t irqs_in_step_ = 0;
	uint64_t d2d_at_time_ = 0, d2d_time_ = UINT64_MAX, d2d_host_time_ = 0;
};

} // namespace fuzz

#endif
