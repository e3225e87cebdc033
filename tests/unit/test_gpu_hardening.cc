// SPDX-License-Identifier: MIT
// Regression tests for what a hostile guest or host could do to the GPU
// model (a hardening review's findings): an interrupt that rings the
// doorbell again, a job over all device memory, reset in the middle of a
// job, DMA without bus mastering, and a host that goes away. And interrupts by design: a vector
// fires for a new cause only, and one a register write raises is posted.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "devmemsim/devmemsim.h"
#include "devmemsim/gpu_regs.h"
#include "devmemsim/pci_ids.h"
#include "fake_host.h"
#include "gpu/crc32c.h"
#include "gpu/gpu.h"
#include "sim/kernel.h"

namespace
{

using devmemsim::Gpu;

class GpuHardening : public ::testing::Test
{
protected:
	static void SetUpTestSuite()
	{
		std::string err;
		node_ = fake_host::new_node("", &err);
		ASSERT_NE(node_, nullptr) << err;
		mem_ = new std::vector<uint8_t>(dms_gpu_mem_size(node_));
		host_ = new fake_host::Host(4 << 20);
		static const dms_dev_ops ops = {fake_host::Host::dma, irq, nullptr, nullptr};
		dms_dev_attach(node_, DMS_DEV_GPU, &ops, host_);
		dms_gpu_set_memory(node_, mem_->data());
		dms_node_step(node_, 0);
	}
	void SetUp() override
	{
		ring_on_irq_ = clear_on_irq_ = false;
		dms_gpu_reset(node_);
		host_->irqs.clear();
		wr(DMS_GPU_REG_IRQ_MASK, 0x7);
		dms_node_reset_stats(node_);
	}
	// The MSI-X message, possibly aimed at the GPU's own copy doorbell as
	// a guest may program it (a host that delivers it synchronously).
	static void irq(void *opaque, unsigned v)
	{
		fake_host::Host::irq(opaque, v);
		if (clear_on_irq_)
			wr(DMS_GPU_REG_IRQ_STATUS, 0x7);
		if (ring_on_irq_)
			wr(DMS_GPU_REG_COPY_DOORBELL, 1);
	}
	static uint32_t rd(uint32_t off)
	{
		return uint32_t(dms_reg_read(node_, DMS_DEV_GPU, off, 4));
	}
	static void wr(uint32_t off, uint32_t v) { dms_reg_write(node_, DMS_DEV_GPU, off, v, 4); }
	static void wr64(uint32_t off, uint64_t v) { dms_reg_write(node_, DMS_DEV_GPU, off, v, 8); }
	static void step_to_deadline() { dms_node_step(node_, dms_node_deadline_ns(node_)); }
	static void start_crc(uint64_t len)
	{
		wr(DMS_GPU_REG_CRC_LIST_COUNT, 0);
		fake_host::gpu_start_crc(node_, 0, len, 0xffffffff);
	}
	static void copy(uint64_t dev, uint64_t host, uint64_t len, uint32_t dir)
	{
		fake_host::gpu_start_copy(node_, dev, host, len, dir);
		fake_host::run_until_idle(node_, 100);
	}
	static std::string stats() { return dms_node_stats_json(node_); }
	static dms_node *node_;
	static std::vector<uint8_t> *mem_;
	static fake_host::Host *host_;
	static bool ring_on_irq_, clear_on_irq_;
};
dms_node *GpuHardening::node_;
std::vector<uint8_t> *GpuHardening::mem_;
fake_host::Host *GpuHardening::host_;
bool GpuHardening::ring_on_irq_, GpuHardening::clear_on_irq_;

uint64_t now_ns(dms_node *node)
{
	std::string s = dms_node_stats_json(node);
	return std::stoull(s.substr(s.find("\"time_ns\": ") + 11));
}

} // namespace

