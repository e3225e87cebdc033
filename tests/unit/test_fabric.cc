// SPDX-License-Identifier: MIT
// PCIe fabric: link arithmetic against hand-computed values, routing at the
// switch or the root complex, and counters that add up.
#include <gtest/gtest.h>

#include "config.h"
#include "pcie/fabric.h"
#include "pcie/link.h"

#include "fabric_harness.h"

using namespace devmemsim;
using namespace devmemsim::pcie;
using namespace fabric_test;

// ---------------------------------------------------------------- link math

// Per direction, after 128b/130b line encoding:
//   Gen3: 8 GT/s/lane, Gen4: 16, Gen5: 32; bytes/s = GT/s * lanes * 128/130 / 8.
// A 64-bit-addressed memory write TLP adds a 16-byte (4 DW) header, a 4-byte
// STP framing token (which carries the sequence number) and a 4-byte LCRC:
// 24 bytes per TLP. Ack and UpdateFC DLLPs (8 bytes each, once per the
// spec's interval: 168 symbol times at x16 MPS 256, 214 at x4) and SKP
// ordered sets (4 per 1538) take the share s of the link (pcie-bench's
// model). A long stream of writes cut at MPS therefore reaches
//   raw * (1 - s) * MPS / (MPS + 24)
// payload bytes per second.
TEST(LinkMath, EffectivePayloadBandwidth)
{
	constexpr double skp = 4.0 / 1538;
	struct Case {
		unsigned gen, width, mps;
		double expect;
	} cases[] = {
		// Gen3 x4: raw 8e9*4*128/130/8 = 3.938461538e9 B/s
		{3, 4, 128, 3.938461538e9 * (1 - 16.0 / 169 - skp) * 128 / 152},
		{3, 4, 256, 3.938461538e9 * (1 - 16.0 / 214 - skp) * 256 / 280},
		{3, 4, 512, 3.938461538e9 * (1 - 16.0 / 250 - skp) * 512 / 536},
		// Gen4 x16: raw 16e9*16*128/130/8 = 31.50769231e9 B/s
		{4, 16, 128, 31.50769231e9 * (1 - 16.0 / 144 - skp) * 128 / 152},
		{4, 16, 256, 31.50769231e9 * (1 - 16.0 / 168 - skp) * 256 / 280}, // 26.05e9
		{4, 16, 512, 31.50769231e9 * (1 - 16.0 / 182 - skp) * 512 / 536},
		// Gen5 x16: raw 32e9*16*128/130/8 = 63.01538462e9 B/s
		{5, 16, 128, 63.01538462e9 * (1 - 16.0 / 144 - skp) * 128 / 152},
		{5, 16, 256, 63.01538462e9 * (1 - 16.0 / 168 - skp) * 256 / 280},
		{5, 16, 512, 63.01538462e9 * (1 - 16.0 / 182 - skp) * 512 / 536},
	};
	for (const Case &c : cases) {
		LinkParams p;
		p.gen = c.gen;
		p.width = c.width;
		p.mps = c.mps;
		EXPECT_NEAR(effective_write_bandwidth(p, 1 << 20), c.expect, c.expect * 1e-9)
			<< "Gen" << c.gen << " x" << c.width << " MPS " << c.mps;
	}
}

// pcie-bench (Neugebauer et al., SIGCOMM 2018) gives 57.88 Gbit/s of TLP
// bandwidth for Gen3 x8 at MPS 256 once DLLPs and SKPs are taken off the
// 63.02 Gbit/s raw rate.
TEST(LinkMath, DllpShareMatchesPcieBench)
{
	LinkParams p;
	p.gen = 3;
	p.width = 8;
	p.mps = 256;
	EXPECT_NEAR(raw_bytes_per_second(p) * 8 * (1 - dllp_share(p)) / 1e9, 57.88, 0.005);
	// The direction is busy for the TLPs and that share on top.
	EXPECT_EQ(dllp_bytes(p, 1000000), 88635u); // 1e6 * s / (1 - s), s = 0.0814185
	p.gen = 6; // FLIT mode: Ack and flow control ride in the flits
	EXPECT_EQ(dllp_share(p), 0.0);
	EXPECT_EQ(dllp_bytes(p, 1000000), 0u);
}

