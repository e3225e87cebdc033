// SPDX-License-Identifier: MIT
// The NIC's datapath through the C ABI with a fake host: header split,
// multi-buffer frames, flow control, steering over RSS, TX gather with
// checksum insertion, and malformed input counted and survived.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "devmemsim/devmemsim.h"
#include "devmemsim/nic_desc.h"
#include "devmemsim/nic_regs.h"
#include "fake_host.h"
#include "frames.h"
#include "nic_suite.h"

namespace
{

using fake_host::Host;
constexpr uint64_t kRam = fake_host::kRamBase; // fake host RAM: 16 MiB from here

// Ring layout of queue q in fake RAM.
struct Rings {
	uint64_t hbuf, pbuf, rcmpl, hdata, pdata, tdesc, tcmpl, tdata;
};
Rings rings(unsigned q)
{
	uint64_t b = kRam + q * 0x300000ull;
	return {b,	     b + 0x1000, b + 0x2000, b + 0x10000,
		b + 0x40000, b + 0x3000, b + 0x4000, b + 0x200000};
}
constexpr unsigned kLog2 = 6; // 64 entries
constexpr unsigned kHbuf = 256, kPbuf = 4096;

class Nic : public NicSuite
{
protected:
	void SetUp() override
	{
		reset_nic(1000);
		for (unsigned q = 0; q < 4; q++)
			enable(q);
		ph_.assign(4, true);
		ch_.assign(4, 0);
	}
	static void qw(unsigned q, uint32_t off, uint32_t v) { wr(DMS_NIC_Q_BASE(q) + off, v); }
	static void run() { fake_host::run_until_idle(node_, 1000); }
	// Rings set up, `posted` buffers of each kind posted.
	static void enable(unsigned q, unsigned posted = 32)
	{
		Rings r = rings(q);
		qw(q, DMS_NIC_RXQ_RING_LOG2, kLog2);
		qw(q, DMS_NIC_RXQ_HBUF_BASE_LO, uint32_t(r.hbuf));
		qw(q, DMS_NIC_RXQ_PBUF_BASE_LO, uint32_t(r.pbuf));
		qw(q, DMS_NIC_RXQ_CMPL_BASE_LO, uint32_t(r.rcmpl));
		qw(q, DMS_NIC_RXQ_HBUF_SIZE, kHbuf);
		qw(q, DMS_NIC_RXQ_PBUF_SIZE, kPbuf);
		qw(q, DMS_NIC_RXQ_CTRL, DMS_NIC_Q_ENABLE);
		post(q, 0, posted);
		qw(q, DMS_NIC_TXQ_RING_LOG2, kLog2);
		qw(q, DMS_NIC_TXQ_DESC_BASE_LO, uint32_t(r.tdesc));
		qw(q, DMS_NIC_TXQ_CMPL_BASE_LO, uint32_t(r.tcmpl));
		qw(q, DMS_NIC_TXQ_CTRL, DMS_NIC_Q_ENABLE);
		qw(q, DMS_NIC_Q_IRQ_ARM, 1);
	}
	static void post(unsigned q, unsigned from, unsigned n)
	{
		Rings r = rings(q);
		for (unsigned i = from; i < from + n; i++) {
			unsigned s = i % 64;
			dms_rx_buf hb{r.hdata + s * kHbuf, uint16_t(100 + s), {}};
			dms_rx_buf pb{r.pdata + s * uint64_t(kPbuf), uint16_t(200 + s), {}};
			std::memcpy(host_->at(r.hbuf + 16 * s), &hb, 16);
			std::memcpy(host_->at(r.pbuf + 16 * s), &pb, 16);
		}
		qw(q, DMS_NIC_RXQ_HBUF_TAIL, (from + n) % 64);
		qw(q, DMS_NIC_RXQ_PBUF_TAIL, (from + n) % 64);
	}
	// Next RX completion of queue q, if the device wrote one.
	bool next(unsigned q, dms_rx_cmpl *c)
	{
		std::memcpy(c, host_->at(rings(q).rcmpl + 32 * ch_[q]), 32);
		if (bool(c->flags & DMS_RX_F_GEN) != ph_[q])
			return false;
		if (++ch_[q] == 64) {
			ch_[q] = 0;
			ph_[q] = !ph_[q];
		}
		qw(q, DMS_NIC_RXQ_CMPL_HEAD, ch_[q]);
		return true;
	}
	static void rx(const std::vector<uint8_t> &f)
	{
		ASSERT_EQ(dms_nic_receive(node_, f.data(), f.size()), 1);
		run();
	}
	// Frame f arrives at simulated time `at` and the model runs up to it.
	static void rx_at(const std::vector<uint8_t> &f, uint64_t at)
	{
		dms_node_step(node_, at);
		ASSERT_EQ(dms_nic_receive(node_, f.data(), f.size()), 1);
		dms_node_step(node_, at);
	}
	static std::string stats() { return dms_node_stats_json(node_); }
	// The model's simulated time.
	static uint64_t now()
	{
		std::string s = stats();
		return std::stoull(s.substr(s.find("\"time_ns\": ") + 11));
	}

