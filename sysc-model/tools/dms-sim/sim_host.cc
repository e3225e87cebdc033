// SPDX-License-Identifier: MIT
#include "sim_host.h"

#include <sys/mman.h>

#include <stdexcept>
#include <string>
#include <utility>

#include "devmemsim/pci_ids.h"

namespace dms_sim
{

void Events::run_next()
{
	// Moved out, not copied: a callback that owns a std::function would
	// allocate and copy it. pop() still orders by ps and seq, which stay.
	Event e = std::move(const_cast<Event &>(q_.top()));
	q_.pop();
	advance(e.ps);
	e.fn();
}

namespace
{

uint8_t *map_zeroed(uint64_t size, const char *what)
{
	void *p = mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		throw std::runtime_error(std::string("cannot map ") + what);
	return static_cast<uint8_t *>(p);
}

} // namespace

HostMemory::HostMemory(uint64_t size) : ram_(map_zeroed(size, "host memory")), size_(size) {}

HostMemory::~HostMemory()
{
	munmap(ram_, size_);
}

uint64_t HostMemory::alloc(uint64_t len, uint64_t align)
{
	const uint64_t off = (used_ + align - 1) & ~(align - 1);
	if (off + len > size_)
		throw std::runtime_error(
			"host memory too small (workload key run.host_memory_mib)");
	used_ = off + len;
	return kBase + off;
}

SimNode::SimNode(dms_node *node, unsigned index, unsigned pair, Events &ev, uint64_t host_mem_bytes)
    : node_(node), index_(index), pair_(pair), ev_(ev), mem_(host_mem_bytes),
      gpu_size_(dms_dev_mem_size(node, DMS_GPU(pair))),
      gpu_high_(gpu_size_), mac_{0x02, 0x00, 0x00, 0x00, uint8_t(pair), uint8_t(index + 1)}
{
	// Sparse, like QEMU's memfd: only the pages the run touches cost RAM.
	gpu_mem_ = map_zeroed(gpu_size_, "the GPU's device memory");
	static const dms_dev_ops nic_ops = {dma, nic_irq, send, rx_ready};
	static const dms_dev_ops gpu_ops = {dma, gpu_irq, nullptr, nullptr};
	if (dms_dev_attach(node_, nic(), &nic_ops, this) ||
	    dms_dev_attach(node_, gpu(), &gpu_ops, this))
		throw std::runtime_error("the node has no NIC/GPU pair " + std::to_string(pair));
	dms_dev_set_memory(node_, gpu(), gpu_mem_);
	dms_set_bar(node_, gpu(), DMS_GPU_BAR_MEM, gpu_bar(), gpu_size_);
	dms_dev_set_mac(node_, nic(), mac_);
}

SimNode::~SimNode()
{
	dms_dev_detach(node_, nic());
	dms_dev_detach(node_, gpu());
	munmap(gpu_mem_, gpu_size_);
}

uint64_t SimNode::gpu_alloc(uint64_t len, bool top)
{
	len = (len + 4095) & ~uint64_t{4095};
	if (len > gpu_high_ - gpu_low_)
		throw std::runtime_error("GPU memory too small for the workload's buffers "
					 "(node key gpu.mem_size)");
	if (top)
		return gpu_high_ -= len;
	gpu_low_ += len;
	return gpu_low_ - len;
}

void SimNode::cpu_job(uint64_t at, std::function<void()> fn)
{
	ev_.at(std::max(at, cpu_.free_ps), [this, fn = std::move(fn)] {
		const uint64_t now = ev_.now_ps();
		if (cpu_.free_ps > now) { // another job took the core meanwhile
			cpu_job(now, fn);
			return;
		}
		job_cost_ = 0;
		job_end_.clear();
		fn();
		cpu_.occupy(now, job_cost_);
		ev_.at(now + job_cost_, [ends = std::move(job_end_)] {
			for (const auto &end : ends)
				end();
		});
		job_end_.clear();
	});
}

int SimNode::dma(void *opaque, uint64_t addr, void *buf, uint64_t len, int is_write)
{
	HostMemory &m = static_cast<SimNode *>(opaque)->mem_;
	if (!m.contains(addr, len))
		return -1;
	if (is_write)
		std::copy_n(static_cast<const uint8_t *>(buf), len, m.at(addr));
	else
		std::copy_n(m.at(addr), len, static_cast<uint8_t *>(buf));
	return 0;
}

// Interrupts and "room again" run as host events after the step (the C
// ABI's re-entrancy rule); a sent frame only enters the wire's queue.
void SimNode::nic_irq(void *opaque, unsigned vector)
{
	auto *n = static_cast<SimNode *>(opaque);
	n->ev_.at(n->ev_.now_ps(), [n, vector] { n->hooks_.nic_irq(vector); });
}

void SimNode::gpu_irq(void *opaque, unsigned vector)
{
	auto *n = static_cast<SimNode *>(opaque);
	n->ev_.at(n->ev_.now_ps(), [n, vector] { n->hooks_.gpu_irq(vector); });
}

void SimNode::send(void *opaque, const uint8_t *frame, size_t len)
{
	static_cast<SimNode *>(opaque)->hooks_.send(frame, len);
}

void SimNode::rx_ready(void *opaque)
{
	auto *n = static_cast<SimNode *>(opaque);
	n->ev_.at(n->ev_.now_ps(), [n] { n->hooks_.rx_ready(); });
}

} // namespace dms_sim