// Gen6 (FLIT mode): 64 GT/s PAM4, no line encoding overhead; TLPs carry no
// framing or LCRC but only 236 of every 256 flit bytes are TLP bytes.
// x16: raw 64e9*16/8 = 128e9 B/s; MPS 256: 128e9 * 256 / ((256 + 16) * 256 / 236).
TEST(LinkMath, Gen6FlitMode)
{
	LinkParams p;
	p.gen = 6;
	p.width = 16;
	p.mps = 256;
	double expect = 128e9 * 256 / (272.0 * 256 / 236);
	EXPECT_NEAR(effective_write_bandwidth(p, 1 << 20), expect, expect * 1e-6);
}

TEST(LinkMath, SplittingAtMpsMrrsAndRcb)
{
	LinkParams p; // Gen4 x16, MPS 256, MRRS 512, RCB 64
	// 4 KiB at a 32-bit address: 16 TLPs of 12 B header + 8 B framing.
	Cost w = write_cost(p, 0x100000, 4096);
	EXPECT_EQ(w.tlps, 16u);
	EXPECT_EQ(w.wire_bytes, 4096u + 16 * 20);
	// Unaligned: 0x1f0..0x30f crosses two 256-byte boundaries: 3 TLPs.
	EXPECT_EQ(write_cost(p, 0x1f0, 0x120).tlps, 3u);
	// Read of 4 KiB above 4 GiB: 8 requests (16 B header each), no payload.
	Cost rq = read_request_cost(p, 1ull << 33, 4096);
	EXPECT_EQ(rq.tlps, 8u);
	EXPECT_EQ(rq.wire_bytes, 8u * 24);
	// Its completions: 64 of 64 bytes with 12 B headers.
	Cost cp = completion_cost(p, 1ull << 33, 4096);
	EXPECT_EQ(cp.tlps, 64u);
	EXPECT_EQ(cp.wire_bytes, 4096u + 64 * 20);
	EXPECT_EQ(split_count(0, 0, 256), 0u);
}

TEST(LinkMath, SerializationTime)
{
	LinkParams p;
	p.gen = 3;
	p.width = 1; // 0.984615385e9 B/s: 1000 bytes take 1015.625 ns
	EXPECT_EQ(serialize_ps(p, 1000), 1015625u);
}

TEST(LinkMath, InvalidParametersAreNamed)
{
	LinkParams p;
	p.gen = 2;
	EXPECT_STREQ(check(p), "PCIe generation must be 3, 4, 5 or 6");
	p = LinkParams{};
	p.width = 3;
	EXPECT_NE(check(p), nullptr);
	p = LinkParams{};
	p.mps = 384;
	EXPECT_NE(check(p), nullptr);
	EXPECT_EQ(check(LinkParams{}), nullptr);
}

// ------------------------------------------------------------------ routing

namespace
{

NodeConfig config(bool acs, bool timed = false)
{
	NodeConfig c;
	c.acs_redirect = acs;
	c.mode = timed ? Mode::Timed : Mode::Functional;
	return c;
}

// One elaboration per process: every harness is built up front.
Harness &plain()
{
	static Harness h("plain", config(false));
	return h;
}
Harness &acs()
{
	static Harness h("acs", config(true));
	return h;
}
Harness &timed()
{
	static Harness h("timed", config(false, true));
	return h;
}

// Payload into the switch equals payload out of it.
void expect_switch_conserves(const FabricCounters &c)
{
	uint64_t in = c.endpoint[kNic][kUp].payload_bytes + c.endpoint[kGpu][kUp].payload_bytes +
		      c.uplink[0][kDown].payload_bytes;
	uint64_t out = c.endpoint[kNic][kDown].payload_bytes +
		       c.endpoint[kGpu][kDown].payload_bytes + c.uplink[0][kUp].payload_bytes;
	EXPECT_EQ(in, out);
}

class Routing : public ::testing::Test
{
protected:
	static void SetUpTestSuite()
	{
		plain();
		acs();
		timed();
		// Multi-sockets resolve their bindings when elaboration ends.
		sc_core::sc_start(sc_core::SC_ZERO_TIME);
	}
	void SetUp() override
	{
		for (Harness *h : {&plain(), &acs(), &timed()}) {
			h->fabric.reset_counters();
			h->host_calls.clear();
			h->host_ok = true;
		}
	}
};

} // namespace