// A zero-length copy whose completion MSI rings the
// copy doorbell again. The message alone rings it once: the next job's
// completion finds its status bits still pending and raises nothing. A
// handler that also clears IRQ_STATUS gets one interrupt per job, and each
// job takes the minimum job latency, so a step to a time T runs at most
// T / latency jobs and returns.
TEST_F(GpuHardening, SelfRingingDoorbellAdvancesTime)
{
	wr64(DMS_GPU_REG_COPY_LEN_LO, 0);
	ring_on_irq_ = true;
	wr(DMS_GPU_REG_COPY_DOORBELL, 1);
	fake_host::run_until_idle(node_, 100);
	EXPECT_EQ(host_->irqs.size(), 1u);
	EXPECT_NE(stats().find("\"copy_jobs\": 2,"), std::string::npos) << stats();
	host_->irqs.clear();
	clear_on_irq_ = true;
	wr(DMS_GPU_REG_IRQ_STATUS, 0x7);
	wr(DMS_GPU_REG_COPY_DOORBELL, 1);
	const uint64_t start = now_ns(node_);
	const uint64_t span = 100 * Gpu::kJobLatencyNs;
	for (int i = 0; i < 1000 && now_ns(node_) < start + span; i++)
		dms_node_step(node_, start + span);
	ring_on_irq_ = clear_on_irq_ = false;
	EXPECT_GE(now_ns(node_), start + span);
	EXPECT_LE(host_->irqs.size(), 102u);
	EXPECT_GE(host_->irqs.size(), 99u);
	dms_gpu_reset(node_);
	fake_host::run_until_idle(node_, 10);
}

// One doorbell over (almost) all device memory: the engine works in bursts,
// and one step does at most the step budget's worth of them.
TEST_F(GpuHardening, HugeJobRunsOverManySteps)
{
	const uint64_t len = mem_->size() / 2;
	ASSERT_GT(len, uint64_t(devmemsim::sim::kStepBudget) * Gpu::kBurst);
	for (size_t i = 0; i < mem_->size(); i += 4096)
		(*mem_)[i] = uint8_t(i >> 12);
	start_crc(len);
	step_to_deadline();
	EXPECT_EQ(rd(DMS_GPU_REG_CRC_STATUS), DMS_GPU_STATUS_BUSY);
	std::string s = stats();
	const uint64_t crc_bytes = std::stoull(s.substr(s.find("\"crc_bytes\": ") + 13));
	EXPECT_GT(crc_bytes, 0u);
	EXPECT_LE(crc_bytes, uint64_t(devmemsim::sim::kStepBudget) * Gpu::kBurst);
	EXPECT_TRUE(host_->irqs.empty());
	// Steps that stopped early leave the deadline at "now".
	EXPECT_LE(dms_node_deadline_ns(node_), now_ns(node_));
	fake_host::run_until_idle(node_, 1000);
	EXPECT_EQ(rd(DMS_GPU_REG_CRC_STATUS), DMS_GPU_STATUS_DONE);
	EXPECT_EQ(rd(DMS_GPU_REG_CRC_RESULT),
		  devmemsim::crc32c_update(0xffffffff, mem_->data(), len));
	EXPECT_EQ(host_->irqs.size(), 1u);
}

// The CRC engine's computation is work too: one step over a job on all
// device memory stays within the step's budget of units.
TEST_F(GpuHardening, ComputationCountsAgainstTheStepBudget)
{
	start_crc(mem_->size());
	dms_node_step(node_, now_ns(node_) + 1000000000ull);
	dms_work_stats w;
	dms_node_work(node_, &w);
	EXPECT_EQ(w.cut_steps, 1u);
	EXPECT_GE(w.max_step_units, uint64_t(DMS_STEP_WORK));
	EXPECT_LE(w.max_step_units, w.step_units_bound);
	const std::string s = stats();
	const uint64_t crc_bytes = std::stoull(s.substr(s.find("\"crc_bytes\": ") + 13));
	EXPECT_LE(crc_bytes / DMS_WORK_UNIT_BYTES, w.max_step_units);
	dms_gpu_reset(node_);
	fake_host::run_until_idle(node_, 10);
}

