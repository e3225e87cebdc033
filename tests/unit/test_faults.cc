// SPDX-License-Identifier: MIT
// Fault injection: the [faults] keys and run-time settings, determinism,
// rates over many frames, corruption a checksum catches, the Nth DMA
// access, and, through the C ABI, GPU engine and DMA errors, lost and late
// MSIs, link flaps and the "faults" counters.
//
// Fault injectors built directly are SystemC modules: they must all exist
// before the model first runs, so the direct tests (which come first in
// this file) share a pool made on first use, and the node tests follow.
#include <gtest/gtest.h>

#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "config.h"
#include "devmemsim/devmemsim.h"
#include "devmemsim/gpu_regs.h"
#include "devmemsim/nic_regs.h"
#include "fake_host.h"
#include "frames.h"
#include "nic/csum.h"
#include "nic/parser.h"
#include "node/faults.h"

namespace
{

using devmemsim::ConfigError;
using devmemsim::FaultConfig;
using devmemsim::Faults;

// Injectors for the direct tests; each test configures the ones it uses.
Faults &pool(unsigned i)
{
	static std::vector<std::unique_ptr<Faults>> all = [] {
		std::vector<std::unique_ptr<Faults>> v;
		for (const char *name : {"faults_a", "faults_b"})
			v.push_back(std::make_unique<Faults>(name, FaultConfig{}));
		return v;
	}();
	return *all.at(i);
}

FaultConfig settings(const std::string &s)
{
	return devmemsim::parse_fault_settings(s);
}

std::vector<uint8_t> tcp_frame(size_t payload, bool ipv6 = false)
{
	frames::Spec s;
	s.payload = payload;
	s.ipv6 = ipv6;
	return frames::build(s);
}

// Offer n copies of frame; returns what reached the NIC, in order.
std::vector<std::vector<uint8_t>> offer(Faults &f, const std::vector<uint8_t> &frame, int n)
{
	std::vector<std::vector<uint8_t>> got;
	for (int i = 0; i < n; i++)
		f.rx_frame(frame.data(), frame.size(), [&](const uint8_t *p, size_t len) {
			got.emplace_back(p, p + len);
			return true;
		});
	return got;
}

std::string error_of(const std::string &text)
{
	try {
		settings(text);
	} catch (const ConfigError &e) {
		return e.what();
	}
	return "";
}

TEST(FaultConfig, SettingsParseWithOrWithoutPrefix)
{
	FaultConfig c = settings("rx_drop_rate=0.25, faults.tx_corrupt_rate=1 seed=7,"
				 "nic_dma_error_nth=3 link_down_ns=500 link_flap_period_ns=2000");
	EXPECT_DOUBLE_EQ(c.rx_drop_rate, 0.25);
	EXPECT_DOUBLE_EQ(c.tx_corrupt_rate, 1.0);
	EXPECT_EQ(c.seed, 7u);
	EXPECT_EQ(c.dma_error_nth[devmemsim::kFaultNic], 3u);
	EXPECT_EQ(c.dma_error_nth[devmemsim::kFaultGpu], 0u);
	EXPECT_EQ(c.link_flap_period_ns, 2000u);
	FaultConfig off = settings("");
	EXPECT_EQ(off.rx_drop_rate, 0.0);
	EXPECT_EQ(off.link_down_ns, 0u);
}

TEST(FaultConfig, BadSettingsNameTheKey)
{
	EXPECT_NE(error_of("rx_drop_rate=1.5").find("faults.rx_drop_rate"), std::string::npos);
	EXPECT_NE(error_of("rx_drop_rate=1.5").find("1.5 is not a rate"), std::string::npos);
	EXPECT_NE(error_of("bogus=1").find("faults.bogus: unknown key"), std::string::npos);
	EXPECT_NE(error_of("nic.queues=2").find("unknown key"), std::string::npos);
	EXPECT_NE(error_of("seed").find("expected KEY=VALUE"), std::string::npos);
	EXPECT_NE(error_of("gpu_msi_delay_rate=0.5").find("faults.msi_delay_ns"),
		  std::string::npos);
	EXPECT_NE(error_of("link_down_ns=10 link_flap_period_ns=10").find("longer than"),
		  std::string::npos);
	EXPECT_NE(error_of("link_down_ns=-1").find("out of range"), std::string::npos);
}

TEST(FaultConfig, TomlTableAndRoundTrip)
{
	devmemsim::NodeConfig c = devmemsim::load_config(
		"", {"faults.rx_corrupt_rate=0.001", "faults.gpu_engine_error_rate=0.5",
		     "faults.nic_msi_delay_rate=0.1", "faults.msi_delay_ns=20000"});
	EXPECT_DOUBLE_EQ(c.faults.rx_corrupt_rate, 0.001);
	EXPECT_EQ(c.faults.msi_delay_ns, 20000u);
	EXPECT_THROW(devmemsim::load_config("", {"faults.nic_msi_delay_rate=0.1"}), ConfigError);

	char path[] = "/tmp/dms-unit-faults-XXXXXX";
	int fd = mkstemp(path);
	ASSERT_GE(fd, 0);
	close(fd);
	std::ofstream(path) << devmemsim::to_toml(c);
	devmemsim::NodeConfig back = devmemsim::load_config(path);
	std::remove(path);
	EXPECT_EQ(devmemsim::to_toml(back), devmemsim::to_toml(c));
	EXPECT_DOUBLE_EQ(back.faults.rx_corrupt_rate, 0.001);
}

TEST(Faults, SameSeedSameFaults)
{
	std::vector<uint8_t> frame = tcp_frame(200);
	FaultConfig cfg = settings("seed=42 rx_drop_rate=0.3 rx_corrupt_rate=0.3");
	pool(0).configure(cfg);
	pool(1).configure(cfg);
	auto a = offer(pool(0), frame, 500);
	auto b = offer(pool(1), frame, 500);
	EXPECT_EQ(a, b);
	// Reconfiguring restarts the streams.
	pool(0).configure(cfg);
	EXPECT_EQ(offer(pool(0), frame, 500), a);
	pool(1).configure(settings("seed=43 rx_drop_rate=0.3 rx_corrupt_rate=0.3"));
	EXPECT_NE(offer(pool(1), frame, 500), a);
}

TEST(Faults, RatesHoldOverManyFrames)
{
	Faults &f = pool(0);
	f.configure(settings("seed=5 rx_drop_rate=0.1 rx_corrupt_rate=0.05 tx_drop_rate=0.2"));
	f.reset_counters();
	std::vector<uint8_t> frame = tcp_frame(64);
	const int n = 20000;
	auto got = offer(f, frame, n);
	int tx_sent = 0;
	for (int i = 0; i < n; i++)
		tx_sent += f.tx_frame(frame.data(), frame.size()) != nullptr;
	const devmemsim::FaultCounters &c = f.counters();
	EXPECT_EQ(got.size() + c.rx_dropped, size_t(n));
	EXPECT_NEAR(double(c.rx_dropped) / n, 0.1, 0.01);
	// Corruption is rolled for frames not dropped.
	EXPECT_NEAR(double(c.rx_corrupted) / n, 0.9 * 0.05, 0.006);
	EXPECT_NEAR(double(c.tx_dropped) / n, 0.2, 0.012);
	EXPECT_EQ(uint64_t(tx_sent) + c.tx_dropped, uint64_t(n));
	EXPECT_EQ(c.tx_corrupted, 0u);
}

// Every corrupted frame differs in one bit and fails its L4 checksum;
// frames no checksum would catch are never touched.
TEST(Faults, CorruptionIsCaughtByTheChecksum)
{
	Faults &f = pool(0);
	f.configure(settings("seed=9 rx_corrupt_rate=1 tx_corrupt_rate=1"));
	f.reset_counters();
	frames::Spec udp;
	udp.proto = 17;
	frames::Spec ack; // a TCP segment without payload
	ack.payload = 0;
	std::vector<std::vector<uint8_t>> inputs = {tcp_frame(1400), tcp_frame(10, true),
						    frames::build(udp), frames::build(ack)};
	for (const auto &in : inputs) {
		ASSERT_TRUE(devmemsim::l4_csum_ok(in.data(),
						  devmemsim::parse_frame(in.data(), in.size())));
		for (int i = 0; i < 50; i++) {
			auto out = offer(f, in, 1).at(0);
			ASSERT_EQ(out.size(), in.size());
			int bits = 0;
			for (size_t b = 0; b < in.size(); b++)
				bits += __builtin_popcount(in[b] ^ out[b]);
			EXPECT_EQ(bits, 1);
			EXPECT_FALSE(devmemsim::l4_csum_ok(
				out.data(), devmemsim::parse_frame(out.data(), out.size())));
			const uint8_t *tx = f.tx_frame(in.data(), in.size());
			EXPECT_FALSE(
				devmemsim::l4_csum_ok(tx, devmemsim::parse_frame(tx, in.size())));
		}
	}
	EXPECT_EQ(f.counters().rx_corrupted, 200u);
	EXPECT_EQ(f.counters().tx_corrupted, 200u);

	std::vector<uint8_t> arp(60, 0);
	arp[12] = 0x08;
	arp[13] = 0x06;
	EXPECT_EQ(offer(f, arp, 1).at(0), arp);
	EXPECT_EQ(f.tx_frame(arp.data(), arp.size()), arp.data());
	EXPECT_EQ(f.counters().rx_corrupted, 200u);
}

// A frame hit on its way out (the sender's tx_corrupt) and again on its way
// in (the receiver's rx_corrupt) still fails its checksum: a second flip of
// the same bit of a 16-bit word in the other direction would cancel the
// first in the ones'-complement sum, and the receiver would take two wrong
// bits for good data.
TEST(Faults, TwiceCorruptedFrameFailsTheChecksum)
{
	Faults &out = pool(0), &in = pool(1);
	out.configure(settings("seed=7 tx_corrupt_rate=1"));
	in.configure(settings("seed=8 rx_corrupt_rate=1"));
	out.reset_counters();
	in.reset_counters();
	const int n = 4000;
	int passed = 0;
	for (int i = 0; i < n; i++) {
		// Payloads of varied bytes, so that flips go both ways.
		std::vector<uint8_t> frame = tcp_frame(64 + i % 1400);
		const uint8_t *sent = out.tx_frame(frame.data(), frame.size());
		std::vector<uint8_t> wire(sent, sent + frame.size());
		auto got = offer(in, wire, 1).at(0);
		passed += devmemsim::l4_csum_ok(got.data(),
						devmemsim::parse_frame(got.data(), got.size()));
	}
	EXPECT_EQ(passed, 0);
	EXPECT_EQ(out.counters().tx_corrupted, uint64_t(n));
	EXPECT_EQ(in.counters().rx_corrupted, uint64_t(n));
}

// A frame the NIC refuses keeps its verdict: back-pressure changes no fault.
TEST(Faults, RefusedFrameKeepsItsVerdict)
{
	std::vector<uint8_t> frame = tcp_frame(100);
	FaultConfig cfg = settings("seed=3 rx_drop_rate=0.2 rx_corrupt_rate=0.5");
	pool(0).configure(cfg);
	auto plain = offer(pool(0), frame, 200);
	pool(1).configure(cfg);
	std::vector<std::vector<uint8_t>> got;
	bool refuse = false;
	int taken = 0, refused = 0;
	while (taken < 200) {
		bool ok = pool(1).rx_frame(
			frame.data(), frame.size(), [&](const uint8_t *p, size_t len) {
				refuse = !refuse; // every other offer finds the NIC full
				if (refuse)
					return false;
				got.emplace_back(p, p + len);
				return true;
			});
		taken += ok;
		refused += !ok;
	}
	EXPECT_GT(refused, 50);
	EXPECT_EQ(got, plain);
}

TEST(Faults, NthDmaAccessFailsOnce)
{
	Faults &f = pool(0);
	f.configure(settings("nic_dma_error_nth=5 gpu_dma_error_nth=2"));
	f.reset_counters();
	std::vector<int> failed;
	for (int i = 1; i <= 20; i++)
		if (f.dma_error(devmemsim::kFaultNic, 0, 64))
			failed.push_back(i);
	EXPECT_EQ(failed, std::vector<int>{5});
	EXPECT_FALSE(f.dma_error(devmemsim::kFaultGpu, 0, 64));
	EXPECT_TRUE(f.dma_error(devmemsim::kFaultGpu, 0, 64));
	EXPECT_FALSE(f.dma_error(devmemsim::kFaultGpu, 0, 64));
	EXPECT_EQ(f.counters().dma_errors[devmemsim::kFaultNic], 1u);
	EXPECT_EQ(f.counters().dma_errors[devmemsim::kFaultGpu], 1u);
	// New settings count from 1 again.
	f.configure(settings("nic_dma_error_nth=1"));
	EXPECT_TRUE(f.dma_error(devmemsim::kFaultNic, 0, 64));
}

TEST(Faults, NicRingsCanBeSpared)
{
	Faults &f = pool(0);
	f.set_ring_check([](uint64_t addr, uint64_t) { return addr < 0x1000; });
	f.configure(settings("nic_dma_error_rate=1 nic_dma_error_rings=false"));
	EXPECT_FALSE(f.dma_error(devmemsim::kFaultNic, 0x800, 16));
	EXPECT_TRUE(f.dma_error(devmemsim::kFaultNic, 0x2000, 1500));
	f.configure(settings("nic_dma_error_rate=1"));
	EXPECT_TRUE(f.dma_error(devmemsim::kFaultNic, 0x800, 16));
	f.set_ring_check(nullptr);
}

TEST(Faults, DmaErrorRate)
{
	Faults &f = pool(0);
	f.configure(settings("seed=11 gpu_dma_error_rate=0.25"));
	f.reset_counters();
	int hits = 0;
	for (int i = 0; i < 10000; i++) {
		hits += f.dma_error(devmemsim::kFaultGpu, 0, 64);
		EXPECT_FALSE(f.dma_error(devmemsim::kFaultNic, 0, 64));
	}
	EXPECT_NEAR(hits / 10000.0, 0.25, 0.02);
	EXPECT_EQ(f.counters().dma_errors[devmemsim::kFaultGpu], uint64_t(hits));
}

TEST(Faults, MsiFaultsArePerDevice)
{
	Faults &f = pool(0);
	std::vector<std::pair<unsigned, unsigned>> got;
	for (unsigned dev : {devmemsim::kFaultNic, devmemsim::kFaultGpu})
		f.set_irq_sink(dev, [&got, dev](unsigned v) { got.emplace_back(dev, v); });
	f.configure(settings("gpu_msi_drop_rate=1"));
	f.reset_counters();
	f.irq(devmemsim::kFaultNic, 3);
	f.irq(devmemsim::kFaultGpu, 0);
	f.irq(devmemsim::kFaultNic, 0);
	std::vector<std::pair<unsigned, unsigned>> want = {{devmemsim::kFaultNic, 3},
							   {devmemsim::kFaultNic, 0}};
	EXPECT_EQ(got, want);
	EXPECT_EQ(f.counters().msi_dropped, 1u);
	f.set_irq_sink(devmemsim::kFaultNic, nullptr);
	f.set_irq_sink(devmemsim::kFaultGpu, nullptr);
}

// ------------------------------------------------------------ through the C ABI

class FaultNode : public ::testing::Test
{
protected:
	static void SetUpTestSuite()
	{
		pool(0); // the direct tests' injectors exist before the model runs
		std::string err;
		node_ = fake_host::new_node("[faults]\nseed = 1\n", &err);
		ASSERT_NE(node_, nullptr) << err;
		mem_ = new std::vector<uint8_t>(dms_gpu_mem_size(node_));
		host_ = new fake_host::Host(1 << 20);
		host_->attach(node_, DMS_DEV_GPU);
		host_->attach(node_, DMS_DEV_NIC);
		dms_gpu_set_memory(node_, mem_->data());
		dms_node_step(node_, 0);
	}
	void SetUp() override
	{
		set("");
		host_->irqs.clear();
		gpu_wr(DMS_GPU_REG_IRQ_STATUS, 0xffffffff);
		gpu_wr(DMS_GPU_REG_IRQ_MASK, 0x7);
		dms_node_reset_stats(node_);
	}
	static void set(const std::string &s)
	{
		char err[256] = "";
		ASSERT_EQ(dms_node_set_faults(node_, s.c_str(), err, sizeof(err)), 0) << err;
	}
	static void gpu_wr(uint32_t off, uint32_t v)
	{
		dms_reg_write(node_, DMS_DEV_GPU, off, v, 4);
	}
	static void gpu_wr64(uint32_t off, uint64_t v)
	{
		dms_reg_write(node_, DMS_DEV_GPU, off, v, 8);
	}
	// Start a 4 KiB copy from device memory to guest RAM.
	static void start_copy()
	{
		gpu_wr64(DMS_GPU_REG_COPY_DEV_LO, 0);
		gpu_wr64(DMS_GPU_REG_COPY_HOST_LO, fake_host::kRamBase);
		gpu_wr64(DMS_GPU_REG_COPY_LEN_LO, 4096);
		gpu_wr(DMS_GPU_REG_COPY_CTRL, 0);
		gpu_wr(DMS_GPU_REG_COPY_DOORBELL, 1);
	}
	static uint32_t status()
	{
		return uint32_t(dms_reg_read(node_, DMS_DEV_GPU, DMS_GPU_REG_COPY_STATUS, 4));
	}
	// A copy run until the model is idle (late MSIs included); its COPY_STATUS.
	static uint32_t copy_status()
	{
		start_copy();
		fake_host::run_until_idle(node_, 100);
		return status();
	}
	// The model's time, from the stats.
	static uint64_t now()
	{
		std::string s = stats();
		return std::stoull(s.substr(s.find("\"time_ns\": ") + 11));
	}
	static void advance(uint64_t ns) { dms_node_step(node_, now() + ns); }
	static bool link_up()
	{
		return dms_reg_read(node_, DMS_DEV_NIC, DMS_NIC_REG_STATUS, 4) &
		       DMS_NIC_STATUS_LINK_UP;
	}
	static std::string stats() { return dms_node_stats_json(node_); }
	static std::string faults_json()
	{
		std::string s = stats();
		size_t at = s.find("\"faults\": {");
		return at == std::string::npos ? "" : s.substr(at, s.find('}', at) - at + 1);
	}

