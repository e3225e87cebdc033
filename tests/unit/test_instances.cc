// SPDX-License-Identifier: MIT
// Device instances through the C ABI: a node of two NIC/GPU pairs under
// one switch (dms_node_new, as QEMU builds it), every device at its id,
// ids that name no device refused, the pairs moving data independently,
// one fault injector per pair, and devices whose MSIs write each other's
// registers: no such loop runs without simulated time passing.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include "devmemsim/devmemsim.h"
#include "devmemsim/gpu_regs.h"
#include "devmemsim/nic_desc.h"
#include "devmemsim/nic_regs.h"
#include "devmemsim/pci_ids.h"
#include "fake_host.h"
#include "frames.h"

namespace
{

using fake_host::Host;
constexpr unsigned kPairs = 2;
constexpr uint64_t kRam = fake_host::kRamBase;
constexpr uint64_t kGpuMem = 1 << 20;
// Ring layout of each NIC's queue 0 in its own host's RAM.
constexpr uint64_t kHbufRing = kRam, kPbufRing = kRam + 0x1000, kCmplRing = kRam + 0x2000;
constexpr uint64_t kHdata = kRam + 0x10000;
constexpr unsigned kLog2 = 6, kHbuf = 256, kPbuf = 4096;

const char kTwoPairs[] = "[nic]\nqueues = 1\n[gpu]\nmem_size = 1048576\n"
			 "[[topology.switch]]\n"
			 "[[topology.nic]]\ncount = 2\n[[topology.gpu]]\ncount = 2\n";
// More devices under one switch than QEMU has downstream ports for.
const char kTooWideForQemu[] = "[[topology.switch]]\n"
			       "[[topology.nic]]\ncount = 17\n[[topology.gpu]]\ncount = 17\n";

// Each GPU's memory BAR, where the guest would have placed it.
uint64_t bar_of(unsigned i)
{
	return (1ull << 40) + i * (1ull << 30);
}

class Instances : public ::testing::Test
{
protected:
	static void SetUpTestSuite()
	{
		std::string err;
		// QEMU's constructor refuses a tree QEMU cannot lay out before
		// anything is built.
		EXPECT_EQ(fake_host::new_node(kTooWideForQemu, &qemu_err_), nullptr);
		node_ = fake_host::new_node(kTwoPairs, &err);
		ASSERT_NE(node_, nullptr) << err;
		for (unsigned i = 0; i < kPairs; i++) {
			nic_host_[i] = new Host;
			gpu_host_[i] = new Host(1 << 20);
			mem_[i] = new std::vector<uint8_t>(dms_dev_mem_size(node_, DMS_GPU(i)));
			nic_host_[i]->attach(node_, DMS_NIC(i));
			gpu_host_[i]->attach(node_, DMS_GPU(i));
			ASSERT_EQ(dms_dev_set_memory(node_, DMS_GPU(i), mem_[i]->data()), 0);
			dms_set_bar(node_, DMS_GPU(i), DMS_GPU_BAR_MEM, bar_of(i), kGpuMem);
		}
		dms_node_step(node_, 0);
	}
	void SetUp() override
	{
		ASSERT_EQ(dms_node_set_faults(node_, "", nullptr, 0), 0);
		dms_node_reset_stats(node_);
	}
	static void run() { fake_host::run_until_idle(node_, 1000); }
	static std::string stats() { return dms_node_stats_json(node_); }
	static bool has(const std::string &text) { return stats().find(text) != std::string::npos; }
	// NIC i's queue 0, header split, with payload buffers in GPU i's
	// memory: the devmem receive path.
	static void enable_devmem_rx(unsigned i)
	{
		const dms_dev nic = DMS_NIC(i);
		auto qw = [nic](uint32_t off, uint64_t v) {
			dms_reg_write(node_, nic, DMS_NIC_Q_BASE(0) + off, v, 4);
		};
		qw(DMS_NIC_RXQ_RING_LOG2, kLog2);
		qw(DMS_NIC_RXQ_HBUF_BASE_LO, kHbufRing);
		qw(DMS_NIC_RXQ_PBUF_BASE_LO, kPbufRing);
		qw(DMS_NIC_RXQ_CMPL_BASE_LO, kCmplRing);
		qw(DMS_NIC_RXQ_HBUF_SIZE, kHbuf);
		qw(DMS_NIC_RXQ_PBUF_SIZE, kPbuf);
		qw(DMS_NIC_RXQ_CTRL, DMS_NIC_Q_ENABLE);
		Host &h = *nic_host_[i];
		for (unsigned s = 0; s < 8; s++) {
			dms_rx_buf hb{kHdata + s * kHbuf, uint16_t(s), {}};
			dms_rx_buf pb{bar_of(i) + s * uint64_t(kPbuf), uint16_t(s), {}};
			std::memcpy(h.at(kHbufRing + 16 * s), &hb, 16);
			std::memcpy(h.at(kPbufRing + 16 * s), &pb, 16);
		}
		qw(DMS_NIC_RXQ_HBUF_TAIL, 8);
		qw(DMS_NIC_RXQ_PBUF_TAIL, 8);
		dms_reg_write(node_, nic, DMS_NIC_REG_RX_CTRL, DMS_NIC_RX_HDR_SPLIT, 4);
	}
	// A GPU job's error code from its status register.
	static unsigned crc_error(dms_dev gpu)
	{
		const uint64_t st = dms_reg_read(node_, gpu, DMS_GPU_REG_CRC_STATUS, 4);
		return unsigned((st & DMS_GPU_STATUS_ERR_MASK) >> DMS_GPU_STATUS_ERR_SHIFT);
	}
	static uint64_t model_ns()
	{
		const std::string s = stats();
		return std::stoull(s.substr(s.find("\"time_ns\": ") + 11));
	}
	// Every device back to its reset state, nothing recorded.
	static void reset_all()
	{
		for (unsigned i = 0; i < kPairs; i++) {
			dms_dev_reset(node_, DMS_NIC(i));
			dms_dev_reset(node_, DMS_GPU(i));
		}
		run();
		for (unsigned i = 0; i < kPairs; i++) {
			nic_host_[i]->irqs.clear();
			gpu_host_[i]->irqs.clear();
		}
	}
	// An MSI-X entry aimed at a device register: each vector `from` fires
	// becomes a register write, made between model calls as QEMU's glue
	// makes it (from a bottom half after the step).
	struct Route {
		Host *from;
		dms_dev to;
		uint32_t off, data;
		size_t seen = 0;
	};
	// Deliver what the routes' devices fired, step to the next deadline if
	// it is no later than `end`, again, at most `rounds` times. Returns
	// how many messages were delivered.
	static uint64_t ping_pong(std::vector<Route> &routes, uint64_t end, unsigned rounds)
	{
		uint64_t delivered = 0;
		for (unsigned r = 0; r < rounds; r++) {
			bool any = false;
			for (Route &rt : routes)
				for (; rt.seen < rt.from->irqs.size(); rt.seen++, delivered++) {
					dms_reg_write(node_, rt.to, rt.off, rt.data, 4);
					any = true;
				}
			const uint64_t d = dms_node_deadline_ns(node_);
			if (d != DMS_NO_DEADLINE && d <= end)
				dms_node_step(node_, d);
			else if (!any)
				break;
		}
		return delivered;
	}
	// NIC i's queue 0 sends one frame; its completion stays pending.
	static void nic_tx_one(unsigned i)
	{
		constexpr uint64_t kTdesc = kRam + 0x4000, kTcmpl = kRam + 0x5000;
		const dms_dev nic = DMS_NIC(i);
		auto qw = [nic](uint32_t off, uint64_t v) {
			dms_reg_write(node_, nic, DMS_NIC_Q_BASE(0) + off, v, 4);
		};
		qw(DMS_NIC_TXQ_RING_LOG2, 4);
		qw(DMS_NIC_TXQ_DESC_BASE_LO, kTdesc);
		qw(DMS_NIC_TXQ_CMPL_BASE_LO, kTcmpl);
		qw(DMS_NIC_TXQ_CTRL, DMS_NIC_Q_ENABLE);
		const dms_tx_desc d{kRam + 0x6000, 60, DMS_TX_F_SOP | DMS_TX_F_EOP, 1};
		std::memcpy(nic_host_[i]->at(kTdesc), &d, sizeof(d));
		qw(DMS_NIC_TXQ_TAIL, 1);
		run();
	}

