// SPDX-License-Identifier: MIT
// Regression tests for the NIC findings of the hardening review:
// ring setup latched at enable, the header buffer's size honoured, the
// interrupt storm bounded, a send callback that resets the NIC, and a huge
// ring of bad descriptors worked off a bounded amount per step. And the
// budget by design: chains left without EOP read once per doorbell, one
// step within its work budget however far the model lags, frames of any
// length taken, MSIs raised by register writes posted.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "devmemsim/devmemsim.h"
#include "devmemsim/nic_desc.h"
#include "devmemsim/nic_regs.h"
#include "fake_host.h"
#include "frames.h"

namespace
{

using fake_host::Host;
constexpr uint64_t kRam = fake_host::kRamBase;

// Queue 0's rings in fake RAM; header buffers 256 bytes apart whatever
// HBUF_SIZE says, so writes past a buffer land in a guard area.
constexpr uint64_t kHbufRing = kRam, kPbufRing = kRam + 0x1000, kRcmpl = kRam + 0x2000;
constexpr uint64_t kHdata = kRam + 0x10000, kPdata = kRam + 0x40000;
constexpr uint64_t kTdesc = kRam + 0x100000, kTcmpl = kRam + 0x200000;
constexpr uint64_t kTdata = kRam + 0x300000;
constexpr unsigned kHslot = 256, kPbuf = 4096;

// The fake host plus what these tests hook into its callbacks: an MSI that
// writes back into the device, a send that resets it, counted DMAs.
struct HookedHost : Host {
	std::function<void(unsigned)> on_irq;
	std::function<void()> on_send;
	uint64_t dma_calls = 0;

	void attach_hooked(dms_node *node)
	{
		static const dms_dev_ops ops = {dma_hook, irq_hook, send_hook, Host::on_rx_ready};
		dms_dev_attach(node, DMS_DEV_NIC, &ops, this);
	}
	static int dma_hook(void *o, uint64_t addr, void *buf, uint64_t len, int w)
	{
		static_cast<HookedHost *>(o)->dma_calls++;
		return Host::dma(o, addr, buf, len, w);
	}
	static void irq_hook(void *o, unsigned v)
	{
		auto *h = static_cast<HookedHost *>(o);
		Host::irq(o, v);
		if (h->on_irq)
			h->on_irq(v);
	}
	static void send_hook(void *o, const uint8_t *f, size_t n)
	{
		auto *h = static_cast<HookedHost *>(o);
		Host::send(o, f, n);
		if (h->on_send)
			h->on_send();
	}
};

class NicHardening : public ::testing::Test
{
protected:
	static void SetUpTestSuite()
	{
		char err[256] = "";
		node_ = dms_node_new(nullptr, err, sizeof(err));
		ASSERT_NE(node_, nullptr) << err;
		host_ = new HookedHost;
		host_->attach_hooked(node_);
		dms_node_step(node_, 0);
	}
	void SetUp() override
	{
		host_->on_irq = nullptr;
		host_->on_send = nullptr;
		wr(DMS_NIC_REG_CTRL, DMS_NIC_CTRL_RESET);
		run();
		dms_node_reset_stats(node_);
		host_->clear();
		host_->dma_calls = 0;
	}
	static uint32_t rd(uint32_t off)
	{
		return uint32_t(dms_reg_read(node_, DMS_DEV_NIC, off, 4));
	}
	static void wr(uint32_t off, uint32_t v) { dms_reg_write(node_, DMS_DEV_NIC, off, v, 4); }
	static void qw(uint32_t off, uint32_t v) { wr(DMS_NIC_Q_BASE(0) + off, v); }
	static void run() { fake_host::run_until_idle(node_, 1000); }