	// DROP_EN tests: tcp dport 80 to queue 2, enabled afresh with `flags`
	// and nothing posted; everything else to queue 0.
	static void drop_en_setup(uint32_t flags)
	{
		wr(DMS_NIC_REG_RX_CTRL, DMS_NIC_RX_NTUPLE);
		wr(DMS_NIC_REG_NT_CTRL,
		   DMS_NIC_NT_VALID | 6 << DMS_NIC_NT_PROTO_SHIFT | 2 << DMS_NIC_NT_QUEUE_SHIFT);
		wr(DMS_NIC_REG_NT_PORTS, 80);
		wr(DMS_NIC_REG_NT_PORT_MASK, 0xffff);
		wr(DMS_NIC_REG_NT_COMMIT, 0);
		starve_queue2(flags);
	}
	static void starve_queue2(uint32_t flags)
	{
		qw(2, DMS_NIC_RXQ_CTRL, 0);
		qw(2, DMS_NIC_RXQ_CTRL, DMS_NIC_Q_ENABLE | flags);
	}
	// Frames to queue 2 ('2') and queue 0 ('0'), in this order on the wire.
	static void arrive(const char *order)
	{
		frames::Spec s;
		for (const char *c = order; *c; c++) {
			s.dport = *c == '2' ? 80 : 81;
			auto f = frames::build(s);
			ASSERT_EQ(dms_nic_receive(node_, f.data(), f.size()), 1);
		}
		run();
	}
	// Completions queue q has written since the last look.
	unsigned completions(unsigned q)
	{
		dms_rx_cmpl c;
		unsigned n = 0;
		while (next(q, &c))
			n++;
		return n;
	}

	std::vector<bool> ph_;
	std::vector<unsigned> ch_;
};

} // namespace

TEST_F(Nic, HeaderSplitPlacesHeadersAndPayloadApart)
{
	wr(DMS_NIC_REG_RX_CTRL, DMS_NIC_RX_HDR_SPLIT | DMS_NIC_RX_CSUM);
	frames::Spec s;
	s.payload = 1000;
	auto f = frames::build(s);
	rx(f);
	dms_rx_cmpl c;
	ASSERT_TRUE(next(0, &c));
	EXPECT_EQ(c.flags & (DMS_RX_F_SOP | DMS_RX_F_EOP | DMS_RX_F_HDR | DMS_RX_F_PAY |
			     DMS_RX_F_SPLIT | DMS_RX_F_CSUM_OK),
		  DMS_RX_F_SOP | DMS_RX_F_EOP | DMS_RX_F_HDR | DMS_RX_F_PAY | DMS_RX_F_SPLIT |
			  DMS_RX_F_CSUM_OK);
	EXPECT_EQ(c.hdr_len, 54);
	EXPECT_EQ(c.pay_len, 1000u);
	EXPECT_EQ(c.frame_len, f.size());
	EXPECT_EQ(c.hbuf_id, 100);
	EXPECT_EQ(c.pbuf_id, 200);
	EXPECT_EQ(c.info, DMS_RX_L3_IPV4 | DMS_RX_L4_TCP);
	Rings r = rings(0);
	EXPECT_EQ(std::memcmp(host_->at(r.hdata), f.data(), 54), 0);
	EXPECT_EQ(std::memcmp(host_->at(r.pdata), f.data() + 54, 1000), 0);
	EXPECT_EQ(host_->irqs, std::vector<unsigned>{1});
	EXPECT_FALSE(next(0, &c));
}