// A vector fires for a new cause only: the same mask written again (as an
// MSI aimed at IRQ_MASK writes it), a status bit cleared while another is
// pending, or an event whose bit is still pending raise nothing.
TEST_F(GpuHardening, OnlyNewCausesFire)
{
	wr(DMS_GPU_REG_IRQ_MASK, 0);
	copy(0, fake_host::kRamBase, 0, DMS_GPU_COPY_TO_HOST); // zero length: done, error
	ASSERT_EQ(rd(DMS_GPU_REG_IRQ_STATUS), DMS_GPU_IRQ_COPY_DONE | DMS_GPU_IRQ_ERROR);
	EXPECT_TRUE(host_->irqs.empty());
	wr(DMS_GPU_REG_IRQ_MASK, 0x7); // unmasks two pending bits: one message
	fake_host::run_until_idle(node_, 10);
	EXPECT_EQ(host_->irqs.size(), 1u);
	wr(DMS_GPU_REG_IRQ_MASK, 0x7);
	wr(DMS_GPU_REG_IRQ_STATUS, DMS_GPU_IRQ_COPY_DONE);
	fake_host::run_until_idle(node_, 10);
	EXPECT_EQ(host_->irqs.size(), 1u);
	copy(0, fake_host::kRamBase, 0, DMS_GPU_COPY_TO_HOST); // ERROR still pending
	EXPECT_EQ(host_->irqs.size(), 2u);		       // COPY_DONE is new
	copy(0, fake_host::kRamBase, 0, DMS_GPU_COPY_TO_HOST); // both pending
	EXPECT_EQ(host_->irqs.size(), 2u);
	wr(DMS_GPU_REG_IRQ_STATUS, 0x7);
	copy(0, fake_host::kRamBase, 0, DMS_GPU_COPY_TO_HOST);
	EXPECT_EQ(host_->irqs.size(), 3u);
}

// An MSI a register write raises (an unmask of a pending bit) goes at once
// when the vector has been quiet; within DMS_MSI_GAP_NS of its previous
// message it is posted to the end of that gap and reaches the host from a
// step, never from inside the write.
TEST_F(GpuHardening, InterruptsRaisedByRegisterWritesKeepTheirGap)
{
	wr(DMS_GPU_REG_IRQ_MASK, 0);
	copy(0, fake_host::kRamBase, 64, DMS_GPU_COPY_TO_HOST);
	ASSERT_EQ(rd(DMS_GPU_REG_IRQ_STATUS), DMS_GPU_IRQ_COPY_DONE);
	const uint64_t t = now_ns(node_) + 50000;
	dms_node_set_time(node_, t);
	wr(DMS_GPU_REG_IRQ_MASK, DMS_GPU_IRQ_COPY_DONE);
	EXPECT_EQ(host_->irqs.size(), 1u);
	// Masked and unmasked again at once: the vector waits out its gap.
	dms_node_set_time(node_, t + 100);
	wr(DMS_GPU_REG_IRQ_MASK, 0);
	wr(DMS_GPU_REG_IRQ_MASK, DMS_GPU_IRQ_COPY_DONE);
	EXPECT_EQ(host_->irqs.size(), 1u);
	dms_node_step(node_, t + DMS_MSI_GAP_NS - 1);
	EXPECT_EQ(host_->irqs.size(), 1u);
	dms_node_step(node_, t + DMS_MSI_GAP_NS);
	EXPECT_EQ(host_->irqs.size(), 2u);
	EXPECT_NE(stats().find("\"posted_msis\": 1,"), std::string::npos) << stats();
}

// Reset in the middle of a job: the job stops without completing, every
// register is back at its reset value, and the engine takes new jobs.
TEST_F(GpuHardening, ResetStopsJobsAndClearsRegisters)
{
	start_crc(mem_->size());
	wr64(DMS_GPU_REG_COPY_HOST_LO, 0x1234000);
	wr(DMS_GPU_REG_IRQ_STATUS, 0); // nothing pending yet
	step_to_deadline();
	ASSERT_EQ(rd(DMS_GPU_REG_CRC_STATUS), DMS_GPU_STATUS_BUSY);
	dms_gpu_reset(node_);
	for (uint32_t off : {DMS_GPU_REG_IRQ_STATUS, DMS_GPU_REG_IRQ_MASK, DMS_GPU_REG_CRC_STATUS,
			     DMS_GPU_REG_CRC_LEN_LO, DMS_GPU_REG_CRC_SEED, DMS_GPU_REG_CRC_RESULT,
			     DMS_GPU_REG_COPY_HOST_LO, DMS_GPU_REG_COPY_STATUS})
		EXPECT_EQ(rd(off), 0u) << std::hex << off;
	fake_host::run_until_idle(node_, 1000);
	EXPECT_EQ(rd(DMS_GPU_REG_CRC_STATUS), 0u);
	EXPECT_EQ(rd(DMS_GPU_REG_IRQ_STATUS), 0u);
	EXPECT_TRUE(host_->irqs.empty());
	EXPECT_NE(stats().find("\"aborted_jobs\": 1"), std::string::npos) << stats();
	wr(DMS_GPU_REG_IRQ_MASK, 0x7);
	start_crc(4096);
	fake_host::run_until_idle(node_, 100);
	EXPECT_EQ(rd(DMS_GPU_REG_CRC_STATUS), DMS_GPU_STATUS_DONE);
	EXPECT_EQ(host_->irqs.size(), 1u);
}

