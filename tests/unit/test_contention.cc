// SPDX-License-Identifier: MIT
// The timed fabric's shared resources: flows that cross the same link,
// switch, root complex or host memory share its bandwidth; saturation comes
// from the configuration. Expected rates are computed here from the PCIe
// arithmetic, not read back from the model.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>

#include "config.h"
#include "fabric_harness.h"
#include "gen4_x16.h"

using namespace fabric_test;

namespace
{

constexpr uint64_t kHost = 1ull << 32; // host memory above 4 GiB: 4-DW headers
constexpr size_t kBurst = 64 << 10;    // the GPU copy engine's burst
const sc_core::sc_time kRun(500, sc_core::SC_US);

using gen4_x16::kCplBps;
using gen4_x16::kLinkBps;

NodeConfig timed(unsigned hop_latency_ns, unsigned host_mem_gbps = 1638)
{
	NodeConfig c;
	c.mode = Mode::Timed;
	c.hop_latency_ns = hop_latency_ns;
	c.host_mem_gbps = host_mem_gbps;
	return c;
}

// One elaboration per process: every harness is built up front, one per
// test, so that no test queues behind another's traffic.
Harness &no_latency()
{
	static Harness h("no_latency", timed(0));
	return h;
}
Harness &readers()
{
	static Harness h("readers", timed(0));
	return h;
}
Harness &busy()
{
	static Harness h("busy", timed(0));
	return h;
}
Harness &with_latency()
{
	static Harness h("with_latency", timed(150));
	return h;
}
Harness &back_to_back()
{
	static Harness h("back_to_back", timed(150));
	return h;
}
Harness &small_reads()
{
	static Harness h("small_reads", timed(150));
	return h;
}
Harness &redirected_reads()
{
	static Harness h("redirected_reads", [] {
		NodeConfig c = timed(150);
		c.acs_redirect = true;
		return c;
	}());
	return h;
}
Harness &slow_memory() // 100 Gbit/s of host memory: 12.5e9 B/s
{
	static Harness h("slow_memory", timed(0, 100));
	return h;
}
Harness &acs_redirect()
{
	static Harness h("acs_redirect", [] {
		NodeConfig c = timed(0);
		c.acs_redirect = true;
		return c;
	}());
	return h;
}
Harness &huge()
{
	static Harness h("huge", timed(150));
	return h;
}
Harness &functional()
{
	static Harness h("functional", NodeConfig{});
	return h;
}

// A DMA engine that starts its next burst when the previous one is done.
struct Flow {
	tlm_utils::simple_initiator_socket<Harness> *socket;
	bool write;
	uint64_t addr;
	std::vector<uint8_t> buf = std::vector<uint8_t>(kBurst);
	sc_core::sc_time from, at; // first burst's start, next burst's start
	uint64_t bytes = 0;
	double rate() const { return static_cast<double>(bytes) / (at - from).to_seconds(); }
};

// When each harness's resources are next all idle: scenarios on one
// harness (and repeated test runs) start there, behind no one's traffic.
sc_core::sc_time &idle_from(const Harness &h)
{
	static std::map<const Harness *, sc_core::sc_time> idle;
	return idle[&h];
}

// Run the flows for kRun, each from the harness's idle time. The flow
// whose next burst starts first goes next, as SystemC would run them.
// The harness's clock stays at 0: a burst's start is its time offset.
void run(Harness &h, std::vector<Flow *> flows)
{
	const sc_core::sc_time from = idle_from(h);
	for (Flow *f : flows) {
		f->from = f->at = from;
		f->bytes = 0;
	}
	auto by_start = [](const Flow *a, const Flow *b) { return a->at < b->at; };
	for (Flow *f = flows[0]; f->at < from + kRun;
	     f = *std::min_element(flows.begin(), flows.end(), by_start)) {
		sc_core::sc_time d = f->at;
		ASSERT_TRUE(h.dma(*f->socket, f->write, f->addr, f->buf, &d));
		ASSERT_GT(d, f->at);
		f->at = d;
		f->bytes += f->buf.size();
	}
	for (const Flow *f : flows)
		idle_from(h) = std::max(idle_from(h), f->at);
	idle_from(h) += sc_core::sc_time(10, sc_core::SC_US);
}

class Contention : public ::testing::Test
{
protected:
	static void SetUpTestSuite()
	{
		no_latency();
		readers();
		busy();
		with_latency();
		back_to_back();
		small_reads();
		redirected_reads();
		slow_memory();
		acs_redirect();
		huge();
		functional();
		// Multi-sockets resolve their bindings when elaboration ends.
		sc_core::sc_start(sc_core::SC_ZERO_TIME);
	}
};

} // namespace