TEST_F(Routing, NicToGpuBarTurnsAroundAtTheSwitch)
{
	Harness &h = plain();
	std::vector<uint8_t> buf(4096, 0xab);
	ASSERT_TRUE(h.dma(h.nic, true, kGpuBar + 0x1000, buf));
	const FabricCounters &c = h.fabric.counters();
	EXPECT_EQ(c.switches[0].p2p_bytes, 4096u);
	EXPECT_EQ(c.endpoint[kNic][kUp].payload_bytes, 4096u);
	EXPECT_EQ(c.endpoint[kNic][kUp].tlps, 16u);
	EXPECT_EQ(c.endpoint[kNic][kUp].wire_bytes, 4096u + 16 * 24);
	EXPECT_EQ(c.endpoint[kGpu][kDown].payload_bytes, 4096u);
	EXPECT_EQ(c.uplink[0][kUp].tlps + c.uplink[0][kDown].tlps, 0u);
	EXPECT_EQ(c.sockets[0].host_write_bytes + c.sockets[0].host_read_bytes +
			  c.sockets[0].p2p_bytes,
		  0u);
	EXPECT_TRUE(h.host_calls.empty());
	EXPECT_EQ(h.gpu_ram[0x1000], 0xab);
	EXPECT_EQ(h.gpu_ram[0x1fff], 0xab);
	expect_switch_conserves(c);
}

TEST_F(Routing, HostAddressGoesToTheRootComplex)
{
	Harness &h = plain();
	std::vector<uint8_t> buf(4096);
	ASSERT_TRUE(h.dma(h.nic, true, 0x100000, buf));
	const FabricCounters &c = h.fabric.counters();
	EXPECT_EQ(c.sockets[0].host_write_bytes, 4096u);
	EXPECT_EQ(c.uplink[0][kUp].payload_bytes, 4096u);
	EXPECT_EQ(c.uplink[0][kUp].wire_bytes, 4096u + 16 * 20); // 32-bit: 3 DW headers
	EXPECT_EQ(c.switches[0].p2p_bytes, 0u);
	ASSERT_EQ(h.host_calls.size(), 1u);
	EXPECT_EQ(h.host_calls[0].port, unsigned(kNic));
	EXPECT_EQ(h.host_calls[0].addr, 0x100000u);
	EXPECT_TRUE(h.host_calls[0].write);
	expect_switch_conserves(c);
}

TEST_F(Routing, HostReadCountsRequestsAndCompletions)
{
	Harness &h = plain();
	std::vector<uint8_t> buf(4096);
	ASSERT_TRUE(h.dma(h.gpu, false, 0x200000, buf));
	const FabricCounters &c = h.fabric.counters();
	EXPECT_EQ(c.sockets[0].host_read_bytes, 4096u);
	EXPECT_EQ(c.endpoint[kGpu][kUp].tlps, 8u); // MRRS 512
	EXPECT_EQ(c.endpoint[kGpu][kUp].payload_bytes, 0u);
	EXPECT_EQ(c.endpoint[kGpu][kDown].tlps, 64u); // RCB 64
	EXPECT_EQ(c.endpoint[kGpu][kDown].payload_bytes, 4096u);
	EXPECT_EQ(c.uplink[0][kDown].payload_bytes, 4096u);
	expect_switch_conserves(c);
}

TEST_F(Routing, AcsRedirectSendsP2pThroughTheRootComplex)
{
	Harness &h = acs();
	std::vector<uint8_t> buf(8192, 0x5a);
	ASSERT_TRUE(h.dma(h.nic, true, kGpuBar, buf));
	const FabricCounters &c = h.fabric.counters();
	EXPECT_EQ(c.switches[0].p2p_bytes, 0u);
	EXPECT_EQ(c.sockets[0].p2p_bytes, 8192u);
	EXPECT_EQ(c.uplink[0][kUp].payload_bytes, 8192u);
	EXPECT_EQ(c.uplink[0][kDown].payload_bytes, 8192u);
	EXPECT_EQ(c.endpoint[kGpu][kDown].payload_bytes, 8192u);
	EXPECT_EQ(c.sockets[0].host_write_bytes, 0u);
	EXPECT_TRUE(h.host_calls.empty());
	EXPECT_EQ(h.gpu_ram[8191], 0x5a);
	expect_switch_conserves(c);
}