// The fabric refuses DMA, peer-to-peer into a BAR included, from a device
// whose Bus Master Enable bit is off.
TEST_F(GpuHardening, NoDmaWithoutBusMaster)
{
	const uint64_t bar = 0x800000000;
	dms_set_bar(node_, DMS_DEV_GPU, DMS_GPU_BAR_MEM, bar, mem_->size());
	const uint32_t fault = DMS_GPU_STATUS_DONE | DMS_GPU_STATUS_ERROR |
			       DMS_GPU_ERR_HOST_DMA << DMS_GPU_STATUS_ERR_SHIFT;
	dms_set_bus_master(node_, DMS_DEV_GPU, 0);
	for (uint64_t host : {fake_host::kRamBase, bar + 0x100000}) {
		copy(0, host, 4096, DMS_GPU_COPY_TO_HOST);
		EXPECT_EQ(rd(DMS_GPU_REG_COPY_STATUS), fault) << std::hex << host;
	}
	EXPECT_NE(stats().find("\"dma_faults\": 2"), std::string::npos) << stats();
	EXPECT_NE(stats().find("\"p2p_in_bytes\": 0"), std::string::npos) << stats();
	dms_set_bus_master(node_, DMS_DEV_GPU, 1);
	copy(0, bar + 0x100000, 4096, DMS_GPU_COPY_TO_HOST);
	EXPECT_EQ(rd(DMS_GPU_REG_COPY_STATUS), DMS_GPU_STATUS_DONE);
	EXPECT_NE(stats().find("\"p2p_in_bytes\": 4096"), std::string::npos) << stats();
	dms_set_bar(node_, DMS_DEV_GPU, DMS_GPU_BAR_MEM, 0, 0);
}

// The model's trace: one line per doorbell, job and interrupt, naming the
// device; nothing once the hook is removed.
TEST_F(GpuHardening, TraceLinesReachTheHost)
{
	static std::vector<std::string> lines;
	lines.clear();
	dms_node_set_trace(
		node_,
		[](void *, dms_dev dev, const char *line) {
			lines.push_back(std::string(dev == DMS_DEV_GPU ? "gpu: " : "nic: ") + line);
		},
		nullptr);
	start_crc(4096);
	fake_host::run_until_idle(node_, 100);
	dms_node_set_trace(node_, nullptr, nullptr);
	ASSERT_GE(lines.size(), 3u);
	EXPECT_EQ(lines[0].rfind("gpu: crc doorbell: dev 0x0 host 0x0 len 0x1000", 0), 0u)
		<< lines[0];
	EXPECT_NE(std::find(lines.begin(), lines.end(), "gpu: crc job done: 4096 bytes, error 0"),
		  lines.end());
	const size_t seen = lines.size();
	start_crc(4096);
	fake_host::run_until_idle(node_, 100);
	EXPECT_EQ(lines.size(), seen);
}

// After detach the model uses nothing the host gave it: no memory, no
// callbacks, no window (runs last: the GPU stays detached).
TEST_F(GpuHardening, ZDetachForgetsHost)
{
	dms_set_bar(node_, DMS_DEV_GPU, DMS_GPU_BAR_MEM, 0x800000000, mem_->size());
	start_crc(mem_->size());
	step_to_deadline();
	dms_dev_detach(node_, DMS_DEV_GPU);
	std::fill(mem_->begin(), mem_->end(), 0xa5); // as if QEMU freed it
	fake_host::run_until_idle(node_, 1000);
	EXPECT_TRUE(host_->irqs.empty());
	wr(DMS_GPU_REG_IRQ_MASK, 0x7);
	start_crc(4096);
	copy(0, fake_host::kRamBase, 4096, DMS_GPU_COPY_TO_DEV);
	fake_host::run_until_idle(node_, 100);
	EXPECT_EQ(rd(DMS_GPU_REG_CRC_STATUS),
		  DMS_GPU_STATUS_DONE | DMS_GPU_STATUS_ERROR |
			  DMS_GPU_ERR_DEV_RANGE << DMS_GPU_STATUS_ERR_SHIFT);
	EXPECT_TRUE(host_->irqs.empty());
	EXPECT_TRUE(std::all_of(mem_->begin(), mem_->end(), [](uint8_t b) { return b == 0xa5; }));
}