TEST_F(Contention, TwoFlowsOnOneLinkEachGetHalf)
{
	Harness &h = no_latency();
	Flow nic_host{&h.nic, true, kHost}, gpu_host{&h.gpu, true, kHost + (1 << 20)};
	Flow nic_gpu{&h.nic, true, kGpuBar};
	run(h, {&nic_host});
	EXPECT_NEAR(nic_host.rate(), kLinkBps, 0.01 * kLinkBps) << "alone: the whole link";
	// Both to host memory: they share the switch's upstream link.
	run(h, {&nic_host, &gpu_host});
	EXPECT_NEAR(nic_host.rate(), kLinkBps / 2, 0.03 * kLinkBps / 2);
	EXPECT_NEAR(gpu_host.rate(), kLinkBps / 2, 0.03 * kLinkBps / 2);
	// One to host memory, one to the GPU: they share the NIC's link.
	run(h, {&nic_host, &nic_gpu});
	EXPECT_NEAR(nic_host.rate(), kLinkBps / 2, 0.03 * kLinkBps / 2);
	EXPECT_NEAR(nic_gpu.rate(), kLinkBps / 2, 0.03 * kLinkBps / 2);
}

// Reads: requests go up, completions (64-byte RCB pieces, 12-byte headers)
// come down, and two readers of host memory share the uplink's down
// direction.
TEST_F(Contention, ReadCompletionsShareTheDownDirection)
{
	Harness &h = readers();
	Flow nic_read{&h.nic, false, kHost}, gpu_read{&h.gpu, false, kHost + (1 << 20)};
	run(h, {&nic_read});
	EXPECT_NEAR(nic_read.rate(), kCplBps, 0.01 * kCplBps);
	run(h, {&nic_read, &gpu_read});
	EXPECT_NEAR(nic_read.rate(), kCplBps / 2, 0.03 * kCplBps / 2);
	EXPECT_NEAR(gpu_read.rate(), kCplBps / 2, 0.03 * kCplBps / 2);
}

// A device's reads overlap: the switch and the root complex forward the
// second read's requests up while the first one's completions are still
// to come down. Two reads issued together are done one read's time plus
// the second's completions on the device's link after they start, not
// two round trips.
TEST_F(Contention, BackToBackReadsOverlap)
{
	Harness &h = back_to_back();
	constexpr size_t kRead = 4096;
	std::vector<uint8_t> a(kRead), b(kRead);
	sc_core::sc_time first = sc_core::SC_ZERO_TIME, second = sc_core::SC_ZERO_TIME;
	ASSERT_TRUE(h.dma(h.nic, false, kHost, a, &first));
	ASSERT_TRUE(h.dma(h.nic, false, kHost + kRead, b, &second));
	const double one_s = first.to_seconds();
	EXPECT_GT(one_s, 4 * 150e-9) << "four hops each way";
	EXPECT_NEAR(second.to_seconds(), one_s + kRead / kCplBps, 0.02 * one_s);
}

constexpr unsigned kReads = 32, kRead = 512;

// kReads reads of kRead bytes from addr on, all issued at `from`: how long
// the first and the last take, s.
std::pair<double, double> small_reads_from(Harness &h, uint64_t addr, sc_core::sc_time from)
{
	std::vector<uint8_t> buf(kRead);
	sc_core::sc_time first, last;
	for (unsigned i = 0; i < kReads; i++) {
		last = from;
		EXPECT_TRUE(h.dma(h.nic, false, addr + i * kRead, buf, &last));
		if (!i)
			first = last;
	}
	return {(first - from).to_seconds(), (last - from).to_seconds()};
}

// Small reads issued together, as a NIC reads a frame's payload pages:
// from the GPU they turn at the switch, whose requests leave on the GPU's
// port and completions on the NIC's, so the requests do not wait for the
// completions before them. The reads are done one read's time plus the
// others' completions on the NIC's link after they start, sooner than
// from host memory (two hops instead of four each way). (Were the
// switch's down direction one resource, each request would wait for the
// read before it: one read per hop latency, 4x slower than from host.)
TEST_F(Contention, SmallPeerReadsOverlapAsHostReadsDo)
{
	Harness &h = small_reads();
	const auto [peer_one, peer_all] = small_reads_from(h, kGpuBar, sc_core::SC_ZERO_TIME);
	const auto [host_one, host_all] =
		small_reads_from(h, kHost, sc_core::sc_time(1, sc_core::SC_MS));
	EXPECT_GT(peer_one, 2 * 150e-9) << "two hops each way";
	EXPECT_GT(host_one, 4 * 150e-9) << "four hops each way";
	EXPECT_NEAR(peer_all, peer_one + (kReads - 1) * kRead / kCplBps, 0.02 * peer_one);
	EXPECT_NEAR(host_all, host_one + (kReads - 1) * kRead / kCplBps, 0.02 * host_one);
	EXPECT_LT(peer_all, host_all);
}