	// Queue 0's RX rings: 64 entries, `posted` buffers of each kind.
	static void enable_rx(unsigned hbuf_size, unsigned posted = 8)
	{
		qw(DMS_NIC_RXQ_RING_LOG2, 6);
		qw(DMS_NIC_RXQ_HBUF_BASE_LO, uint32_t(kHbufRing));
		qw(DMS_NIC_RXQ_PBUF_BASE_LO, uint32_t(kPbufRing));
		qw(DMS_NIC_RXQ_CMPL_BASE_LO, uint32_t(kRcmpl));
		qw(DMS_NIC_RXQ_HBUF_SIZE, hbuf_size);
		qw(DMS_NIC_RXQ_PBUF_SIZE, kPbuf);
		qw(DMS_NIC_RXQ_CTRL, DMS_NIC_Q_ENABLE);
		for (unsigned s = 0; s < posted; s++) {
			dms_rx_buf hb{kHdata + s * kHslot, uint16_t(100 + s), {}};
			dms_rx_buf pb{kPdata + s * uint64_t(kPbuf), uint16_t(200 + s), {}};
			std::memcpy(host_->at(kHbufRing + 16 * s), &hb, 16);
			std::memcpy(host_->at(kPbufRing + 16 * s), &pb, 16);
		}
		qw(DMS_NIC_RXQ_HBUF_TAIL, posted);
		qw(DMS_NIC_RXQ_PBUF_TAIL, posted);
	}
	// Queue 0's TX rings of 2^log2 entries.
	static void enable_tx(unsigned log2)
	{
		qw(DMS_NIC_TXQ_RING_LOG2, log2);
		qw(DMS_NIC_TXQ_DESC_BASE_LO, uint32_t(kTdesc));
		qw(DMS_NIC_TXQ_CMPL_BASE_LO, uint32_t(kTcmpl));
		qw(DMS_NIC_TXQ_CTRL, DMS_NIC_Q_ENABLE);
	}
	// One single-descriptor frame in TX slot `slot` (not yet posted).
	static void put_tx_frame(unsigned slot, uint64_t addr, uint16_t tag)
	{
		dms_tx_desc d{addr, 100, DMS_TX_F_SOP | DMS_TX_F_EOP, tag};
		std::memcpy(host_->at(kTdesc + sizeof(d) * slot), &d, sizeof(d));
	}
	static dms_rx_cmpl rx_cmpl(unsigned i)
	{
		dms_rx_cmpl c;
		std::memcpy(&c, host_->at(kRcmpl + sizeof(c) * i), sizeof(c));
		return c;
	}
	// Queue q (not 0): TX rings of 32 entries holding a chain of
	// MAX_TX_FRAGS - 1 descriptors, SOP and no EOP, posted: a frame the
	// driver has not finished writing.
	static uint64_t stall_ring(unsigned q) { return kRam + 0x800000 + q * 0x1000ull; }
	static void post_stalled_chain(unsigned q)
	{
		const uint32_t base = DMS_NIC_Q_BASE(q);
		wr(base + DMS_NIC_TXQ_RING_LOG2, 5);
		wr(base + DMS_NIC_TXQ_DESC_BASE_LO, uint32_t(stall_ring(q)));
		wr(base + DMS_NIC_TXQ_CMPL_BASE_LO, uint32_t(stall_ring(q) + 0x800));
		wr(base + DMS_NIC_TXQ_CTRL, DMS_NIC_Q_ENABLE);
		const unsigned n = rd(DMS_NIC_REG_MAX_TX_FRAGS) - 1;
		for (unsigned i = 0; i < n; i++) {
			dms_tx_desc d{kTdata, 60, uint16_t(i ? 0 : DMS_TX_F_SOP), 0};
			std::memcpy(host_->at(stall_ring(q) + sizeof(d) * i), &d, sizeof(d));
		}
		wr(base + DMS_NIC_TXQ_TAIL, n);
	}
	// Every queue but 0 stalled, then n frames posted on queue 0.
	static void stalled_queues_and_frames(unsigned log2, unsigned n)
	{
		for (unsigned q = 1; q < dms_nic_num_queues(node_); q++)
			post_stalled_chain(q);
		enable_tx(log2);
		for (unsigned i = 0; i < n; i++)
			put_tx_frame(i, kTdata, uint16_t(i));
		qw(DMS_NIC_TXQ_TAIL, n);
	}
	static uint64_t model_ns()
	{
		std::string s = dms_node_stats_json(node_);
		return std::stoull(s.substr(s.find("\"time_ns\": ") + 11));
	}

	static dms_node *node_;
	static HookedHost *host_;
};
dms_node *NicHardening::node_;
HookedHost *NicHardening::host_;

} // namespace