TEST_F(Routing, CountersAddUpOverAMixedSequence)
{
	Harness &h = plain();
	std::vector<uint8_t> a(1500), b(9000), c4(4096);
	ASSERT_TRUE(h.dma(h.nic, true, kGpuBar + 64, b));
	ASSERT_TRUE(h.dma(h.nic, true, 0x300000, a));
	ASSERT_TRUE(h.dma(h.gpu, true, 0x400000, c4));
	ASSERT_TRUE(h.dma(h.gpu, false, 0x500000, c4));
	ASSERT_TRUE(h.dma(h.nic, false, kGpuBar + 0x10000, a));
	const FabricCounters &c = h.fabric.counters();
	expect_switch_conserves(c);
	EXPECT_EQ(c.switches[0].p2p_bytes, 9000u + 1500);
	EXPECT_EQ(c.sockets[0].host_write_bytes, 1500u + 4096);
	EXPECT_EQ(c.sockets[0].host_read_bytes, 4096u);
	EXPECT_EQ(c.uplink[0][kUp].payload_bytes, c.sockets[0].host_write_bytes);
	EXPECT_EQ(c.uplink[0][kDown].payload_bytes, c.sockets[0].host_read_bytes);
}

TEST_F(Routing, FaultsAndWindowOverrunsAreErrors)
{
	Harness &h = plain();
	h.host_ok = false;
	std::vector<uint8_t> buf(256);
	EXPECT_FALSE(h.dma(h.gpu, true, 0xfee00000, buf));
	std::vector<uint8_t> big(8192);
	EXPECT_FALSE(h.dma(h.nic, true, kGpuBar + kGpuBarSize - 4096, big));
	EXPECT_EQ(h.fabric.counters().dma_faults, 2u);
}

// Found by the model fuzzer: a guest-posted buffer at the top of the
// address space made the link counters wrap (split_count over addr + len).
TEST_F(Routing, RequestPastTheTopOfTheAddressSpaceFaultsUncounted)
{
	Harness &h = plain();
	std::vector<uint8_t> buf(1000);
	EXPECT_FALSE(h.dma(h.nic, true, 0xffffffffffffff00ull, buf));
	const FabricCounters &c = h.fabric.counters();
	EXPECT_EQ(c.dma_faults, 1u);
	EXPECT_EQ(c.endpoint[kNic][kUp].tlps, 0u);
	EXPECT_EQ(c.endpoint[kNic][kUp].wire_bytes, 0u);
	EXPECT_TRUE(h.host_calls.empty());
}

TEST_F(Routing, TimedModeAnnotatesSerializationAndHops)
{
	Harness &h = timed();
	std::vector<uint8_t> buf(4096);
	// Each run starts after the last one's transfer: the fabric is idle.
	static sc_core::sc_time start = sc_core::SC_ZERO_TIME;
	start += sc_core::sc_time(1, sc_core::SC_MS);
	sc_core::sc_time d = start;
	ASSERT_TRUE(h.dma(h.nic, true, kGpuBar, buf, &d));
	d -= start;
	// 16 TLPs of 280 wire bytes (4480) plus their DLLP share s on each
	// link: L = 4480 / (1 - s) / 31.5077e9 B/s. The switch (non-blocking)
	// forwards them after its 150 ns latency. Pipelined per TLP: the first
	// TLP crosses the NIC link and the switch (L/16 + 150 ns), then the
	// GPU link carries the whole burst (L).
	const double s = 16.0 / 168 + 4.0 / 1538;
	const double l_ns = 4480 / (1 - s) / 31.50769231e9 * 1e9;
	// (DLLP bytes are whole bytes: 0.5 byte is 0.016 ns.)
	EXPECT_NEAR(d.to_seconds() * 1e9, 150 + l_ns * 17 / 16, 0.03);
	const LinkCounters &nic_up = h.fabric.counters().endpoint[kNic][kUp];
	EXPECT_EQ(nic_up.dllp_bytes, dllp_bytes(h.fabric.link(), 4480));
	EXPECT_NEAR(nic_up.busy_ps / 1000.0, l_ns, 0.02);
	sc_core::sc_time none;
	ASSERT_TRUE(plain().dma(plain().nic, true, kGpuBar, buf, &none));
	EXPECT_EQ(none, sc_core::SC_ZERO_TIME); // functional mode: no delay
}