// The same with ACS redirect: the reads turn at the root complex, and
// their requests and completions both go down the switch's uplink. Booked
// after the completions of the reads before, due a round trip sooner, the
// requests take the idle time before those: the reads still overlap.
// (With one "next free" time per link direction, each request would wait
// for the completions before it: 15.9 us for the 32 reads.)
TEST_F(Contention, SmallRedirectedPeerReadsOverlap)
{
	const auto [one, all] =
		small_reads_from(redirected_reads(), kGpuBar, sc_core::SC_ZERO_TIME);
	EXPECT_GT(one, 6 * 150e-9) << "three hops each way";
	EXPECT_NEAR(all, one + (kReads - 1) * kRead / kCplBps, 0.02 * one);
}

// With ACS redirect, peer-to-peer goes up to the root complex and back:
// it now shares the uplink with a host flow, where at the switch it did
// not.
TEST_F(Contention, AcsRedirectedPeerTrafficSharesTheUplink)
{
	Harness &h = acs_redirect();
	Flow nic_gpu{&h.nic, true, kGpuBar}, gpu_host{&h.gpu, true, kHost};
	run(h, {&nic_gpu, &gpu_host});
	EXPECT_NEAR(nic_gpu.rate(), kLinkBps / 2, 0.03 * kLinkBps / 2);
	EXPECT_NEAR(gpu_host.rate(), kLinkBps / 2, 0.03 * kLinkBps / 2);
	EXPECT_GT(h.fabric.counters().sockets[0].p2p_bytes, 0u);
}

// With the default hop latency, a lone flow waits out each burst's
// latency and leaves its links idle meanwhile; two flows to host memory
// fill the uplink and their sum stops at its bandwidth. Peer-to-peer plus
// a host flow share no link direction and no switch direction (the one
// goes down to the GPU, the other up), so each goes as fast as alone.
TEST_F(Contention, SaturatedUplinkCapsTheSum)
{
	Harness &h = with_latency();
	Flow nic_host{&h.nic, true, kHost}, gpu_host{&h.gpu, true, kHost + (1 << 20)};
	Flow nic_gpu{&h.nic, true, kGpuBar};
	run(h, {&nic_gpu});
	const double p2p_alone = nic_gpu.rate(); // one hop: faster than to the host
	run(h, {&nic_host});
	const double alone = nic_host.rate();
	EXPECT_LT(alone, 0.95 * kLinkBps);
	EXPECT_GT(alone, 0.80 * kLinkBps);
	run(h, {&nic_host, &gpu_host});
	const double bounce = nic_host.rate() + gpu_host.rate();
	EXPECT_LE(bounce, 1.005 * kLinkBps);
	EXPECT_GE(bounce, 0.97 * kLinkBps);
	run(h, {&nic_gpu, &gpu_host});
	const double devmem = nic_gpu.rate() + gpu_host.rate();
	EXPECT_NEAR(devmem, p2p_alone + alone, 0.02 * (p2p_alone + alone));
}

TEST_F(Contention, HostMemoryBandwidthCapsRootComplexTraffic)
{
	Harness &h = slow_memory();
	constexpr double kMemBps = 100e9 / 8;
	Flow nic_host{&h.nic, true, kHost}, gpu_read{&h.gpu, false, kHost + (1 << 20)};
	Flow nic_gpu{&h.nic, true, kGpuBar};
	run(h, {&nic_host});
	EXPECT_NEAR(nic_host.rate(), kMemBps, 0.02 * kMemBps);
	// A write and a read stream share host memory, not a link direction.
	h.fabric.reset_counters();
	run(h, {&nic_host, &gpu_read});
	EXPECT_NEAR(nic_host.rate() + gpu_read.rate(), kMemBps, 0.02 * kMemBps);
	// Host memory was busy all along, for exactly bytes / bandwidth.
	const FabricCounters &c = h.fabric.counters();
	const uint64_t mem_bytes = c.sockets[0].host_write_bytes + c.sockets[0].host_read_bytes;
	EXPECT_NEAR(c.sockets[0].host_mem_busy_ps / 1e12, mem_bytes / kMemBps, 1e-9);
	EXPECT_NEAR(c.sockets[0].host_mem_busy_ps / 1e12, kRun.to_seconds(),
		    0.02 * kRun.to_seconds());
	// Peer-to-peer never reaches host memory: the whole link.
	run(h, {&nic_gpu});
	EXPECT_NEAR(nic_gpu.rate(), kLinkBps, 0.01 * kLinkBps);
}