	static dms_node *node_;
	static std::string qemu_err_;
	static Host *nic_host_[kPairs], *gpu_host_[kPairs];
	static std::vector<uint8_t> *mem_[kPairs];
};
dms_node *Instances::node_;
std::string Instances::qemu_err_;
Host *Instances::nic_host_[kPairs], *Instances::gpu_host_[kPairs];
std::vector<uint8_t> *Instances::mem_[kPairs];

} // namespace

TEST_F(Instances, QemuConstructorRefusesWhatQemuCannotLayOut)
{
	EXPECT_EQ(qemu_err_, std::string("topology: switch \"sw0\" has 34 devices; under QEMU a "
					 "switch has at most 32 (a downstream port each)"));
}

TEST_F(Instances, EveryDeviceAnswersAtItsId)
{
	EXPECT_EQ(DMS_NIC(0), DMS_DEV_NIC);
	EXPECT_EQ(DMS_GPU(0), DMS_DEV_GPU);
	ASSERT_EQ(dms_node_num_pairs(node_), kPairs);
	const char *names[] = {"nic0", "gpu0", "nic1", "gpu1"};
	for (unsigned i = 0; i < kPairs; i++) {
		EXPECT_STREQ(dms_dev_name(node_, DMS_NIC(i)), names[2 * i]);
		EXPECT_STREQ(dms_dev_name(node_, DMS_GPU(i)), names[2 * i + 1]);
		EXPECT_EQ(dms_reg_read(node_, DMS_NIC(i), DMS_NIC_REG_ID, 4), DMS_NIC_ID_MAGIC);
		EXPECT_EQ(dms_reg_read(node_, DMS_GPU(i), DMS_GPU_REG_ID, 4), DMS_GPU_ID_MAGIC);
		EXPECT_EQ(dms_dev_num_queues(node_, DMS_NIC(i)), 1u);
		EXPECT_EQ(dms_dev_num_vectors(node_, DMS_NIC(i)), 2u);
		EXPECT_EQ(dms_dev_num_vectors(node_, DMS_GPU(i)), 1u);
		EXPECT_EQ(dms_dev_mem_size(node_, DMS_GPU(i)), kGpuMem);
	}
	// Registers are per instance: a MAC set on NIC 1 is not NIC 0's.
	const uint8_t mac[6] = {0x52, 0x54, 0x00, 0, 0, 0x11};
	ASSERT_EQ(dms_dev_set_mac(node_, DMS_NIC(1), mac), 0);
	EXPECT_EQ(dms_reg_read(node_, DMS_NIC(1), DMS_NIC_REG_MAC_HI, 4), 0x1100u);
	EXPECT_NE(dms_reg_read(node_, DMS_NIC(0), DMS_NIC_REG_MAC_HI, 4), 0x1100u);
}