TEST_F(Nic, ThresholdSmallFramesAndSplitOff)
{
	wr(DMS_NIC_REG_RX_CTRL, DMS_NIC_RX_HDR_SPLIT);
	wr(DMS_NIC_REG_HDS_THRESH, 200);
	frames::Spec s;
	s.payload = 100; // under the threshold: whole frame in the header buffer
	rx(frames::build(s));
	dms_rx_cmpl c;
	ASSERT_TRUE(next(0, &c));
	EXPECT_EQ(c.flags & (DMS_RX_F_HDR | DMS_RX_F_PAY | DMS_RX_F_SPLIT), DMS_RX_F_HDR);
	EXPECT_EQ(c.hdr_len, 154);
	// Split off: everything to payload buffers.
	wr(DMS_NIC_REG_RX_CTRL, 0);
	rx(frames::build(s));
	ASSERT_TRUE(next(0, &c));
	EXPECT_EQ(c.flags & (DMS_RX_F_HDR | DMS_RX_F_PAY | DMS_RX_F_SPLIT), DMS_RX_F_PAY);
	EXPECT_EQ(c.pay_len, 154u);
	EXPECT_EQ(c.pbuf_id, 200); // the first frame took no payload buffer
}

// v1.8: a WHOLE queue (AF_XDP zero-copy) never splits and never takes a
// header buffer, while header split stays on for the others.
TEST_F(Nic, WholeQueueTakesFramesWholeUnderHeaderSplit)
{
	EXPECT_TRUE(rd(DMS_NIC_REG_CAPS) & DMS_NIC_CAP_RXQ_WHOLE);
	wr(DMS_NIC_REG_RX_CTRL, DMS_NIC_RX_HDR_SPLIT);
	qw(0, DMS_NIC_RXQ_CTRL, 0);
	qw(0, DMS_NIC_RXQ_CTRL, DMS_NIC_Q_ENABLE | DMS_NIC_Q_WHOLE);
	EXPECT_EQ(rd(DMS_NIC_Q_BASE(0) + DMS_NIC_RXQ_CTRL), DMS_NIC_Q_ENABLE | DMS_NIC_Q_WHOLE);
	post(0, 0, 32);
	frames::Spec s;
	for (unsigned payload : {1000u, 100u}) { // would split; would fit a header buffer
		s.payload = payload;
		auto f = frames::build(s);
		rx(f);
		dms_rx_cmpl c;
		ASSERT_TRUE(next(0, &c));
		EXPECT_EQ(c.flags & (DMS_RX_F_SOP | DMS_RX_F_EOP | DMS_RX_F_HDR | DMS_RX_F_PAY |
				     DMS_RX_F_SPLIT),
			  DMS_RX_F_SOP | DMS_RX_F_EOP | DMS_RX_F_PAY);
		EXPECT_EQ(c.hdr_len, 0);
		EXPECT_EQ(c.pay_len, f.size());
		EXPECT_EQ(
			std::memcmp(host_->at(rings(0).pdata + (c.pbuf_id - 200) * uint64_t(kPbuf)),
				    f.data(), f.size()),
			0);
	}
	// Disabled and enabled without it: the queue splits again.
	qw(0, DMS_NIC_RXQ_CTRL, 0);
	qw(0, DMS_NIC_RXQ_CTRL, DMS_NIC_Q_ENABLE);
	EXPECT_EQ(rd(DMS_NIC_Q_BASE(0) + DMS_NIC_RXQ_CTRL), DMS_NIC_Q_ENABLE);
}

TEST_F(Nic, JumboFrameSpansPayloadBuffers)
{
	wr(DMS_NIC_REG_MTU, 9000);
	wr(DMS_NIC_REG_RX_CTRL, DMS_NIC_RX_HDR_SPLIT);
	frames::Spec s;
	s.payload = 8948; // 9000-byte IP packet
	auto f = frames::build(s);
	rx(f);
	dms_rx_cmpl c[3];
	for (auto &x : c)
		ASSERT_TRUE(next(0, &x));
	EXPECT_TRUE(c[0].flags & DMS_RX_F_SOP);
	EXPECT_FALSE(c[0].flags & DMS_RX_F_EOP);
	EXPECT_TRUE(c[2].flags & DMS_RX_F_EOP);
	EXPECT_EQ(c[0].pay_len + c[1].pay_len + c[2].pay_len, 8948u);
	EXPECT_EQ(c[2].pay_len, 8948u - 2 * 4096);
	Rings r = rings(0);
	EXPECT_EQ(std::memcmp(host_->at(r.pdata + 2 * 4096), f.data() + 54 + 8192, 8948 - 8192), 0);
	// Over the MTU: dropped and counted.
	wr(DMS_NIC_REG_MTU, 1500);
	rx(f);
	EXPECT_FALSE(next(0, &c[0]));
	EXPECT_EQ(rd(DMS_NIC_REG_STAT_RX_DROP), 1u);
}