TEST_F(Contention, BusyTimeIsWireBytesOverBandwidth)
{
	Harness &h = busy();
	Flow nic_host{&h.nic, true, kHost}, gpu_host{&h.gpu, true, kHost + (1 << 20)};
	h.fabric.reset_counters();
	run(h, {&nic_host, &gpu_host});
	const FabricCounters &c = h.fabric.counters();
	const double raw = raw_bytes_per_second(h.fabric.link());
	const LinkCounters *dirs[] = {&c.endpoint[kNic][kUp], &c.endpoint[kGpu][kUp],
				      &c.uplink[0][kUp]};
	for (const LinkCounters *lc : dirs) {
		const double expect_s = static_cast<double>(lc->wire_bytes + lc->dllp_bytes) / raw;
		// Rounded to whole picoseconds once per transfer.
		EXPECT_NEAR(lc->busy_ps / 1e12, expect_s, 1e-12 * static_cast<double>(lc->tlps));
	}
	// The shared uplink was busy the whole run; each endpoint link half.
	const double elapsed = (std::max(nic_host.at, gpu_host.at) - nic_host.from).to_seconds();
	EXPECT_NEAR(c.uplink[0][kUp].busy_ps / 1e12 / elapsed, 1.0, 0.02);
	EXPECT_NEAR(c.endpoint[kNic][kUp].busy_ps / 1e12 / elapsed, 0.5, 0.02);
	// The switch forwarded both links' TLPs; its core, non-blocking, is
	// no resource. The root complex moved the uplink's into host memory
	// at 1024 Gbit/s (0.128 bytes per ps).
	EXPECT_EQ(c.switches[0].wire_bytes,
		  c.endpoint[kNic][kUp].wire_bytes + c.endpoint[kGpu][kUp].wire_bytes);
	EXPECT_EQ(c.switches[0].tlps, c.uplink[0][kUp].tlps);
	EXPECT_EQ(c.switches[0].busy_ps, 0u);
	EXPECT_NEAR(c.sockets[0].rc_busy_ps, c.uplink[0][kUp].wire_bytes / 0.128,
		    static_cast<double>(c.uplink[0][kUp].tlps));
}

// Functional mode: the same routing and counters, no delay and no queue.
TEST_F(Contention, FunctionalModeHasZeroLatency)
{
	Harness &h = functional();
	h.fabric.reset_counters();
	std::vector<uint8_t> buf(kBurst);
	for (int i = 0; i < 100; i++) {
		for (auto *s : {&h.nic, &h.gpu}) {
			sc_core::sc_time d = sc_core::SC_ZERO_TIME;
			ASSERT_TRUE(h.dma(*s, true, kHost, buf, &d));
			EXPECT_EQ(d, sc_core::SC_ZERO_TIME);
		}
	}
	const FabricCounters &c = h.fabric.counters();
	EXPECT_EQ(c.uplink[0][kUp].payload_bytes, 200u * kBurst);
	EXPECT_GT(c.uplink[0][kUp].busy_ps, 0u);
	EXPECT_GT(c.sockets[0].host_mem_busy_ps, 0u);
}

// A guest can post a DMA of gigabytes: the fabric's work for it is one
// reservation per resource on the path, not one per TLP, so a step that
// issues it stays short. Its time and counts are still the TLPs'.
TEST_F(Contention, HugeTransferIsTimedWithoutPerTlpWork)
{
	Harness &h = huge();
	h.fabric.reset_counters();
	constexpr uint64_t kLen = 2ull << 30;
	uint8_t byte = 0;
	tlm::tlm_generic_payload gp; // the host callback moves no data
	gp.set_command(tlm::TLM_WRITE_COMMAND);
	gp.set_address(kHost);
	gp.set_data_ptr(&byte);
	gp.set_data_length(static_cast<unsigned>(kLen));
	gp.set_streaming_width(static_cast<unsigned>(kLen));
	sc_core::sc_time d = idle_from(h);
	h.nic->b_transport(gp, d);
	ASSERT_TRUE(gp.is_response_ok());
	const double s = (d - idle_from(h)).to_seconds();
	EXPECT_NEAR(s, kLen / kLinkBps, 0.001 * kLen / kLinkBps);
	EXPECT_EQ(h.fabric.counters().uplink[0][kUp].tlps, kLen / 256);
	idle_from(h) = d;
}