// The hostile-input rule: an id from the host that names no device (or
// not one of the kind the call needs) is an error, never an access.
TEST_F(Instances, IdsThatNameNoDeviceAreRefused)
{
	const dms_dev bad[] = {DMS_NIC(kPairs), DMS_GPU(kPairs), DMS_NIC(1000), DMS_GPU(0x3fffffff),
			       DMS_DEV_ID_MAX};
	const uint8_t frame[64] = {};
	const uint8_t mac[6] = {2, 0, 0, 0, 0, 1};
	const dms_dev_ops ops = {Host::dma, Host::irq, nullptr, nullptr};
	for (dms_dev dev : bad) {
		SCOPED_TRACE(static_cast<unsigned>(dev));
		EXPECT_EQ(dms_reg_read(node_, dev, 0, 4), UINT64_MAX);
		dms_reg_write(node_, dev, 0, 1, 4);
		EXPECT_EQ(dms_dev_attach(node_, dev, &ops, nullptr), -1);
		dms_dev_detach(node_, dev);
		dms_set_bus_master(node_, dev, 0);
		dms_set_bar(node_, dev, DMS_GPU_BAR_MEM, 0, kGpuMem);
		EXPECT_EQ(dms_dev_receive(node_, dev, frame, sizeof(frame)), -1);
		EXPECT_EQ(dms_dev_set_link(node_, dev, 0), -1);
		EXPECT_EQ(dms_dev_set_mac(node_, dev, mac), -1);
		EXPECT_EQ(dms_dev_reset(node_, dev), -1);
		EXPECT_EQ(dms_dev_set_memory(node_, dev, nullptr), -1);
		EXPECT_EQ(dms_dev_mem_size(node_, dev), 0u);
		EXPECT_EQ(dms_dev_num_queues(node_, dev), 0u);
		EXPECT_EQ(dms_dev_num_vectors(node_, dev), 0u);
		EXPECT_EQ(dms_dev_name(node_, dev), nullptr);
	}
	// Calls for one kind refuse the other.
	EXPECT_EQ(dms_dev_receive(node_, DMS_GPU(1), frame, sizeof(frame)), -1);
	EXPECT_EQ(dms_dev_set_link(node_, DMS_GPU(0), 1), -1);
	EXPECT_EQ(dms_dev_set_mac(node_, DMS_GPU(1), mac), -1);
	EXPECT_EQ(dms_dev_set_memory(node_, DMS_NIC(1), nullptr), -1);
	EXPECT_EQ(dms_dev_mem_size(node_, DMS_NIC(1)), 0u);
	EXPECT_EQ(dms_dev_num_queues(node_, DMS_GPU(1)), 0u);
	EXPECT_EQ(dms_dev_attach(node_, DMS_NIC(1), nullptr, nullptr), -1);
	// The devices themselves are untouched.
	EXPECT_EQ(dms_reg_read(node_, DMS_GPU(1), DMS_GPU_REG_ID, 4), DMS_GPU_ID_MAGIC);
	EXPECT_EQ(dms_dev_mem_size(node_, DMS_GPU(1)), kGpuMem);
}