TEST_F(Nic, SteeringBeatsRss)
{
	wr(DMS_NIC_REG_RX_CTRL, DMS_NIC_RX_RSS | DMS_NIC_RX_NTUPLE);
	for (unsigned i = 0; i < 10; i++)
		wr(DMS_NIC_REG_RSS_KEY(i), 0x6d5a56da + i);
	for (unsigned i = 0; i < 128; i++)
		wr(DMS_NIC_REG_RSS_INDIR(i), 1); // RSS: everything to queue 1
	frames::Spec s;
	rx(frames::build(s));
	dms_rx_cmpl c;
	ASSERT_TRUE(next(1, &c));
	EXPECT_TRUE(c.flags & DMS_RX_F_RSS);
	// Rule: TCP dport 80 -> queue 2.
	wr(DMS_NIC_REG_NT_CTRL,
	   DMS_NIC_NT_VALID | 6 << DMS_NIC_NT_PROTO_SHIFT | 2 << DMS_NIC_NT_QUEUE_SHIFT);
	wr(DMS_NIC_REG_NT_PORTS, 80);
	wr(DMS_NIC_REG_NT_PORT_MASK, 0xffff);
	wr(DMS_NIC_REG_NT_COMMIT, 5);
	rx(frames::build(s));
	ASSERT_TRUE(next(2, &c));
	EXPECT_FALSE(next(1, &c));
	s.dport = 81; // other flows still follow RSS
	rx(frames::build(s));
	ASSERT_TRUE(next(1, &c));
	EXPECT_NE(stats().find(
			  "\"queues\": [{\"rx_frames\": 0, \"rx_split\": 0, \"rx_no_buf_drop\": 0, "
			  "\"tx_frames\": 0}, {\"rx_frames\": 2, \"rx_split\": 0, "
			  "\"rx_no_buf_drop\": 0, \"tx_frames\": 0}, {\"rx_frames\": 1,"),
		  std::string::npos)
		<< stats();
}

TEST_F(Nic, NoBuffersStallsThenFlushes)
{
	qw(0, DMS_NIC_RXQ_CTRL, 0);
	enable(0, 2); // two buffers
	frames::Spec s;
	auto f = frames::build(s);
	for (int i = 0; i < 3; i++)
		ASSERT_EQ(dms_nic_receive(node_, f.data(), f.size()), 1);
	run();
	dms_rx_cmpl c;
	EXPECT_TRUE(next(0, &c));
	EXPECT_TRUE(next(0, &c));
	EXPECT_FALSE(next(0, &c)); // the third waits for a buffer
	EXPECT_EQ(rd(DMS_NIC_REG_STAT_RX_NO_BUF), 1u);
	// Fill the FIFO: the NIC refuses, then asks for more once it drains.
	unsigned taken = 0;
	while (dms_nic_receive(node_, f.data(), f.size()))
		taken++;
	EXPECT_EQ(taken, 64u);
	post(0, 2, 40);
	run();
	EXPECT_EQ(host_->rx_ready, 1);
	EXPECT_EQ(rd(DMS_NIC_REG_STAT_RX_DROP), 0u);
}