// PBUF_SIZE = 0 written after enable made the next
// frame divide by zero. The setup is latched: the frame uses the size the
// queue was enabled with, and a re-enable with the bad size is refused.
TEST_F(NicHardening, PayloadBufferSizeZeroAfterEnable)
{
	wr(DMS_NIC_REG_MTU, 9000);
	enable_rx(256);
	qw(DMS_NIC_RXQ_PBUF_SIZE, 0);
	qw(DMS_NIC_RXQ_HBUF_SIZE, 0);
	qw(DMS_NIC_RXQ_RING_LOG2, 0);
	EXPECT_EQ(rd(DMS_NIC_Q_BASE(0) + DMS_NIC_RXQ_PBUF_SIZE), 0u); // reads back as written
	frames::Spec s;
	s.payload = 6000; // two 4096-byte payload buffers
	std::vector<uint8_t> f = frames::build(s);
	ASSERT_EQ(dms_nic_receive(node_, f.data(), f.size()), 1);
	run();
	dms_rx_cmpl c0 = rx_cmpl(0), c1 = rx_cmpl(1);
	ASSERT_TRUE(c0.flags & DMS_RX_F_GEN);
	EXPECT_EQ(c0.pay_len, kPbuf);
	EXPECT_EQ(c1.pay_len, f.size() - kPbuf);
	EXPECT_EQ(std::memcmp(host_->at(kPdata), f.data(), kPbuf), 0);
	// Off and on again: the bad setup is refused and says so.
	qw(DMS_NIC_RXQ_CTRL, 0);
	qw(DMS_NIC_RXQ_CTRL, DMS_NIC_Q_ENABLE);
	EXPECT_EQ(rd(DMS_NIC_Q_BASE(0) + DMS_NIC_RXQ_CTRL), DMS_NIC_Q_CFG_ERR);
	EXPECT_EQ(rd(DMS_NIC_REG_STAT_RING_ERR), 1u);
	ASSERT_EQ(dms_nic_receive(node_, f.data(), f.size()), 1);
	run();
	EXPECT_EQ(rd(DMS_NIC_REG_STAT_RX_DROP), 1u); // queue off: dropped, no crash
	// A good setup is accepted again and clears the error.
	enable_rx(256);
	EXPECT_EQ(rd(DMS_NIC_Q_BASE(0) + DMS_NIC_RXQ_CTRL), DMS_NIC_Q_ENABLE);
}

// With HBUF_SIZE = 64, 142 bytes of headers went into
// the 64-byte header buffer. Headers longer than the header buffer do not
// split: the frame goes whole to payload buffers, nothing past 64 bytes.
TEST_F(NicHardening, HeadersLongerThanTheHeaderBufferDoNotSplit)
{
	wr(DMS_NIC_REG_RX_CTRL, DMS_NIC_RX_HDR_SPLIT);
	enable_rx(64);
	std::fill(host_->at(kHdata), host_->at(kHdata) + 8 * kHslot, 0xa5);
	frames::Spec s;
	s.vlans = 2;
	s.ip_options = 40;
	s.tcp_options = 40;
	s.payload = 1000;
	std::vector<uint8_t> f = frames::build(s);
	ASSERT_EQ(f.size(), 142u + 1000u);
	ASSERT_EQ(dms_nic_receive(node_, f.data(), f.size()), 1);
	run();
	dms_rx_cmpl c = rx_cmpl(0);
	ASSERT_TRUE(c.flags & DMS_RX_F_GEN);
	EXPECT_EQ(c.flags & (DMS_RX_F_HDR | DMS_RX_F_PAY | DMS_RX_F_SPLIT), DMS_RX_F_PAY);
	EXPECT_EQ(c.pay_len, f.size());
	EXPECT_EQ(std::memcmp(host_->at(kPdata), f.data(), f.size()), 0);
	for (unsigned i = 0; i < 8 * kHslot; i++)
		ASSERT_EQ(*host_->at(kHdata + i), 0xa5) << "header buffer area written at " << i;
	EXPECT_NE(std::string(dms_node_stats_json(node_)).find("\"rx_hdr_overflow\": 1"),
		  std::string::npos);
	// Headers that fit still split.
	s.vlans = 0;
	s.ip_options = s.tcp_options = 0;
	f = frames::build(s);
	ASSERT_EQ(dms_nic_receive(node_, f.data(), f.size()), 1);
	run();
	c = rx_cmpl(1);
	EXPECT_TRUE(c.flags & DMS_RX_F_SPLIT);
	EXPECT_EQ(c.hdr_len, 54);
}