// Each NIC receives a frame whose payload lands in its own GPU's memory,
// turned around at the one switch; neither pair sees the other's data.
TEST_F(Instances, TwoPairsUnderOneSwitchMoveDataIndependently)
{
	constexpr size_t kPayload = 1000;
	for (unsigned i = 0; i < kPairs; i++) {
		enable_devmem_rx(i);
		std::fill(mem_[i]->begin(), mem_[i]->end(), 0);
	}
	for (unsigned i = 0; i < kPairs; i++) {
		frames::Spec s;
		s.payload = kPayload;
		s.sport = uint16_t(1000 + i);
		std::vector<uint8_t> f = frames::build(s);
		std::fill(f.end() - kPayload, f.end(), uint8_t(0xa0 + i));
		ASSERT_EQ(dms_dev_receive(node_, DMS_NIC(i), f.data(), f.size()), 1);
	}
	run();
	for (unsigned i = 0; i < kPairs; i++) {
		const std::vector<uint8_t> &m = *mem_[i];
		EXPECT_EQ(std::count(m.begin(), m.begin() + kPayload, uint8_t(0xa0 + i)),
			  long(kPayload))
			<< "GPU " << i;
		EXPECT_EQ(std::count(m.begin(), m.end(), 0), long(m.size() - kPayload));
	}
	for (const char *link : {"nic0", "nic1", "gpu0", "gpu1"})
		EXPECT_TRUE(has(std::string("\"") + link + "\": {\"gen\"")) << link;
	EXPECT_TRUE(has("\"switch\": {\"p2p_bytes\": " + std::to_string(kPairs * kPayload)));
	EXPECT_TRUE(has("\"root_complex\": {\"host_write_bytes\": "));
	EXPECT_TRUE(has("\"nics\": {\"nic0\": {\"rx_frames\": 1"));
	EXPECT_TRUE(has("\"nic1\": {\"rx_frames\": 1"));
	EXPECT_FALSE(has("\"nic\": {")) << "one-pair keys in a two-pair node";
}