// v1.10 DROP_EN (hardening issue 28). One engine takes every queue's
// frames in wire order: drop_en_setup() steers tcp dport 80 to queue 2,
// everything else goes to queue 0, and queue 2 has no buffers. Without
// DROP_EN its frame waits in the engine and holds queue 0's frames
// behind it (the test after this one); with DROP_EN it is dropped and
// counted, and queue 0 keeps receiving.
TEST_F(Nic, DropEnStarvedQueueDropsAndTheOthersKeepReceiving)
{
	EXPECT_GE(rd(DMS_NIC_REG_VERSION), 0x0001000au);
	EXPECT_TRUE(rd(DMS_NIC_REG_CAPS) & DMS_NIC_CAP_RXQ_DROP);
	drop_en_setup(DMS_NIC_Q_DROP_EN);
	EXPECT_EQ(rd(DMS_NIC_Q_BASE(2) + DMS_NIC_RXQ_CTRL), DMS_NIC_Q_ENABLE | DMS_NIC_Q_DROP_EN);
	arrive("2020202");
	const unsigned q0 = completions(0), q2 = completions(2);
	const uint32_t dropped = rd(DMS_NIC_Q_BASE(2) + DMS_NIC_RXQ_NO_BUF_DROP);
	std::printf("DROP_EN: queue 0 received %u of 3, queue 2 %u, dropped %u (device %u), "
		    "waits %u\n",
		    q0, q2, dropped, rd(DMS_NIC_REG_STAT_RX_NO_BUF_DROP),
		    rd(DMS_NIC_REG_STAT_RX_NO_BUF));
	EXPECT_EQ(q0, 3u);
	EXPECT_EQ(q2, 0u);
	EXPECT_EQ(dropped, 4u);
	EXPECT_EQ(rd(DMS_NIC_REG_STAT_RX_NO_BUF_DROP), 4u);
	EXPECT_EQ(rd(DMS_NIC_Q_BASE(0) + DMS_NIC_RXQ_NO_BUF_DROP), 0u);
	EXPECT_EQ(rd(DMS_NIC_REG_STAT_RX_NO_BUF), 0u); // nothing waited
	EXPECT_EQ(rd(DMS_NIC_REG_STAT_RX_DROP), 0u);   // not counted twice
	EXPECT_NE(stats().find("\"rx_gro_segs\": 0, \"rx_no_buf_drop\": 4"), std::string::npos)
		<< stats();
	EXPECT_NE(stats().find("{\"rx_frames\": 0, \"rx_split\": 0, \"rx_no_buf_drop\": 4, "),
		  std::string::npos)
		<< stats();
	// Buffers posted: the queue receives again, the counts stay.
	post(2, 0, 4);
	arrive("20");
	EXPECT_EQ(completions(2), 1u);
	EXPECT_EQ(completions(0), 1u);
	EXPECT_EQ(rd(DMS_NIC_Q_BASE(2) + DMS_NIC_RXQ_NO_BUF_DROP), 4u);
	EXPECT_EQ(host_->rx_ready, 0); // the FIFO never filled
}

TEST_F(Nic, NoDropEnStarvedQueueHoldsTheOthersUntilItGetsBuffers)
{
	drop_en_setup(0);
	arrive("2000");
	unsigned q0 = completions(0);
	std::printf("no DROP_EN: queue 0 received %u of 3 while queue 2 has no buffers, "
		    "waits %u, dropped %u\n",
		    q0, rd(DMS_NIC_REG_STAT_RX_NO_BUF), rd(DMS_NIC_REG_STAT_RX_NO_BUF_DROP));
	EXPECT_EQ(q0, 0u); // behind queue 2's frame
	EXPECT_EQ(completions(2), 0u);
	EXPECT_EQ(rd(DMS_NIC_REG_STAT_RX_NO_BUF), 1u);
	EXPECT_EQ(rd(DMS_NIC_REG_STAT_RX_NO_BUF_DROP), 0u);
	// DROP_EN is latched with ENABLE: written while the queue runs, it
	// reads back but the frame still waits.
	qw(2, DMS_NIC_RXQ_CTRL, DMS_NIC_Q_ENABLE | DMS_NIC_Q_DROP_EN);
	EXPECT_EQ(rd(DMS_NIC_Q_BASE(2) + DMS_NIC_RXQ_CTRL), DMS_NIC_Q_ENABLE | DMS_NIC_Q_DROP_EN);
	run();
	EXPECT_EQ(completions(0), 0u);
	EXPECT_EQ(rd(DMS_NIC_REG_STAT_RX_NO_BUF_DROP), 0u);
	// Buffers for queue 2: its frame, then queue 0's, in wire order.
	post(2, 0, 4);
	run();
	EXPECT_EQ(completions(2), 1u);
	EXPECT_EQ(completions(0), 3u);
	EXPECT_EQ(rd(DMS_NIC_REG_STAT_RX_NO_BUF_DROP), 0u);
	EXPECT_EQ(rd(DMS_NIC_REG_STAT_RX_DROP), 0u);
}

// A frame already waiting when its queue is enabled again with DROP_EN
// (the driver's restart) is dropped and counted, and the frames behind it
// go on.
TEST_F(Nic, DropEnDropsAFrameWaitingWhenItsQueueRestarts)
{
	drop_en_setup(0);
	arrive("200");
	EXPECT_EQ(completions(0), 0u);
	starve_queue2(DMS_NIC_Q_DROP_EN);
	run();
	EXPECT_EQ(completions(0), 2u);
	EXPECT_EQ(rd(DMS_NIC_Q_BASE(2) + DMS_NIC_RXQ_NO_BUF_DROP), 1u);
	EXPECT_EQ(rd(DMS_NIC_REG_STAT_RX_NO_BUF), 1u);
	EXPECT_EQ(rd(DMS_NIC_REG_STAT_RX_DROP), 0u);
}

