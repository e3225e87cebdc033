// SPDX-License-Identifier: MIT
// The NIC's v1.6 timing hardware through the C ABI with a fake host: the
// PTP clock (host time, set, adjust, rate trim, latched reads), RX and TX
// timestamps, TX rate limits (queue and device), the MAC's PAUSE and FEC
// counters and the serial number; the MAC's v1.8 IEEE 802.3 counters
// (MSTAT); and the clock, token bucket and MSTAT counters alone.
#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "devmemsim/devmemsim.h"
#include "devmemsim/nic_desc.h"
#include "devmemsim/nic_regs.h"
#include "fake_host.h"
#include "frames.h"
#include "nic/mac_stats.h"
#include "nic/ptp.h"
#include "nic_suite.h"

namespace
{

using fake_host::Host;
using Frame = std::vector<uint8_t>;
constexpr uint64_t kRam = fake_host::kRamBase;
constexpr uint64_t kHbuf = kRam, kPbuf = kRam + 0x1000, kRcmpl = kRam + 0x2000;
constexpr uint64_t kDesc = kRam + 0x4000, kTcmpl = kRam + 0x5000;
constexpr uint64_t kRxData = kRam + 0x10000, kTxData = kRam + 0x100000;
constexpr unsigned kLog2 = 6, kRing = 1u << kLog2, kBuf = 4096;
constexpr unsigned kQ1 = DMS_NIC_Q_BASE(1) - DMS_NIC_Q_BASE(0); // queue 1's offset

class NicPtp : public NicSuite
{
protected:
	void SetUp() override
	{
		wr(DMS_NIC_REG_CTRL, DMS_NIC_CTRL_RESET);
		run();
		host_->clear();
		enable_rx();
		enable_tx(0);
		enable_tx(kQ1);
		tail_ = {0, 0};
		rx_head_ = 0;
	}
	static uint64_t rd64(uint32_t off) { return dms_reg_read(node_, DMS_DEV_NIC, off, 8); }
	static void qw(uint32_t off, uint32_t v) { wr(DMS_NIC_Q_BASE(0) + off, v); }
	static void run() { fake_host::run_until_idle(node_, 100000); }
	// Simulated (and host) time now; the model steps up to it.
	static uint64_t now() { return time_; }
	static void advance(uint64_t ns)
	{
		time_ += ns;
		dms_node_set_time(node_, time_);
		dms_node_step(node_, time_);
	}
	static void set_clock(uint64_t v)
	{
		wr(DMS_NIC_REG_PTP_SET_LO, uint32_t(v));
		wr(DMS_NIC_REG_PTP_SET_HI, uint32_t(v >> 32));
		wr(DMS_NIC_REG_PTP_CMD, DMS_NIC_PTP_CMD_SET);
	}
	static void enable_rx()
	{
		qw(DMS_NIC_RXQ_RING_LOG2, kLog2);
		qw(DMS_NIC_RXQ_HBUF_BASE_LO, uint32_t(kHbuf));
		qw(DMS_NIC_RXQ_PBUF_BASE_LO, uint32_t(kPbuf));
		qw(DMS_NIC_RXQ_CMPL_BASE_LO, uint32_t(kRcmpl));
		qw(DMS_NIC_RXQ_HBUF_SIZE, 256);
		qw(DMS_NIC_RXQ_PBUF_SIZE, kBuf);
		qw(DMS_NIC_RXQ_CTRL, DMS_NIC_Q_ENABLE);
		for (unsigned s = 0; s < 32; s++) {
			dms_rx_buf b{kRxData + s * uint64_t(kBuf), uint16_t(s), {}};
			std::memcpy(host_->at(kPbuf + 16 * s), &b, 16);
			std::memcpy(host_->at(kHbuf + 16 * s), &b, 16);
		}
		qw(DMS_NIC_RXQ_HBUF_TAIL, 32);
		qw(DMS_NIC_RXQ_PBUF_TAIL, 32);
	}
	// TX rings of the queue at register offset q (0 or kQ1).
	static void enable_tx(unsigned q)
	{
		const uint64_t o = q ? 0x2000 : 0;
		qw(q + DMS_NIC_TXQ_RING_LOG2, kLog2);
		qw(q + DMS_NIC_TXQ_DESC_BASE_LO, uint32_t(kDesc + o));
		qw(q + DMS_NIC_TXQ_CMPL_BASE_LO, uint32_t(kTcmpl + o));
		qw(q + DMS_NIC_TXQ_CTRL, DMS_NIC_Q_ENABLE);
	}
	// Post one frame of len bytes on queue 0 or 1 with SOP flags; not rung.
	void post(unsigned qi, size_t len, uint16_t flags = 0)
	{
		const uint64_t o = qi ? 0x2000 : 0;
		const uint32_t slot = tail_[qi] % kRing;
		const uint64_t data = kTxData + o * 64 + slot * 16384ull;
		Frame f(len, 0x5a);
		std::memcpy(host_->at(data), f.data(), len);
		dms_tx_desc d{data, uint32_t(len), uint16_t(DMS_TX_F_SOP | DMS_TX_F_EOP | flags),
			      uint16_t(slot)};
		std::memcpy(host_->at(kDesc + o + 16 * slot), &d, 16);
		tail_[qi]++;
	}
	void ring(unsigned qi) { qw((qi ? kQ1 : 0) + DMS_NIC_TXQ_TAIL, tail_[qi] % kRing); }
	// 40 frames of 1000 bytes on each of queues 0 and 1, then 10 ms of
	// simulated time in 100 us steps (the rate limit tests).
	void send_40_each_for_10ms()
	{
		for (int i = 0; i < 40; i++) {
			post(0, 1000);
			post(1, 1000);
		}
		ring(0);
		ring(1);
		advance(0);
		for (int i = 0; i < 100; i++)
			advance(100'000);
	}
	dms_tx_cmpl tx_cmpl(unsigned i)
	{
		dms_tx_cmpl c;
		std::memcpy(&c, host_->at(kTcmpl + 8 * i), 8);
		return c;
	}
	bool next_rx(dms_rx_cmpl *c)
	{
		std::memcpy(c, host_->at(kRcmpl + 32 * rx_head_), 32);
		if (!(c->flags & DMS_RX_F_GEN))
			return false;
		rx_head_++;
		qw(DMS_NIC_RXQ_CMPL_HEAD, rx_head_);
		return true;
	}

	static uint64_t time_;
	std::array<uint32_t, 2> tail_{};
	uint32_t rx_head_ = 0;
};
uint64_t NicPtp::time_ = 0;

} // namespace

TEST(PtpClock, RunsWithRawTimeAndRebasesOnChanges)
{
	devmemsim::PtpClock c;
	c.reset(1000);
	EXPECT_EQ(c.at(1500), 1500u);
	c.set(2000, 1'000'000'000);
	EXPECT_EQ(c.at(3000), 1'000'001'000u);
	c.adjust(3000, -500);
	EXPECT_EQ(c.at(3000), 1'000'000'500u);
	// +100 ppm: 1 s of raw time is 1.0001 s of clock; no step at the change.
	c.set_fine(3000, 100 * 65536);
	EXPECT_EQ(c.at(3000), 1'000'000'500u);
	EXPECT_EQ(c.at(3000 + 1'000'000'000), 2'000'100'500u);
	c.set_fine(3000, -100 * 65536);
	EXPECT_EQ(c.at(3000 + 1'000'000'000), 1'999'900'500u);
	c.set_fine(0, INT32_MAX);
	EXPECT_EQ(c.fine(), DMS_NIC_PTP_ADJ_FINE_MAX);
}

TEST(TokenBucket, HoldsTheRateAfterTheBurst)
{
	devmemsim::TokenBucket b;
	uint64_t due = 0;
	EXPECT_TRUE(b.ready(0, &due)); // unlimited
	b.set_burst(2000);
	b.set_rate(8000, 0); // 1 MB/s: 1 byte per us
	ASSERT_TRUE(b.ready(0, &due));
	b.take(0, 1500);
	ASSERT_TRUE(b.ready(0, &due)); // 500 left
	b.take(0, 1500);
	ASSERT_FALSE(b.ready(0, &due)); // -1000: 1000 us to go
	EXPECT_EQ(due, 1'000'000'000u);
	EXPECT_FALSE(b.ready(due - 1, &due));
	EXPECT_TRUE(b.ready(1'000'000'000, &due));
	b.set_burst(0);
	EXPECT_EQ(b.burst(), unsigned(DMS_NIC_TX_BURST_MIN));
}

TEST_F(NicPtp, ClockFollowsHostTimeSetAdjustAndTrim)
{
	EXPECT_GE(rd(DMS_NIC_REG_VERSION), 0x00010006u);
	EXPECT_TRUE(rd(DMS_NIC_REG_CAPS) & DMS_NIC_CAP_PTP);
	advance(1000);
	set_clock(5'000'000'000ull);
	EXPECT_EQ(rd64(DMS_NIC_REG_PTP_TIME_LO), 5'000'000'000ull);
	// Idle model, host time moves on: the clock reads the host's time.
	time_ += 7000;
	dms_node_set_time(node_, time_);
	EXPECT_EQ(rd64(DMS_NIC_REG_PTP_TIME_LO), 5'000'007'000ull);
	wr(DMS_NIC_REG_PTP_SET_LO, uint32_t(-2000));
	wr(DMS_NIC_REG_PTP_SET_HI, 0xffffffff);
	wr(DMS_NIC_REG_PTP_CMD, DMS_NIC_PTP_CMD_ADJ);
	EXPECT_EQ(rd64(DMS_NIC_REG_PTP_TIME_LO), 5'000'005'000ull);
	wr(DMS_NIC_REG_PTP_ADJ_FINE, uint32_t(-1000 * 65536));
	EXPECT_EQ(int32_t(rd(DMS_NIC_REG_PTP_ADJ_FINE)), -1000 * 65536);
	advance(1'000'000);
	EXPECT_EQ(rd64(DMS_NIC_REG_PTP_TIME_LO), 5'000'005'000ull + 999'000);
	wr(DMS_NIC_REG_PTP_ADJ_FINE, 0x7fffffff);
	EXPECT_EQ(rd(DMS_NIC_REG_PTP_ADJ_FINE), uint32_t(DMS_NIC_PTP_ADJ_FINE_MAX));
}

TEST_F(NicPtp, TimeHiIsLatchedByTimeLo)
{
	set_clock(0x1'ffff'ff00ull);
	EXPECT_EQ(rd(DMS_NIC_REG_PTP_TIME_LO), 0xffffff00u);
	advance(0x200);				    // the counter's high word moves on...
	EXPECT_EQ(rd(DMS_NIC_REG_PTP_TIME_HI), 1u); // ...the latch does not
	EXPECT_EQ(rd(DMS_NIC_REG_PTP_TIME_LO), 0x100u);
	EXPECT_EQ(rd(DMS_NIC_REG_PTP_TIME_HI), 2u);
}

TEST_F(NicPtp, ResetKeepsTheClockCountingAndClearsSettings)
{
	set_clock(1'000'000);
	wr(DMS_NIC_REG_PTP_CTRL, DMS_NIC_PTP_RX_ALL);
	wr(DMS_NIC_REG_PTP_ADJ_FINE, 65536);
	qw(DMS_NIC_TXQ_RATE_KBPS, 1000);
	wr(DMS_NIC_REG_TX_RATE_KBPS, 1000);
	advance(100);
	wr(DMS_NIC_REG_CTRL, DMS_NIC_CTRL_RESET);
	EXPECT_EQ(rd(DMS_NIC_REG_PTP_CTRL), 0u);
	EXPECT_EQ(rd(DMS_NIC_REG_PTP_ADJ_FINE), 0u);
	EXPECT_EQ(rd(DMS_NIC_Q_BASE(0) + DMS_NIC_TXQ_RATE_KBPS), 0u);
	EXPECT_EQ(rd(DMS_NIC_REG_TX_RATE_KBPS), 0u);
	EXPECT_EQ(rd(DMS_NIC_REG_TX_BURST), unsigned(DMS_NIC_TX_BURST_MIN));
	const uint64_t t = rd64(DMS_NIC_REG_PTP_TIME_LO);
	EXPECT_GE(t, 1'000'100u);
	EXPECT_LE(t, 1'000'101u); // 100 ns at +1 ppm
}

TEST_F(NicPtp, RxFramesCarryTheClockWhenAsked)
{
	advance(1000);
	set_clock(0x1234'5678'9abcull);
	frames::Spec s;
	s.payload = 100;
	const Frame f = frames::build(s);
	ASSERT_EQ(dms_nic_receive(node_, f.data(), f.size()), 1);
	run();
	dms_rx_cmpl c;
	ASSERT_TRUE(next_rx(&c));
	EXPECT_EQ(c.ts_hi, 0);
	EXPECT_EQ(c.ts_lo, 0u);
	wr(DMS_NIC_REG_PTP_CTRL, DMS_NIC_PTP_RX_ALL);
	time_ += 500; // the host's time moves on; the idle model does not step
	dms_node_set_time(node_, time_);
	ASSERT_EQ(dms_nic_receive(node_, f.data(), f.size()), 1);
	advance(300); // the stamp is the arrival, not when the model got to it
	ASSERT_TRUE(next_rx(&c));
	ASSERT_TRUE(c.ts_hi & DMS_RX_TS_VALID);
	const uint64_t stamp = uint64_t(c.ts_hi & DMS_RX_TS_HI_MASK) << 32 | c.ts_lo;
	EXPECT_EQ(stamp, 0x1234'5678'9abcull + 500);
	EXPECT_EQ(rd(DMS_NIC_REG_PTP_RX_STAMPS), 1u);
}

TEST_F(NicPtp, TxStampOnRequestOnly)
{
	advance(1000);
	set_clock(0x7'0000'1000ull);
	post(0, 200);
	post(0, 200, DMS_TX_F_TS);
	ring(0);
	run();
	ASSERT_EQ(host_->sent.size(), 2u);
	EXPECT_EQ(tx_cmpl(0).ts, 0u);
	EXPECT_EQ(tx_cmpl(1).flags, DMS_TX_C_GEN);
	EXPECT_EQ(tx_cmpl(1).ts, 0x1000u);
	EXPECT_EQ(rd(DMS_NIC_REG_PTP_TX_STAMPS), 1u);
}

// 1 MB/s on queue 0 with the minimum burst: after 10 ms of simulated time
// it has sent the burst plus 10000 bytes, give or take a frame, while
// queue 1 (unlimited) sent everything at once.
TEST_F(NicPtp, QueueRateLimitHoldsTheRate)
{
	EXPECT_TRUE(rd(DMS_NIC_REG_CAPS) & DMS_NIC_CAP_TX_RATE);
	qw(DMS_NIC_TXQ_RATE_KBPS, 8000);
	qw(DMS_NIC_TXQ_BURST, 1000); // read back as the minimum
	EXPECT_EQ(rd(DMS_NIC_Q_BASE(0) + DMS_NIC_TXQ_BURST), unsigned(DMS_NIC_TX_BURST_MIN));
	send_40_each_for_10ms();
	const uint32_t waits = rd(DMS_NIC_REG_TX_RATE_WAITS);
	EXPECT_GT(waits, 0u);
	// Frames of both queues look alike; count queue 1's completions.
	unsigned done1 = 0;
	for (unsigned i = 0; i < 40; i++) {
		dms_tx_cmpl c;
		std::memcpy(&c, host_->at(kTcmpl + 0x2000 + 8 * i), 8);
		done1 += c.flags & DMS_TX_C_GEN;
	}
	EXPECT_EQ(done1, 40u);
	const size_t q0 = host_->sent.size() - 40;
	EXPECT_GE(q0, (DMS_NIC_TX_BURST_MIN + 10000) / 1000);
	EXPECT_LE(q0, (DMS_NIC_TX_BURST_MIN + 10000) / 1000 + 2);
}

// The device limit holds the sum of two unlimited queues.
TEST_F(NicPtp, DeviceRateLimitHoldsTheSum)
{
	wr(DMS_NIC_REG_TX_RATE_KBPS, 16000); // 2 MB/s
	send_40_each_for_10ms();
	const size_t n = host_->sent.size();
	EXPECT_GE(n, (DMS_NIC_TX_BURST_MIN + 20000) / 1000);
	EXPECT_LE(n, (DMS_NIC_TX_BURST_MIN + 20000) / 1000 + 2);
	wr(DMS_NIC_REG_TX_RATE_KBPS, 0); // lifted: the rest goes at once
	run();
	EXPECT_EQ(host_->sent.size(), 80u);
}

TEST_F(NicPtp, PauseFramesAreCountedNotDeliveredAndFecCountsCodewords)
{
	EXPECT_EQ(rd(DMS_NIC_REG_MAC_PAUSE), 0u);
	EXPECT_EQ(rd(DMS_NIC_REG_FEC_MODE), unsigned(DMS_NIC_FEC_RS));
	const uint64_t cw0 = rd64(DMS_NIC_REG_FEC_CW_LO);
	Frame pause(60, 0);
	const uint8_t hdr[] = {0x01, 0x80, 0xc2, 0, 0, 1, 2, 2, 2, 2, 2, 2, 0x88, 0x08, 0, 1};
	std::memcpy(pause.data(), hdr, sizeof(hdr));
	ASSERT_EQ(dms_nic_receive(node_, pause.data(), pause.size()), 1);
	run();
	dms_rx_cmpl c;
	EXPECT_FALSE(next_rx(&c));
	EXPECT_EQ(rd(DMS_NIC_REG_PAUSE_RX_FRAMES), 1u);
	EXPECT_EQ(rd(DMS_NIC_REG_PAUSE_TX_FRAMES), 0u);
	frames::Spec s;
	s.payload = 1400;
	const Frame f = frames::build(s);
	for (int i = 0; i < 10; i++)
		ASSERT_EQ(dms_nic_receive(node_, f.data(), f.size()), 1);
	run();
	const uint64_t bits = 8 * ((pause.size() + 24) + 10 * (f.size() + 24));
	const uint64_t cw = rd64(DMS_NIC_REG_FEC_CW_LO) - cw0;
	EXPECT_GE(cw, bits / DMS_NIC_FEC_CW_DATA_BITS - 1);
	EXPECT_LE(cw, bits / DMS_NIC_FEC_CW_DATA_BITS + 1);
	EXPECT_EQ(rd(DMS_NIC_REG_FEC_CORRECTED), 0u);
	EXPECT_EQ(rd(DMS_NIC_REG_FEC_UNCORR), 0u);
}

// A frame of len bytes to dst with length/type field lt.
Frame l2_frame(size_t len, const uint8_t dst[6], uint16_t lt)
{
	Frame f(len, 0);
	std::memcpy(f.data(), dst, 6);
	const uint8_t src[6] = {2, 0, 0, 0, 0, 1};
	std::memcpy(f.data() + 6, src, 6);
	f[12] = uint8_t(lt >> 8);
	f[13] = uint8_t(lt);
	return f;
}
const uint8_t kBcast[6] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff};
const uint8_t kMcast[6] = {0x01, 0x00, 0x5e, 0, 0, 1};
const uint8_t kPause[6] = {0x01, 0x80, 0xc2, 0, 0, 1};
const uint8_t kUcast[6] = {2, 0, 0, 0, 0, 2};

TEST_F(NicPtp, MstatCountsWhatTheMacReceives)
{
	ASSERT_TRUE(rd(DMS_NIC_REG_CAPS) & DMS_NIC_CAP_MAC_STD_STATS);
	uint64_t before[DMS_NIC_MSTAT_COUNT];
	for (unsigned i = 0; i < DMS_NIC_MSTAT_COUNT; i++)
		before[i] = rd64(DMS_NIC_REG_MSTAT_LO(i));
	Frame pause = l2_frame(60, kPause, 0x8808);
	pause[15] = 1; // opcode PAUSE
	const Frame frames[] = {l2_frame(100, kBcast, 0x88b5), l2_frame(200, kMcast, 0x88b5), pause,
				l2_frame(14, kUcast, 0x88b5), l2_frame(1600, kUcast, 0x88b5)};
	for (const Frame &f : frames)
		ASSERT_EQ(dms_nic_receive(node_, f.data(), f.size()), 1);
	run();
	auto delta = [&](unsigned i) { return rd64(DMS_NIC_REG_MSTAT_LO(i)) - before[i]; };
	EXPECT_EQ(delta(DMS_NIC_MSTAT_RX_OK), 4u); // the 1600-byte frame is too long
	EXPECT_EQ(delta(DMS_NIC_MSTAT_RX_OCTETS), 104u + 204u + 64u + 64u);
	EXPECT_EQ(delta(DMS_NIC_MSTAT_RX_BCAST), 1u);
	EXPECT_EQ(delta(DMS_NIC_MSTAT_RX_MCAST), 2u); // PAUSE goes to a multicast address
	EXPECT_EQ(delta(DMS_NIC_MSTAT_RX_CTRL), 1u);
	EXPECT_EQ(delta(DMS_NIC_MSTAT_RX_TOO_LONG), 1u);
	EXPECT_EQ(delta(DMS_NIC_MSTAT_RX_HIST(0)), 2u);
	EXPECT_EQ(delta(DMS_NIC_MSTAT_RX_HIST(1)), 1u);
	EXPECT_EQ(delta(DMS_NIC_MSTAT_RX_HIST(2)), 1u);
	EXPECT_EQ(delta(DMS_NIC_MSTAT_RX_HIST(6)), 0u);
	for (unsigned i = DMS_NIC_MSTAT_TX_OK; i <= DMS_NIC_MSTAT_TX_MAC_ERR; i++)
		EXPECT_EQ(delta(i), 0u) << "TX counter " << i;
	EXPECT_EQ(delta(DMS_NIC_MSTAT_RX_LEN_ERR) + delta(DMS_NIC_MSTAT_RX_LEN_RANGE), 0u);
}

TEST_F(NicPtp, MstatCountsWhatTheMacSendsAndPauseTx)
{
	const uint64_t ok0 = rd64(DMS_NIC_REG_MSTAT_LO(DMS_NIC_MSTAT_TX_OK));
	const uint64_t oct0 = rd64(DMS_NIC_REG_MSTAT_LO(DMS_NIC_MSTAT_TX_OCTETS));
	const uint64_t h5 = rd64(DMS_NIC_REG_MSTAT_LO(DMS_NIC_MSTAT_TX_HIST(5)));
	const uint64_t rx0 = rd64(DMS_NIC_REG_MSTAT_LO(DMS_NIC_MSTAT_RX_OK));
	const uint32_t pause0 = rd(DMS_NIC_REG_PAUSE_TX_FRAMES);
	post(0, 1100);
	post(0, 40);
	ring(0);
	run();
	ASSERT_EQ(host_->sent.size(), 2u);
	EXPECT_EQ(rd64(DMS_NIC_REG_MSTAT_LO(DMS_NIC_MSTAT_TX_OK)) - ok0, 2u);
	EXPECT_EQ(rd64(DMS_NIC_REG_MSTAT_LO(DMS_NIC_MSTAT_TX_OCTETS)) - oct0, 1104u + 64u);
	EXPECT_EQ(rd64(DMS_NIC_REG_MSTAT_LO(DMS_NIC_MSTAT_TX_HIST(5))) - h5, 1u);
	EXPECT_EQ(rd64(DMS_NIC_REG_MSTAT_LO(DMS_NIC_MSTAT_RX_OK)), rx0);
	EXPECT_EQ(rd(DMS_NIC_REG_PAUSE_TX_FRAMES), pause0);
}

// Each kind of frame moves its counters, in each direction.
TEST(MacStats, CountsEachKindOfFrame)
{
	devmemsim::MacStats m;
	Frame pause = l2_frame(60, kPause, 0x8808);
	pause[15] = 1;
	for (const Frame &f : {l2_frame(100, kBcast, 0x0800), l2_frame(100, kMcast, 0x0800),
			       l2_frame(100, kUcast, 0x0800), pause}) {
		m.tx(f.data(), f.size());
		m.rx(f.data(), f.size(), 1522);
	}
	for (unsigned d = 0; d < 2; d++) {
		const unsigned base = d ? DMS_NIC_MSTAT_RX_OK : DMS_NIC_MSTAT_TX_OK;
		EXPECT_EQ(m.value(base), 4u);
		EXPECT_EQ(m.value(base + 1), 3 * 104u + 64u); // octets
		EXPECT_EQ(m.value(base + 2), 2u);	      // multicast: the PAUSE frame too
		EXPECT_EQ(m.value(base + 3), 1u);	      // broadcast
		EXPECT_EQ(m.value(base + 4), 1u);	      // MAC control
	}
	m.tx_lost();
	m.rx_lost();
	EXPECT_EQ(m.value(DMS_NIC_MSTAT_TX_MAC_ERR), 1u);
	EXPECT_EQ(m.value(DMS_NIC_MSTAT_RX_MAC_ERR), 1u);
}

// Length/type fields: a length that disagrees with the frame, a value
// that is neither length nor type; short frames' padding is not an error.
TEST(MacStats, LengthFieldErrors)
{
	devmemsim::MacStats m;
	const struct {
		size_t len;
		uint16_t lt;
		unsigned err, range;
	} cases[] = {
		// counts so far after each frame
		{114, 100, 0, 0},  {114, 60, 1, 0},   {60, 20, 1, 0},	  {114, 0, 1, 0},
		{114, 1510, 1, 1}, {114, 1536, 1, 1}, {1514, 1500, 1, 1},
	};
	for (const auto &c : cases) {
		const Frame f = l2_frame(c.len, kUcast, c.lt);
		m.rx(f.data(), f.size(), 1522);
		EXPECT_EQ(m.value(DMS_NIC_MSTAT_RX_LEN_ERR), c.err) << c.len << " " << c.lt;
		EXPECT_EQ(m.value(DMS_NIC_MSTAT_RX_LEN_RANGE), c.range) << c.len << " " << c.lt;
	}
	const Frame big = l2_frame(1523, kUcast, 0x0800);
	m.rx(big.data(), big.size(), 1522);
	EXPECT_EQ(m.value(DMS_NIC_MSTAT_RX_TOO_LONG), 1u);
	EXPECT_EQ(m.value(DMS_NIC_MSTAT_RX_OK), std::size(cases));
}

TEST(MacStats, HistogramBinsFollowTheDatasheet)
{
	using devmemsim::MacStats;
	EXPECT_EQ(MacStats::wire_len(14), 64u);
	EXPECT_EQ(MacStats::wire_len(60), 64u);
	EXPECT_EQ(MacStats::wire_len(61), 65u);
	const struct {
		size_t wire;
		unsigned bin;
	} cases[] = {{64, 0},  {65, 1},	  {127, 1},  {128, 2},	{255, 2},  {256, 3}, {511, 3},
		     {512, 4}, {1023, 4}, {1024, 5}, {1518, 5}, {1519, 6}, {9026, 6}};
	for (const auto &c : cases)
		EXPECT_EQ(MacStats::bin(c.wire), c.bin) << c.wire;
	EXPECT_EQ(MacStats::bin(DMS_NIC_MSTAT_BIN5_HI + 1), 6u);
	EXPECT_EQ(MacStats::bin(DMS_NIC_MSTAT_BIN6_HI), 6u);
}

// Reading _LO latches _HI: a 64-bit value read as two halves is one value.
TEST(MacStats, LoLatchesHi)
{
	devmemsim::MacStats m;
	const Frame f = l2_frame(9022, kUcast, 0x0800); // 9026 octets on the wire
	const uint64_t n = (1ull << 32) / 9026 + 1;
	for (uint64_t i = 0; i < n; i++)
		m.tx(f.data(), f.size());
	const uint32_t lo_reg = DMS_NIC_REG_MSTAT_LO(DMS_NIC_MSTAT_TX_OCTETS);
	const uint32_t hi_reg = DMS_NIC_REG_MSTAT_HI(DMS_NIC_MSTAT_TX_OCTETS);
	uint32_t lo = 0, hi = 0;
	ASSERT_TRUE(m.read(lo_reg, &lo));
	for (int i = 0; i < 1000; i++) // the counter moves on; the latch does not
		m.tx(f.data(), f.size());
	ASSERT_TRUE(m.read(hi_reg, &hi));
	EXPECT_EQ(uint64_t(hi) << 32 | lo, n * 9026);
	EXPECT_EQ(hi, 1u);
	EXPECT_FALSE(m.read(DMS_NIC_REG_MSTAT_LO(DMS_NIC_MSTAT_COUNT), &lo));
}

TEST_F(NicPtp, SerialIsTheMacsEui64)
{
	const uint8_t mac[6] = {0x52, 0x54, 0x00, 0x12, 0x34, 0x56};
	dms_nic_set_mac(node_, mac);
	EXPECT_EQ(rd64(DMS_NIC_REG_SERIAL_LO), 0x525400fffe123456ull);
}
