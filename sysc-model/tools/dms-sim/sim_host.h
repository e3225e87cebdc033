// SPDX-License-Identifier: MIT
// dms-sim's host side of a node: simulated time outside the model (an
// event queue in picoseconds), one CPU core that host software occupies,
// host memory (a byte buffer standing in for guest RAM) and the GPU's
// device memory, served to the model through the C ABI's callbacks.
#pragma once

#include <cstdint>
#include <functional>
#include <queue>
#include <string>
#include <vector>

#include "devmemsim/devmemsim.h"

namespace dms_sim
{

constexpr uint64_t kPsPerNs = 1000;

// Host events in time order; events at one time run in the order they
// were scheduled, so a run is deterministic.
class Events
{
public:
	using Fn = std::function<void()>;
	void at(uint64_t ps, Fn fn) { q_.push(Event{ps, seq_++, std::move(fn)}); }
	bool empty() const { return q_.empty(); }
	uint64_t next_ps() const { return q_.top().ps; }
	uint64_t now_ps() const { return now_; }
	// The model's time moved on (callbacks during a step happen then).
	void advance(uint64_t ps) { now_ = std::max(now_, ps); }
	// Run the earliest event.
	void run_next();
	uint64_t count() const { return seq_; }

private:
	struct Event {
		uint64_t ps, seq;
		Fn fn;
		bool operator>(const Event &o) const
		{
			return ps != o.ps ? ps > o.ps : seq > o.seq;
		}
	};
	std::priority_queue<Event, std::vector<Event>, std::greater<Event>> q_;
	uint64_t seq_ = 0, now_ = 0;
};

// One host CPU core: work runs when the core is free, one piece at a time.
struct Cpu {
	uint64_t free_ps = 0, busy_ps = 0;
	// Start of work that becomes runnable at ps.
	uint64_t start(uint64_t ps) const { return std::max(ps, free_ps); }
	void occupy(uint64_t start_ps, uint64_t cost_ps)
	{
		free_ps = start_ps + cost_ps;
		busy_ps += cost_ps;
	}
};

// Guest RAM: bus addresses [base, base + size). Bus address 0 is never RAM.
// Sparse, like the GPU's memory: only the pages a run touches cost RAM
// (and page faults).
class HostMemory
{
public:
	static constexpr uint64_t kBase = 0x100000;
	explicit HostMemory(uint64_t size);
	~HostMemory();
	HostMemory(const HostMemory &) = delete;
	HostMemory &operator=(const HostMemory &) = delete;
	// Carve len bytes aligned to align (a power of two); throws when full.
	uint64_t alloc(uint64_t len, uint64_t align);
	uint8_t *at(uint64_t addr) { return ram_ + (addr - kBase); }
	bool contains(uint64_t addr, uint64_t len) const
	{
		return addr >= kBase && len <= size_ && addr - kBase <= size_ - len;
	}

private:
	uint8_t *ram_;
	uint64_t size_, used_ = 0;
};

// GPU 0's memory BAR sits at this bus address (above any host RAM), GPU
// i's i windows of its size above.
constexpr uint64_t kGpuBarBus = 0x4000000000ull;

// One NIC/GPU pair of a simulated machine, with the host memory and the
// CPU core that serve it (a machine of K pairs is K of these on one
// model node, each flow on its own core). The model's callbacks only
// record what happened as host events (the C ABI forbids calling back
// into the model from them).
class SimNode
{
public:
	struct Hooks {
		std::function<void(unsigned vector)> nic_irq, gpu_irq;
		std::function<void(const uint8_t *frame, size_t len)> send;
		std::function<void()> rx_ready;
	};
	// index: the machine; pair: the model node's NIC/GPU pair.
	SimNode(dms_node *node, unsigned index, unsigned pair, Events &ev, uint64_t host_mem_bytes);
	~SimNode();
	SimNode(const SimNode &) = delete;
	SimNode &operator=(const SimNode &) = delete;

	void set_hooks(Hooks h) { hooks_ = std::move(h); }
	dms_node *node() const { return node_; }
	unsigned index() const { return index_; }
	unsigned pair() const { return pair_; }
	dms_dev nic() const { return DMS_NIC(pair_); }
	dms_dev gpu() const { return DMS_GPU(pair_); }
	uint64_t gpu_bar() const { return kGpuBarBus + pair_ * gpu_size_; }
	HostMemory &mem() { return mem_; }
	uint8_t *gpu_mem() { return gpu_mem_; }
	uint64_t gpu_mem_size() const { return gpu_size_; }
	// Carve len bytes of device memory (page aligned), from the bottom or
	// from the top; the offset. Throws when the GPU memory is full.
	uint64_t gpu_alloc(uint64_t len, bool top = false);
	Cpu &cpu() { return cpu_; }
	const Cpu &cpu() const { return cpu_; }
	Events &events() { return ev_; }
	const uint8_t *mac() const { return mac_; }

	// Host software: fn runs on the node's core once the core is free
	// (not before at). What fn charges is the work's CPU time; register
	// writes it defers with at_job_end reach the devices when that time
	// has passed, so the devices see the cost.
	void cpu_job(uint64_t at, std::function<void()> fn);
	void charge(uint64_t ps) { job_cost_ += ps; }
	void at_job_end(std::function<void()> fn) { job_end_.push_back(std::move(fn)); }
	// Inside a CPU job: the time its work charged so far has brought it to.
	uint64_t job_now_ps() const { return ev_.now_ps() + job_cost_; }

	uint32_t nic_read(uint32_t off) { return uint32_t(dms_reg_read(node_, nic(), off, 4)); }
	void nic_write(uint32_t off, uint64_t v, unsigned size = 4)
	{
		dms_reg_write(node_, nic(), off, v, size);
	}
	uint32_t gpu_read(uint32_t off) { return uint32_t(dms_reg_read(node_, gpu(), off, 4)); }
	void gpu_write(uint32_t off, uint64_t v, unsigned size = 4)
	{
		dms_reg_write(node_, gpu(), off, v, size);
	}

private:
	static int dma(void *opaque, uint64_t addr, void *buf, uint64_t len, int is_write);
	static void nic_irq(void *opaque, unsigned vector);
	static void gpu_irq(void *opaque, unsigned vector);
	static void send(void *opaque, const uint8_t *frame, size_t len);
	static void rx_ready(void *opaque);

	dms_node *node_;
	unsigned index_, pair_;
	Events &ev_;
	HostMemory mem_;
	uint8_t *gpu_mem_ = nullptr;
	uint64_t gpu_size_, gpu_low_ = 0, gpu_high_;
	Cpu cpu_;
	uint8_t mac_[6];
	Hooks hooks_;
	uint64_t job_cost_ = 0;
	std::vector<std::function<void()>> job_end_;
};

} // namespace dms_sim