// ITR_NS = 1 and an MSI aimed at the queue's own
// Q_IRQ_ARM, with one TX completion never consumed, fired every simulated
// nanosecond. Interrupts of a queue are now DMS_NIC_ITR_MIN_GAP_NS apart.
TEST_F(NicHardening, InterruptStormIsBounded)
{
	wr(DMS_NIC_REG_ITR_NS, 1);
	enable_tx(6);
	put_tx_frame(0, kTdata, 7);
	host_->on_irq = [](unsigned v) {
		if (v == 1)
			qw(DMS_NIC_Q_IRQ_ARM, 1);
	};
	qw(DMS_NIC_Q_IRQ_ARM, 1);
	qw(DMS_NIC_TXQ_TAIL, 1);
	ASSERT_EQ(host_->sent.size(), 0u);
	const uint64_t start = dms_node_deadline_ns(node_);
	const uint64_t window = 5000000; // 5 ms
	uint64_t steps = 0, d;
	while ((d = dms_node_deadline_ns(node_)) != DMS_NO_DEADLINE && d < start + window &&
	       steps < 1000000) {
		dms_node_step(node_, d);
		steps++;
	}
	host_->on_irq = nullptr;
	EXPECT_EQ(host_->sent.size(), 1u);
	const size_t bound = window / DMS_NIC_ITR_MIN_GAP_NS + 2;
	EXPECT_GE(host_->irqs.size(), 2u); // it still re-fires, spaced
	EXPECT_LE(host_->irqs.size(), bound);
	EXPECT_LT(steps, 2 * bound);
}

// host_.send ran before the TX ring index was reduced; a
// synchronous peer that resets the NIC inside send then divided by zero.
TEST_F(NicHardening, SendCallbackThatResetsTheNic)
{
	enable_tx(6);
	for (unsigned i = 0; i < 4; i++)
		put_tx_frame(i, kTdata, uint16_t(i));
	host_->on_send = [] { wr(DMS_NIC_REG_CTRL, DMS_NIC_CTRL_RESET); };
	qw(DMS_NIC_TXQ_TAIL, 4);
	run();
	host_->on_send = nullptr;
	EXPECT_EQ(host_->sent.size(), 1u); // the reset stopped the queue
	EXPECT_EQ(rd(DMS_NIC_Q_BASE(0) + DMS_NIC_TXQ_CTRL), 0u);
	dms_tx_cmpl c;
	std::memcpy(&c, host_->at(kTcmpl), sizeof(c));
	EXPECT_EQ(c.flags, 0); // no completion written into the reset queue
	// The device works after it.
	enable_tx(6);
	put_tx_frame(0, kTdata, 9);
	qw(DMS_NIC_TXQ_TAIL, 1);
	run();
	EXPECT_EQ(host_->sent.size(), 2u);
}

// The RX engine yields once a step's frame budget is spent; a reset while
// it waits empties the FIFO it was about to take the next frame from.
TEST_F(NicHardening, ResetWhileTheRxEngineYieldsEmptiesItsFifo)
{
	const uint8_t frame[60] = {};
	unsigned queued = 0;
	while (dms_nic_receive(node_, frame, sizeof(frame)) == 1)
		queued++;
	ASSERT_GE(queued, 2u);
	const uint64_t now = dms_node_deadline_ns(node_); // the frames are due now
	const uint32_t drops = rd(DMS_NIC_REG_STAT_RX_DROP);
	dms_node_step(node_, now); // the engine drops frames (queue off) until it yields
	ASSERT_LT(rd(DMS_NIC_REG_STAT_RX_DROP) - drops, queued) << "the engine did not yield";
	wr(DMS_NIC_REG_CTRL, DMS_NIC_CTRL_RESET);
	run();
	// The device still takes frames after it.
	const uint32_t after = rd(DMS_NIC_REG_STAT_RX_DROP);
	ASSERT_EQ(dms_nic_receive(node_, frame, sizeof(frame)), 1);
	run();
	EXPECT_EQ(rd(DMS_NIC_REG_STAT_RX_DROP), after + 1);
}

// One doorbell on a 32k-entry ring of frames whose buffers fault
// is worked off a bounded number of descriptors per model step.
TEST_F(NicHardening, HugeRingOfBadDescriptorsIsBoundedPerStep)
{
	const unsigned log2 = DMS_NIC_RING_LOG2_MAX, n = (1u << log2) - 1;
	enable_tx(log2);
	for (unsigned i = 0; i < n; i++)
		put_tx_frame(i, 0xdead00000000ull, uint16_t(i));
	qw(DMS_NIC_TXQ_TAIL, n);
	uint64_t max_dma = 0, steps = 0, d;
	while ((d = dms_node_deadline_ns(node_)) != DMS_NO_DEADLINE && steps < 100000) {
		host_->dma_calls = 0;
		dms_node_step(node_, d);
		max_dma = std::max(max_dma, host_->dma_calls);
		steps++;
	}
	EXPECT_EQ(rd(DMS_NIC_REG_STAT_TX_DMA_ERR), n);
	EXPECT_GT(steps, 1u);
	// At most 64 frames per step and queue pass (the TX engine's budget);
	// each bad frame: descriptor read, buffer read, completion write.
	EXPECT_LE(max_dma, 3u * (64 + dms_nic_num_queues(node_)));
	EXPECT_EQ(host_->sent.size(), 0u);
}