// Pair i's injector has its own seed (faults.seed + i), counters and
// Nth-access count: the same settings fail each pair on its own.
TEST_F(Instances, FaultInjectorsArePerPair)
{
	char err[256] = "";
	ASSERT_EQ(dms_node_set_faults(node_, "gpu_dma_error_nth=1", err, sizeof(err)), 0) << err;
	fake_host::gpu_start_copy(node_, 0, kRam, 256, 0, DMS_GPU(0));
	run();
	EXPECT_TRUE(has("\"pair_faults\": [{\"rx_dropped\": 0"));
	const std::string s = stats();
	const size_t second = s.find("}, {\"rx_dropped\"");
	ASSERT_NE(second, std::string::npos) << s;
	EXPECT_NE(s.rfind("\"gpu_dma_errors\": 1", second), std::string::npos) << s;
	EXPECT_NE(s.find("\"gpu_dma_errors\": 0", second), std::string::npos) << s;
	// GPU 1's first access is its own first, and fails in turn.
	fake_host::gpu_start_copy(node_, 0, kRam, 256, 0, DMS_GPU(1));
	run();
	EXPECT_NE(stats().find("\"gpu_dma_errors\": 1", second), std::string::npos);

	// Same rate, different seeds: the pairs' engines fail differently.
	ASSERT_EQ(dms_node_set_faults(node_, "gpu_engine_error_rate=0.5", err, sizeof(err)), 0)
		<< err;
	std::string pattern[kPairs];
	for (unsigned job = 0; job < 32; job++)
		for (unsigned i = 0; i < kPairs; i++) {
			fake_host::gpu_start_crc(node_, 0, 64, 0, DMS_GPU(i));
			run();
			pattern[i] += crc_error(DMS_GPU(i)) == DMS_GPU_ERR_ENGINE ? 'x' : '.';
		}
	EXPECT_NE(pattern[0], pattern[1]);
	EXPECT_NE(pattern[0].find('x'), std::string::npos);
	EXPECT_NE(pattern[1].find('x'), std::string::npos);
}

// Trace lines carry the id of the device that wrote them.
TEST_F(Instances, TraceLinesNameTheirInstance)
{
	static std::vector<unsigned> ids;
	ids.clear();
	dms_node_set_trace(
		node_, [](void *, dms_dev dev, const char *) { ids.push_back(unsigned(dev)); },
		nullptr);
	ASSERT_EQ(dms_dev_reset(node_, DMS_NIC(1)), 0);
	ASSERT_EQ(dms_dev_reset(node_, DMS_GPU(1)), 0);
	ASSERT_EQ(dms_dev_reset(node_, DMS_NIC(0)), 0);
	dms_node_set_trace(node_, nullptr, nullptr);
	EXPECT_EQ(ids, (std::vector<unsigned>{DMS_NIC(1), DMS_GPU(1), DMS_NIC(0)}));
}