	static inline dms_node *node_;
	static inline std::vector<uint8_t> *mem_;
	static inline fake_host::Host *host_;
};

TEST_F(FaultNode, BadRunTimeSettingsKeepTheOldOnes)
{
	set("gpu_engine_error_rate=1");
	char err[256] = "";
	EXPECT_EQ(dms_node_set_faults(node_, "gpu_engine_error_rate=2", err, sizeof(err)), -1);
	EXPECT_NE(std::string(err).find("faults.gpu_engine_error_rate"), std::string::npos) << err;
	EXPECT_TRUE(copy_status() & DMS_GPU_STATUS_ERROR);
}

TEST_F(FaultNode, GpuEngineErrorEndsTheJob)
{
	EXPECT_EQ(copy_status(), DMS_GPU_STATUS_DONE);
	set("gpu_engine_error_rate=1");
	uint32_t st = copy_status();
	EXPECT_EQ(st & DMS_GPU_STATUS_ERROR, DMS_GPU_STATUS_ERROR);
	EXPECT_EQ((st & DMS_GPU_STATUS_ERR_MASK) >> DMS_GPU_STATUS_ERR_SHIFT,
		  unsigned(DMS_GPU_ERR_ENGINE));
	EXPECT_NE(faults_json().find("\"gpu_engine_errors\": 1"), std::string::npos) << stats();
}

TEST_F(FaultNode, GpuNthDmaAccessFaults)
{
	set("gpu_dma_error_nth=1");
	uint32_t st = copy_status();
	EXPECT_EQ((st & DMS_GPU_STATUS_ERR_MASK) >> DMS_GPU_STATUS_ERR_SHIFT,
		  unsigned(DMS_GPU_ERR_HOST_DMA));
	EXPECT_EQ(copy_status(), DMS_GPU_STATUS_DONE); // once only
	EXPECT_NE(faults_json().find("\"gpu_dma_errors\": 1"), std::string::npos) << stats();
}

TEST_F(FaultNode, LostAndLateMsis)
{
	set("gpu_msi_drop_rate=1");
	copy_status();
	EXPECT_TRUE(host_->irqs.empty());
	EXPECT_NE(faults_json().find("\"msi_dropped\": 1"), std::string::npos) << stats();

	set("gpu_msi_delay_rate=1 msi_delay_ns=5000");
	gpu_wr(DMS_GPU_REG_IRQ_STATUS, 0xffffffff);
	start_copy();
	for (int i = 0; i < 1000 && !(status() & DMS_GPU_STATUS_DONE); i++)
		advance(100); // done within 100 ns before this step
	ASSERT_EQ(status(), DMS_GPU_STATUS_DONE);
	EXPECT_TRUE(host_->irqs.empty());
	EXPECT_LE(dms_node_deadline_ns(node_), now() + 5000);
	advance(4800);
	EXPECT_TRUE(host_->irqs.empty());
	advance(200);
	EXPECT_EQ(host_->irqs, std::vector<unsigned>{0});
	EXPECT_NE(faults_json().find("\"msi_delayed\": 1"), std::string::npos) << stats();
	EXPECT_EQ(dms_node_deadline_ns(node_), DMS_NO_DEADLINE);
}

TEST_F(FaultNode, LinkFlapsOnSchedule)
{
	ASSERT_TRUE(link_up());
	set("link_down_after_ns=1000 link_down_ns=300 link_flap_period_ns=2000");
	std::vector<bool> seen;
	for (int i = 0; i < 12; i++) {
		advance(500);
		seen.push_back(link_up());
	}
	// Down over [1000, 1300), [3000, 3300), [5000, 5300): sampled at 500 ns steps.
	std::vector<bool> want = {true, false, true, true,  true, false,
				  true, true,  true, false, true, true};
	EXPECT_EQ(seen, want);
	EXPECT_NE(faults_json().find("\"link_downs\": 3"), std::string::npos) << stats();
	// Nothing arrives while the link is down (again over [7000, 7300)).
	advance(1000);
	ASSERT_FALSE(link_up());
	std::vector<uint8_t> frame = tcp_frame(100);
	EXPECT_EQ(dms_nic_receive(node_, frame.data(), frame.size()), 1);
	EXPECT_NE(faults_json().find("\"rx_link_down\": 1"), std::string::npos) << stats();
	// The host's own link state still rules: down stays down.
	set("");
	advance(0);
	dms_nic_set_link(node_, 0);
	EXPECT_FALSE(link_up());
	dms_nic_set_link(node_, 1);
	EXPECT_TRUE(link_up());
	EXPECT_EQ(dms_node_deadline_ns(node_), DMS_NO_DEADLINE);
}

TEST_F(FaultNode, WireFaultsAtTheNodeBoundary)
{
	set("rx_drop_rate=1");
	std::vector<uint8_t> frame = tcp_frame(100);
	EXPECT_EQ(dms_nic_receive(node_, frame.data(), frame.size()), 1);
	fake_host::run_until_idle(node_, 100);
	EXPECT_NE(faults_json().find("\"rx_dropped\": 1"), std::string::npos) << stats();
	EXPECT_NE(stats().find("\"rx_frames\": 0"), std::string::npos) << stats();
}

} // namespace