// Reset clears everything the datasheet lists (settings, tables,
// queue setup and its latched copy, CFG_ERR, interrupt state).
TEST_F(NicHardening, ResetClearsWhatTheDatasheetLists)
{
	wr(DMS_NIC_REG_ITR_NS, 5000);
	wr(DMS_NIC_REG_ADMIN_IRQ_MASK, DMS_NIC_ADMIN_IRQ_LINK);
	wr(DMS_NIC_REG_RSS_KEY(3), 0x12345678);
	wr(DMS_NIC_REG_RSS_INDIR(5), 2);
	wr(DMS_NIC_REG_MTU, 9000);
	enable_rx(256);
	qw(DMS_NIC_TXQ_RING_LOG2, 30);
	qw(DMS_NIC_TXQ_CTRL, DMS_NIC_Q_ENABLE); // refused: CFG_ERR
	ASSERT_EQ(rd(DMS_NIC_Q_BASE(0) + DMS_NIC_TXQ_CTRL), DMS_NIC_Q_CFG_ERR);
	wr(DMS_NIC_REG_CTRL, DMS_NIC_CTRL_RESET);
	run();
	EXPECT_EQ(rd(DMS_NIC_REG_ITR_NS), 0u);
	EXPECT_EQ(rd(DMS_NIC_REG_ADMIN_IRQ_MASK), 0u);
	EXPECT_EQ(rd(DMS_NIC_REG_RSS_KEY(3)), 0u);
	EXPECT_EQ(rd(DMS_NIC_REG_RSS_INDIR(5)), 0u);
	EXPECT_EQ(rd(DMS_NIC_REG_MTU), 1500u);
	const uint32_t q0 = DMS_NIC_Q_BASE(0);
	for (uint32_t off : {DMS_NIC_RXQ_CTRL, DMS_NIC_RXQ_RING_LOG2, DMS_NIC_RXQ_HBUF_BASE_LO,
			     DMS_NIC_RXQ_PBUF_SIZE, DMS_NIC_RXQ_HBUF_TAIL, DMS_NIC_TXQ_CTRL,
			     DMS_NIC_TXQ_RING_LOG2})
		EXPECT_EQ(rd(q0 + off), 0u) << "queue register 0x" << std::hex << off;
	// A frame after reset finds the queue off: dropped, nothing written.
	frames::Spec s;
	std::vector<uint8_t> f = frames::build(s);
	ASSERT_EQ(dms_nic_receive(node_, f.data(), f.size()), 1);
	run();
	EXPECT_EQ(rx_cmpl(0).flags, 0);
	EXPECT_TRUE(host_->irqs.empty());
}

// Chains left without EOP on every other queue are read once per doorbell,
// not again for every frame queue 0 sends (they made each frame re-read
// 15 x 18 descriptors, none of it counted as work). The rest of a chain
// posted later is read and sent.
TEST_F(NicHardening, StalledChainsAreReadOncePerDoorbell)
{
	const unsigned nq = dms_nic_num_queues(node_), frags = rd(DMS_NIC_REG_MAX_TX_FRAGS);
	const unsigned n = 1023;
	stalled_queues_and_frames(10, n);
	run();
	ASSERT_EQ(host_->sent.size(), n);
	// Each frame: descriptor, buffer, completion; each chain one scan.
	EXPECT_LE(host_->dma_calls, 3u * n + (nq - 1) * (frags - 1));
	// The driver finishes queue 1's frame: its EOP descriptor and a tail.
	dms_tx_desc eop{kTdata, 60, DMS_TX_F_EOP, 99};
	std::memcpy(host_->at(stall_ring(1) + sizeof(eop) * (frags - 1)), &eop, sizeof(eop));
	host_->dma_calls = 0;
	wr(DMS_NIC_Q_BASE(1) + DMS_NIC_TXQ_TAIL, frags);
	run();
	ASSERT_EQ(host_->sent.size(), n + 1);
	EXPECT_EQ(host_->sent.back().size(), 60u * frags);
	EXPECT_LE(host_->dma_calls, 2u * frags + 1);
}