TEST_F(Nic, TxGatherWithChecksumInsertion)
{
	wr(DMS_NIC_REG_TX_CTRL, DMS_NIC_TX_CSUM);
	frames::Spec s;
	s.payload = 3000;
	s.ipv6 = true;
	wr(DMS_NIC_REG_MTU, 9000);
	auto f = frames::build(s);
	auto bad = f;
	bad[14 + 40 + 16] ^= 0xff; // spoil the checksum: the NIC must fix it
	Rings r = rings(0);
	const size_t cuts[] = {0, 74, 1074, 2074, f.size()};
	for (unsigned i = 0; i < 4; i++) {
		uint64_t a = r.tdata + i * 0x2000;
		std::memcpy(host_->at(a), bad.data() + cuts[i], cuts[i + 1] - cuts[i]);
		dms_tx_desc d{a, uint32_t(cuts[i + 1] - cuts[i]),
			      uint16_t((i == 0 ? DMS_TX_F_SOP | DMS_TX_F_CSUM : 0) |
				       (i == 3 ? DMS_TX_F_EOP : 0)),
			      uint16_t(i == 3 ? 77 : 0)};
		std::memcpy(host_->at(r.tdesc + 16 * i), &d, 16);
	}
	qw(0, DMS_NIC_TXQ_TAIL, 4);
	run();
	ASSERT_EQ(host_->sent.size(), 1u) << stats();
	EXPECT_EQ(host_->sent[0], f);
	dms_tx_cmpl c;
	std::memcpy(&c, host_->at(r.tcmpl), 8);
	EXPECT_EQ(c.tag, 77);
	EXPECT_EQ(c.flags, DMS_TX_C_GEN);
	EXPECT_EQ(host_->irqs, std::vector<unsigned>{1});
}

// Post a one-descriptor frame from flow `sport` in slot `slot` of queue
// q's TX ring (doorbell not rung).
static std::vector<uint8_t> post_tx(Host *host, unsigned q, unsigned slot, uint16_t sport)
{
	frames::Spec s;
	s.sport = sport;
	std::vector<uint8_t> f = frames::build(s);
	const Rings r = rings(q);
	const uint64_t a = r.tdata + slot * 0x800ull;
	std::memcpy(host->at(a), f.data(), f.size());
	dms_tx_desc d{a, uint32_t(f.size()), uint16_t(DMS_TX_F_SOP | DMS_TX_F_EOP), uint16_t(slot)};
	std::memcpy(host->at(r.tdesc + 16 * slot), &d, 16);
	return f;
}

// Frames leave in the order their doorbells rang, whatever their queue;
// one doorbell's frames leave together.
TEST_F(Nic, TxServesQueuesInDoorbellOrder)
{
	std::vector<std::vector<uint8_t>> want;
	want.push_back(post_tx(host_, 3, 0, 1)); // q3: two frames, one doorbell
	want.push_back(post_tx(host_, 3, 1, 2));
	qw(3, DMS_NIC_TXQ_TAIL, 2);
	const unsigned order[] = {2, 0, 1, 0, 2};
	unsigned tail[4] = {};
	for (unsigned i = 0; i < 5; i++) {
		const unsigned q = order[i];
		want.push_back(post_tx(host_, q, tail[q], uint16_t(10 + i)));
		qw(q, DMS_NIC_TXQ_TAIL, ++tail[q]);
	}
	qw(2, DMS_NIC_TXQ_TAIL, tail[2]); // rung again, nothing new: no new place
	run();
	EXPECT_EQ(host_->sent, want);
}

// A doorbell that posted more than 64 frames gets 64 in a row, then the
// doorbells rung meanwhile go first.
TEST_F(Nic, TxLongBatchYieldsAfterABurst)
{
	qw(0, DMS_NIC_TXQ_CTRL, 0);
	qw(0, DMS_NIC_TXQ_RING_LOG2, 7);
	qw(0, DMS_NIC_TXQ_CTRL, DMS_NIC_Q_ENABLE);
	std::vector<std::vector<uint8_t>> batch;
	for (unsigned i = 0; i < 100; i++)
		batch.push_back(post_tx(host_, 0, i, uint16_t(1000 + i)));
	qw(0, DMS_NIC_TXQ_TAIL, 100);
	const std::vector<uint8_t> other = post_tx(host_, 1, 0, 7);
	qw(1, DMS_NIC_TXQ_TAIL, 1);
	run();
	ASSERT_EQ(host_->sent.size(), 101u) << stats();
	std::vector<std::vector<uint8_t>> want(batch.begin(), batch.begin() + 64);
	want.push_back(other);
	want.insert(want.end(), batch.begin() + 64, batch.end());
	EXPECT_EQ(host_->sent, want);
}