// Two GPUs whose MSI-X entries point at each other's IRQ_MASK, a cause
// pending and masked in each, and one unmask by the guest: the unmask's
// message and the one it provokes are posted, and the mask they write back
// is already set: nothing more.
TEST_F(Instances, GpusUnmaskingEachOtherDoNotLoop)
{
	reset_all();
	for (unsigned i = 0; i < kPairs; i++) {
		dms_reg_write(node_, DMS_GPU(i), DMS_GPU_REG_IRQ_MASK, 0, 4);
		fake_host::gpu_start_copy(node_, 0, kRam, 0, 0, DMS_GPU(i)); // fails: zero length
	}
	run();
	std::vector<Route> routes = {{gpu_host_[0], DMS_GPU(1), DMS_GPU_REG_IRQ_MASK, 7},
				     {gpu_host_[1], DMS_GPU(0), DMS_GPU_REG_IRQ_MASK, 7}};
	const uint64_t t0 = model_ns();
	dms_reg_write(node_, DMS_GPU(0), DMS_GPU_REG_IRQ_MASK, 7, 4);
	// Without simulated time, each vector at most once; then nothing.
	EXPECT_EQ(ping_pong(routes, t0, 10000), 2u);
	EXPECT_EQ(ping_pong(routes, t0 + 1000000, 10000), 0u);
}

// Two GPUs whose MSI-X entries ring each other's CRC doorbell while both
// engines are busy: each refused doorbell's error message is posted, each
// vector at most once per DMS_MSI_GAP_NS (jobs take their latency, an
// error bit still pending raises nothing).
TEST_F(Instances, GpusRingingEachOthersBusyDoorbellNeedSimulatedTime)
{
	reset_all();
	for (unsigned i = 0; i < kPairs; i++) {
		dms_reg_write(node_, DMS_GPU(i), DMS_GPU_REG_IRQ_MASK, 7, 4);
		fake_host::gpu_start_crc(node_, 0, kGpuMem, 0, DMS_GPU(i));
	}
	std::vector<Route> routes = {{gpu_host_[0], DMS_GPU(1), DMS_GPU_REG_CRC_DOORBELL, 1},
				     {gpu_host_[1], DMS_GPU(0), DMS_GPU_REG_CRC_DOORBELL, 1}};
	const uint64_t t0 = model_ns();
	dms_reg_write(node_, DMS_GPU(0), DMS_GPU_REG_CRC_DOORBELL, 1, 4); // busy: error
	EXPECT_LE(ping_pong(routes, t0, 10000), 2u) << "messages without simulated time";
	const uint64_t n = ping_pong(routes, t0 + 100000, 100000);
	const uint64_t elapsed = model_ns() - t0;
	EXPECT_LE(n, 4 + 2 * elapsed / DMS_MSI_GAP_NS) << elapsed << " ns";
	reset_all();
}

// Two NICs whose queue vectors arm each other's queue, a TX completion
// pending on each: arming a queue with completions pending fires it (that
// is what an arm is for), so this chain never ends, but every message is
// posted and each vector keeps its gap: it runs at the pace of simulated
// time, never at the host's.
TEST_F(Instances, NicsArmingEachOtherRunAtSimulatedTime)
{
	reset_all();
	for (unsigned i = 0; i < kPairs; i++)
		nic_tx_one(i);
	ASSERT_TRUE(nic_host_[0]->irqs.empty());
	std::vector<Route> routes = {
		{nic_host_[0], DMS_NIC(1), DMS_NIC_Q_BASE(0) + DMS_NIC_Q_IRQ_ARM, 1},
		{nic_host_[1], DMS_NIC(0), DMS_NIC_Q_BASE(0) + DMS_NIC_Q_IRQ_ARM, 1}};
	const uint64_t t0 = model_ns();
	dms_reg_write(node_, DMS_NIC(0), DMS_NIC_Q_BASE(0) + DMS_NIC_Q_IRQ_ARM, 1, 4);
	EXPECT_LE(ping_pong(routes, t0, 10000), 2u) << "messages without simulated time";
	const uint64_t n = ping_pong(routes, t0 + 100000, 100000);
	const uint64_t elapsed = model_ns() - t0;
	EXPECT_GE(n, 10u);
	EXPECT_LE(n, 2 + 2 * elapsed / DMS_MSI_GAP_NS) << elapsed << " ns";
	reset_all();
}