// One dms_node_step() as QEMU makes it when the model lags far behind its
// clock: it stops once its work budget is spent, whatever the rings hold,
// and the next calls go on where it stopped.
TEST_F(NicHardening, OneStepStaysWithinItsWorkBudget)
{
	const unsigned n = (1u << DMS_NIC_RING_LOG2_MAX) - 1;
	stalled_queues_and_frames(DMS_NIC_RING_LOG2_MAX, n);
	const uint64_t far = model_ns() + 1000000000ull;
	uint64_t calls = 0, max_dma = 0;
	while (host_->sent.size() < n && calls < 100000) {
		host_->dma_calls = 0;
		dms_node_step(node_, far);
		max_dma = std::max(max_dma, host_->dma_calls);
		calls++;
	}
	EXPECT_EQ(host_->sent.size(), n);
	dms_work_stats w;
	dms_node_work(node_, &w);
	EXPECT_GT(w.cut_steps, 0u);
	EXPECT_LE(w.max_step_units, w.step_units_bound);
	EXPECT_LE(max_dma, w.step_units_bound);
	// Four units a frame (descriptor, buffer, completion, the wire):
	// the steps needed are what the budget allows, not one per frame.
	EXPECT_GE(calls, 4u * n / w.step_units_bound);
	EXPECT_LE(calls, 4u * n / DMS_STEP_WORK + 10);
}

// Frames of any length from the wire are taken: those no Ethernet frame
// can be (empty, runts, longer than the MTU allows) dropped and counted,
// and reception goes on.
TEST_F(NicHardening, FramesOfAnyLengthAreTakenAndReceptionGoesOn)
{
	wr(DMS_NIC_REG_MTU, 9000);
	enable_rx(256, 63);
	const size_t max = 9000 + 22; // MTU plus Ethernet header and two VLAN tags
	const std::vector<uint8_t> good = frames::build(frames::Spec{});
	const size_t lens[] = {0, 1, 13, 14, 59, 60, max, max + 1, 65536 + 4096};
	unsigned taken = 0, dropped = 0;
	for (size_t len : lens) {
		std::vector<uint8_t> f(len + 1, 0x5a);
		ASSERT_EQ(dms_nic_receive(node_, f.data(), len), 1) << len;
		ASSERT_EQ(dms_nic_receive(node_, good.data(), good.size()), 1) << len;
		run();
		(len >= 14 && len <= max ? taken : dropped)++;
		taken++; // the good frame after it
		EXPECT_EQ(rd(DMS_NIC_REG_STAT_RX_DROP), dropped) << len;
		EXPECT_NE(std::string(dms_node_stats_json(node_))
				  .find("\"rx_frames\": " + std::to_string(taken) + ","),
			  std::string::npos)
			<< len;
	}
}

// An MSI a host call raises goes at once when its vector has been quiet;
// one raised within DMS_MSI_GAP_NS of the vector's previous message is
// posted to the end of that gap and reaches the host from a step. And an
// arm of an armed queue raises nothing.
TEST_F(NicHardening, InterruptsRaisedByHostCallsKeepTheirGap)
{
	const uint64_t t = model_ns() + 100000;
	dms_node_set_time(node_, t);
	dms_nic_set_link(node_, 0); // a link change pending, masked
	wr(DMS_NIC_REG_ADMIN_IRQ_MASK, DMS_NIC_ADMIN_IRQ_LINK);
	EXPECT_EQ(host_->irqs, std::vector<unsigned>{0});
	wr(DMS_NIC_REG_ADMIN_IRQ_STATUS, DMS_NIC_ADMIN_IRQ_LINK);
	dms_node_set_time(node_, t + 100);
	dms_nic_set_link(node_, 1); // a new cause, 100 ns after the last message
	EXPECT_EQ(host_->irqs.size(), 1u);
	dms_node_step(node_, t + DMS_MSI_GAP_NS - 1);
	EXPECT_EQ(host_->irqs.size(), 1u);
	dms_node_step(node_, t + DMS_MSI_GAP_NS);
	EXPECT_EQ(host_->irqs, (std::vector<unsigned>{0, 0}));
	enable_tx(6);
	qw(DMS_NIC_Q_IRQ_ARM, 1);
	qw(DMS_NIC_Q_IRQ_ARM, 1);
	put_tx_frame(0, kTdata, 1);
	qw(DMS_NIC_TXQ_TAIL, 1);
	run();
	EXPECT_EQ(host_->irqs, (std::vector<unsigned>{0, 0, 1}));
}