TEST_F(Nic, MalformedDescriptorsAreCountedAndSurvived)
{
	Rings r = rings(0);
	auto put = [&](unsigned i, dms_tx_desc d) {
		std::memcpy(host_->at(r.tdesc + 16 * i), &d, 16);
	};
	put(0, {r.tdata, 0, DMS_TX_F_SOP | DMS_TX_F_EOP, 1});	      // zero length
	put(1, {0xdead0000000, 100, DMS_TX_F_SOP | DMS_TX_F_EOP, 2}); // outside RAM
	put(2, {r.tdata, 100, DMS_TX_F_EOP, 3});		      // no SOP
	for (unsigned i = 3; i < 3 + 19; i++)			      // too many frags
		put(i, {r.tdata, 100, uint16_t(i == 3 ? DMS_TX_F_SOP : 0), uint16_t(i)});
	qw(0, DMS_NIC_TXQ_TAIL, 22);
	qw(0, DMS_NIC_TXQ_TAIL, 9999); // beyond the ring: ignored
	run();
	EXPECT_TRUE(host_->sent.empty());
	EXPECT_EQ(rd(DMS_NIC_REG_STAT_TX_DESC_ERR), 3u);
	EXPECT_EQ(rd(DMS_NIC_REG_STAT_TX_DMA_ERR), 1u);
	EXPECT_EQ(rd(DMS_NIC_REG_STAT_RING_ERR), 1u);
	dms_tx_cmpl c;
	for (unsigned i = 0; i < 4; i++) {
		std::memcpy(&c, host_->at(r.tcmpl + 8 * i), 8);
		EXPECT_EQ(c.flags, DMS_TX_C_GEN | DMS_TX_C_ERR) << i;
	}
	// RX buffer outside RAM: the frame is lost, its buffers come back.
	dms_rx_buf pb{0xdead0000000, 200, {}};
	std::memcpy(host_->at(r.pbuf), &pb, 16);
	rx(frames::build(frames::Spec{}));
	dms_rx_cmpl rc;
	ASSERT_TRUE(next(0, &rc));
	EXPECT_TRUE(rc.flags & DMS_RX_F_ERR);
	EXPECT_EQ(rc.pbuf_id, 200);
	EXPECT_EQ(rd(DMS_NIC_REG_STAT_RX_DMA_ERR), 1u);
	// Bad ring setup is refused.
	qw(3, DMS_NIC_RXQ_CTRL, 0);
	qw(3, DMS_NIC_RXQ_RING_LOG2, 30);
	qw(3, DMS_NIC_RXQ_CTRL, DMS_NIC_Q_ENABLE);
	EXPECT_EQ(rd(DMS_NIC_Q_BASE(3) + DMS_NIC_RXQ_CTRL), DMS_NIC_Q_CFG_ERR); // off, refused
	// The device still works.
	wr(DMS_NIC_REG_RX_CTRL, DMS_NIC_RX_HDR_SPLIT);
	rx(frames::build(frames::Spec{}));
	ASSERT_TRUE(next(0, &rc));
	EXPECT_FALSE(rc.flags & DMS_RX_F_ERR);
}

TEST_F(Nic, InterruptOnlyWhenArmed)
{
	frames::Spec s;
	rx(frames::build(s));
	EXPECT_EQ(host_->irqs.size(), 1u); // armed by enable()
	rx(frames::build(s));
	EXPECT_EQ(host_->irqs.size(), 1u); // disarmed until NAPI re-arms
	dms_rx_cmpl c;
	ASSERT_TRUE(next(0, &c)); // consume one of two: still pending
	qw(0, DMS_NIC_Q_IRQ_ARM, 1);
	run(); // after the minimum gap (DMS_NIC_ITR_MIN_GAP_NS)
	EXPECT_EQ(host_->irqs.size(), 2u);
	ASSERT_TRUE(next(0, &c));
	qw(0, DMS_NIC_Q_IRQ_ARM, 1); // caught up: no interrupt
	EXPECT_EQ(host_->irqs.size(), 2u);
}

// Functional mode: simulated time only passes where the test steps it.
// An armed queue's interrupt waits the moderation time of its kind after
// the first completion of that kind pending while armed.
TEST_F(Nic, ModerationDelaysTheInterruptAfterTheFirstCompletion)
{
	qw(0, DMS_NIC_Q_RX_ITR_NS, 50000);
	qw(0, DMS_NIC_Q_TX_ITR_NS, 9999999); // clamped
	EXPECT_EQ(rd(DMS_NIC_Q_BASE(0) + DMS_NIC_Q_TX_ITR_NS), uint32_t(DMS_NIC_ITR_MAX_NS));
	EXPECT_EQ(rd(DMS_NIC_Q_BASE(0) + DMS_NIC_Q_RX_ITR_NS), 50000u);
	auto f = frames::build(frames::Spec{});
	const uint64_t t0 = now();
	auto rx_after = [&](uint64_t t) { rx_at(f, t0 + t); };
	rx_after(0);
	ASSERT_EQ(host_->irqs.size(), 1u); // the first one is not delayed
	dms_rx_cmpl c;
	ASSERT_TRUE(next(0, &c));
	qw(0, DMS_NIC_Q_IRQ_ARM, 1);
	rx_after(100000); // idle until then: nothing pending, no wait
	rx_after(130000); // does not move the deadline
	dms_node_step(node_, t0 + 149999);
	EXPECT_EQ(host_->irqs.size(), 1u);
	dms_node_step(node_, t0 + 150000);
	EXPECT_EQ(host_->irqs.size(), 2u);
}

// A frame count ends the wait early; ITR_NS since the last interrupt is a
// floor under every wait, the 2 us minimum gap under everything.
TEST_F(Nic, ModerationFramesEndTheWaitEarly)
{
	qw(0, DMS_NIC_Q_RX_ITR_NS, 20000);
	qw(0, DMS_NIC_Q_RX_ITR_FRAMES, 3);
	EXPECT_EQ(rd(DMS_NIC_Q_BASE(0) + DMS_NIC_Q_RX_ITR_FRAMES), 3u);
	auto f = frames::build(frames::Spec{});
	const uint64_t t0 = now();
	auto rx_after = [&](uint64_t t) { rx_at(f, t0 + t); };
	auto consume_and_arm = [&](unsigned n) {
		dms_rx_cmpl c;
		for (unsigned i = 0; i < n; i++)
			ASSERT_TRUE(next(0, &c));
		qw(0, DMS_NIC_Q_IRQ_ARM, 1);
	};
	rx_after(0);
	ASSERT_EQ(host_->irqs, std::vector<unsigned>{1});
	consume_and_arm(1);
	rx_after(100);
	rx_after(200);
	EXPECT_EQ(host_->irqs.size(), 1u); // 2 pending of 3, 20 us not over
	rx_after(300);			   // the third: due at the 2 us minimum gap
	EXPECT_EQ(host_->irqs.size(), 1u);
	dms_node_step(node_, t0 + 2000);
	EXPECT_EQ(host_->irqs.size(), 2u);
	consume_and_arm(3);
	rx_after(3000); // one pending: 20 us after it
	dms_node_step(node_, t0 + 22999);
	EXPECT_EQ(host_->irqs.size(), 2u);
	dms_node_step(node_, t0 + 23000);
	EXPECT_EQ(host_->irqs.size(), 3u);
	wr(DMS_NIC_REG_ITR_NS, 40000); // floor: 40 us after the last interrupt
	consume_and_arm(1);
	rx_after(24000);
	rx_after(24100);
	rx_after(24200); // the frame count no longer ends the wait before the floor
	dms_node_step(node_, t0 + 62999);
	EXPECT_EQ(host_->irqs.size(), 3u);
	dms_node_step(node_, t0 + 63000);
	EXPECT_EQ(host_->irqs.size(), 4u);
	// Reset clears the moderation registers.
	wr(DMS_NIC_REG_CTRL, DMS_NIC_CTRL_RESET);
	EXPECT_EQ(rd(DMS_NIC_Q_BASE(0) + DMS_NIC_Q_RX_ITR_FRAMES), 0u);
	EXPECT_EQ(rd(DMS_NIC_Q_BASE(0) + DMS_NIC_Q_RX_ITR_NS), 0u);
}

TEST_F(Nic, RandomRegisterWritesNeverBreakTheDevice)
{
	uint64_t x = 88172645463325252ull;
	for (int i = 0; i < 50000; i++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		uint32_t off = uint32_t(x % 0x2000) & ~3u;
		if (off == DMS_NIC_REG_CTRL)
			continue;
		wr(off, uint32_t(x >> 32));
		if (i % 1000 == 0) {
			auto f = frames::build(frames::Spec{});
			dms_nic_receive(node_, f.data(), f.size());
			run();
		}
	}
	run();
	EXPECT_EQ(rd(DMS_NIC_REG_ID), DMS_NIC_ID_MAGIC);
}
