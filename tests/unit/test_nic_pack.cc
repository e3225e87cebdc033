// SPDX-License-Identifier: MIT
// Packed payload buffers (NIC v1.9, RXQ_CTRL PACK) through the C ABI with
// a fake host: small payloads share a buffer at 128-byte aligned offsets,
// PBUF_DONE on the piece that ends a buffer, frames that straddle or span
// buffers, a DMA fault ending every buffer it touched, the fill offset
// reset by an enable, WHOLE|PACK refused, and GRO aggregates kept within
// 17 pieces.
#include <gtest/gtest.h>

#include <algorithm>
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

constexpr uint64_t kRam = fake_host::kRamBase;
constexpr uint64_t kHring = kRam, kPring = kRam + 0x1000, kCmpl = kRam + 0x2000;
constexpr uint64_t kHdata = kRam + 0x10000, kPdata = kRam + 0x40000;
constexpr unsigned kLog2 = 6, kRing = 64, kHsize = 256;
constexpr uint16_t kHid = 100, kPid = 200; // buffer ids: slot + these
constexpr uint64_t kBadAddr = 0x1000;	   // below the fake host's RAM: faults

// A TCP segment of flow 1234 with payload bytes (seq + i) * 7, for GRO.
std::vector<uint8_t> segment(uint32_t seq, size_t payload)
{
	frames::Spec s;
	s.payload = payload;
	s.tcp_options = 12;
	std::vector<uint8_t> f = frames::build(s);
	f[20] = 0x40; // DF, so the IPv4 ID (0) may stay fixed
	frames::put16(f, 24, 0);
	frames::put16(f, 24, uint16_t(~devmemsim::inet_fold(devmemsim::inet_sum(&f[14], 20))));
	for (int b = 0; b < 4; b++)
		f[34 + 4 + b] = uint8_t(seq >> (24 - 8 * b));
	f[34 + 13] = 0x10; // ACK
	for (size_t i = 0; i < payload; i++)
		f[66 + i] = uint8_t((seq + i) * 7);
	devmemsim::l4_csum_fill(f.data(), devmemsim::parse_frame(f.data(), f.size()));
	return f;
}

// A frame of `len` bytes that splits (TCP, 54 bytes of headers) or, with
// header split off, goes whole to payload buffers.
std::vector<uint8_t> tcp_frame(size_t payload)
{
	frames::Spec s;
	s.payload = payload;
	return frames::build(s);
}

class NicPack : public NicSuite
{
protected:
	void SetUp() override
	{
		reset_nic(1000);
		wr(DMS_NIC_REG_MTU, 9000);
	}
	static void qw(uint32_t off, uint32_t v) { wr(DMS_NIC_Q_BASE(0) + off, v); }
	static uint32_t ctrl() { return rd(DMS_NIC_Q_BASE(0) + DMS_NIC_RXQ_CTRL); }
	static void run() { fake_host::run_until_idle(node_, 1000); }
	// Queue 0's RX rings with psize-byte payload buffers, all but one slot
	// of each ring posted; payload buffer slot s at kPdata + s * psize.
	void enable(uint32_t flags, uint32_t psize)
	{
		psize_ = psize;
		qw(DMS_NIC_RXQ_CTRL, 0);
		qw(DMS_NIC_RXQ_RING_LOG2, kLog2);
		qw(DMS_NIC_RXQ_HBUF_BASE_LO, uint32_t(kHring));
		qw(DMS_NIC_RXQ_PBUF_BASE_LO, uint32_t(kPring));
		qw(DMS_NIC_RXQ_CMPL_BASE_LO, uint32_t(kCmpl));
		qw(DMS_NIC_RXQ_HBUF_SIZE, kHsize);
		qw(DMS_NIC_RXQ_PBUF_SIZE, psize);
		qw(DMS_NIC_RXQ_CTRL, DMS_NIC_Q_ENABLE | flags);
		std::memset(host_->at(kCmpl), 0, 32 * kRing);
		head_ = 0;
		phase_ = true;
		for (unsigned s = 0; s < kRing; s++) {
			dms_rx_buf hb{kHdata + s * kHsize, uint16_t(kHid + s), {}};
			dms_rx_buf pb{kPdata + s * uint64_t(psize), uint16_t(kPid + s), {}};
			std::memcpy(host_->at(kHring + 16 * s), &hb, 16);
			std::memcpy(host_->at(kPring + 16 * s), &pb, 16);
		}
		qw(DMS_NIC_RXQ_HBUF_TAIL, kRing - 1);
		qw(DMS_NIC_RXQ_PBUF_TAIL, kRing - 1);
	}
	// Payload buffer slot s's descriptor now points at addr.
	static void repoint(unsigned s, uint64_t addr)
	{
		dms_rx_buf pb{addr, uint16_t(kPid + s), {}};
		std::memcpy(host_->at(kPring + 16 * s), &pb, 16);
	}
	static void rx(const std::vector<uint8_t> &f)
	{
		ASSERT_EQ(dms_nic_receive(node_, f.data(), f.size()), 1);
		run();
	}
	// The completions the device wrote since the last call.
	std::vector<dms_rx_cmpl> cmpls()
	{
		std::vector<dms_rx_cmpl> out;
		for (;;) {
			dms_rx_cmpl c;
			std::memcpy(&c, host_->at(kCmpl + 32 * head_), 32);
			if (bool(c.flags & DMS_RX_F_GEN) != phase_)
				break;
			out.push_back(c);
			if (++head_ == kRing) {
				head_ = 0;
				phase_ = !phase_;
			}
		}
		qw(DMS_NIC_RXQ_CMPL_HEAD, head_);
		return out;
	}
	// Where payload buffer `id` is in fake RAM.
	uint8_t *pbuf(uint16_t id) const
	{
		return host_->at(kPdata + (id - kPid) * uint64_t(psize_));
	}

	uint32_t psize_ = 4096;
	unsigned head_ = 0;
	bool phase_ = true;
};

constexpr uint16_t kEnds = DMS_RX_F_SOP | DMS_RX_F_EOP;
constexpr uint16_t kSeen =
	DMS_RX_F_SOP | DMS_RX_F_EOP | DMS_RX_F_PAY | DMS_RX_F_ERR | DMS_RX_F_PBUF_DONE;

} // namespace

TEST_F(NicPack, CapsVersionAndControlBit)
{
	EXPECT_GE(rd(DMS_NIC_REG_VERSION), 0x00010009u);
	EXPECT_TRUE(rd(DMS_NIC_REG_CAPS) & DMS_NIC_CAP_RXQ_PACK);
	enable(DMS_NIC_Q_PACK, 4096);
	EXPECT_EQ(ctrl(), DMS_NIC_Q_ENABLE | DMS_NIC_Q_PACK);
	enable(0, 4096);
	EXPECT_EQ(ctrl(), DMS_NIC_Q_ENABLE);
}

TEST_F(NicPack, WholeWithPackIsRefused)
{
	enable(DMS_NIC_Q_WHOLE | DMS_NIC_Q_PACK, 4096);
	EXPECT_EQ(ctrl(), DMS_NIC_Q_CFG_ERR | DMS_NIC_Q_WHOLE | DMS_NIC_Q_PACK);
	EXPECT_EQ(rd(DMS_NIC_REG_STAT_RING_ERR), 1u);
	enable(DMS_NIC_Q_PACK, 4096); // either alone is fine
	EXPECT_EQ(ctrl(), DMS_NIC_Q_ENABLE | DMS_NIC_Q_PACK);
	enable(DMS_NIC_Q_WHOLE, 4096);
	EXPECT_EQ(ctrl(), DMS_NIC_Q_ENABLE | DMS_NIC_Q_WHOLE);
}

// Split payloads of 200 and 300 bytes share buffer 0 at 0 and 256; the
// headers still take one header buffer each.
TEST_F(NicPack, SmallPayloadsShareABuffer)
{
	wr(DMS_NIC_REG_RX_CTRL, DMS_NIC_RX_HDR_SPLIT);
	enable(DMS_NIC_Q_PACK, 4096);
	const auto f0 = tcp_frame(200), f1 = tcp_frame(300);
	rx(f0);
	rx(f1);
	const auto c = cmpls();
	ASSERT_EQ(c.size(), 2u);
	for (unsigned i = 0; i < 2; i++) {
		EXPECT_EQ(c[i].flags & (kSeen | DMS_RX_F_HDR | DMS_RX_F_SPLIT),
			  kEnds | DMS_RX_F_PAY | DMS_RX_F_HDR | DMS_RX_F_SPLIT);
		EXPECT_EQ(c[i].pbuf_id, kPid);
		EXPECT_EQ(c[i].hbuf_id, kHid + i);
		EXPECT_EQ(c[i].hdr_len, 54);
	}
	EXPECT_EQ(c[0].pay_len, 200u);
	EXPECT_EQ(c[1].pay_len, 300u);
	EXPECT_EQ(std::memcmp(pbuf(kPid), f0.data() + 54, 200), 0);
	EXPECT_EQ(std::memcmp(pbuf(kPid) + 256, f1.data() + 54, 300), 0);
	EXPECT_EQ(std::memcmp(host_->at(kHdata + kHsize), f1.data(), 54), 0);
}

// 1000-byte payloads at 0, 1024, 2048, 3072 of a 4 KiB buffer: the fourth
// rounds up to its end and carries PBUF_DONE; the fifth starts buffer 1.
TEST_F(NicPack, DoneOnThePieceThatReachesTheEnd)
{
	wr(DMS_NIC_REG_RX_CTRL, DMS_NIC_RX_HDR_SPLIT);
	enable(DMS_NIC_Q_PACK, 4096);
	std::vector<std::vector<uint8_t>> f;
	for (unsigned i = 0; i < 5; i++) {
		f.push_back(tcp_frame(1000));
		f.back()[60] = uint8_t(i); // tell them apart
		rx(f.back());
	}
	const auto c = cmpls();
	ASSERT_EQ(c.size(), 5u);
	for (unsigned i = 0; i < 5; i++) {
		const uint16_t done = i == 3 ? DMS_RX_F_PBUF_DONE : 0;
		EXPECT_EQ(c[i].flags & kSeen, kEnds | DMS_RX_F_PAY | done) << i;
		EXPECT_EQ(c[i].pbuf_id, i < 4 ? kPid : kPid + 1) << i;
		EXPECT_EQ(c[i].pay_len, 1000u);
		const size_t off = i < 4 ? 1024 * i : 0;
		EXPECT_EQ(std::memcmp(pbuf(c[i].pbuf_id) + off, f[i].data() + 54, 1000), 0) << i;
	}
}

// A payload that does not fit the rest of the head buffer: its first piece
// (SOP, PBUF_DONE) ends that buffer, the second (EOP) starts the next at 0.
TEST_F(NicPack, FrameStraddlesTwoBuffers)
{
	wr(DMS_NIC_REG_RX_CTRL, DMS_NIC_RX_HDR_SPLIT);
	enable(DMS_NIC_Q_PACK, 4096);
	const auto f0 = tcp_frame(3000), f1 = tcp_frame(2000);
	rx(f0); // fill 3072
	rx(f1);
	const auto c = cmpls();
	ASSERT_EQ(c.size(), 3u);
	EXPECT_EQ(c[0].flags & kSeen, kEnds | DMS_RX_F_PAY);
	EXPECT_EQ(c[1].flags & (kSeen | DMS_RX_F_HDR),
		  DMS_RX_F_SOP | DMS_RX_F_PAY | DMS_RX_F_PBUF_DONE | DMS_RX_F_HDR);
	EXPECT_EQ(c[1].pbuf_id, kPid);
	EXPECT_EQ(c[1].pay_len, 1024u);
	EXPECT_EQ(c[1].frame_len, f1.size());
	EXPECT_EQ(c[2].flags & (kSeen | DMS_RX_F_HDR), DMS_RX_F_EOP | DMS_RX_F_PAY);
	EXPECT_EQ(c[2].pbuf_id, kPid + 1);
	EXPECT_EQ(c[2].pay_len, 976u);
	EXPECT_EQ(std::memcmp(pbuf(kPid) + 3072, f1.data() + 54, 1024), 0);
	EXPECT_EQ(std::memcmp(pbuf(kPid + 1), f1.data() + 54 + 1024, 976), 0);
	// The next payload follows it in buffer 1, at 1024.
	rx(f0);
	const auto d = cmpls();
	ASSERT_EQ(d.size(), 1u);
	EXPECT_EQ(d[0].pbuf_id, kPid + 1);
	EXPECT_EQ(std::memcmp(pbuf(kPid + 1) + 1024, f0.data() + 54, 3000), 0);
}

// Header split off, 512-byte buffers: a 1500-byte frame after a 100-byte
// one goes at 128 of buffer 0 (384 bytes), fills buffers 1 and 2, and
// leaves 92 bytes in buffer 3 (fill 128, not done).
TEST_F(NicPack, FrameLargerThanABuffer)
{
	enable(DMS_NIC_Q_PACK, 512);
	const auto f0 = tcp_frame(100 - 54), f1 = tcp_frame(1500 - 54);
	ASSERT_EQ(f1.size(), 1500u);
	rx(f0);
	rx(f1);
	const auto c = cmpls();
	ASSERT_EQ(c.size(), 5u);
	EXPECT_EQ(c[0].flags & kSeen, kEnds | DMS_RX_F_PAY);
	EXPECT_EQ(c[0].pay_len, 100u);
	const uint32_t len[4] = {384, 512, 512, 92};
	const uint16_t fl[4] = {DMS_RX_F_SOP | DMS_RX_F_PBUF_DONE, DMS_RX_F_PBUF_DONE,
				DMS_RX_F_PBUF_DONE, DMS_RX_F_EOP};
	size_t at = 0;
	for (unsigned i = 0; i < 4; i++) {
		EXPECT_EQ(c[1 + i].flags & kSeen, DMS_RX_F_PAY | fl[i]) << i;
		EXPECT_EQ(c[1 + i].pbuf_id, kPid + i) << i;
		EXPECT_EQ(c[1 + i].pay_len, len[i]) << i;
		EXPECT_EQ(std::memcmp(pbuf(kPid + i) + (i ? 0 : 128), f1.data() + at, len[i]), 0)
			<< i;
		at += len[i];
	}
	rx(f0);
	const auto d = cmpls();
	ASSERT_EQ(d.size(), 1u);
	EXPECT_EQ(d[0].pbuf_id, kPid + 3);
	EXPECT_EQ(std::memcmp(pbuf(kPid + 3) + 128, f0.data(), f0.size()), 0);
}

// A frame whose second buffer faults is lost: both its SOP|EOP|ERR
// completions end their buffers (the first was shared with an earlier
// frame), and the next frame starts buffer 2 at offset 0.
TEST_F(NicPack, FaultEndsEveryBufferTouched)
{
	wr(DMS_NIC_REG_RX_CTRL, DMS_NIC_RX_HDR_SPLIT);
	enable(DMS_NIC_Q_PACK, 4096);
	repoint(1, kBadAddr);
	const auto f0 = tcp_frame(3000), f1 = tcp_frame(2000), f2 = tcp_frame(500);
	rx(f0);
	rx(f1);
	rx(f2);
	const auto c = cmpls();
	ASSERT_EQ(c.size(), 4u);
	EXPECT_EQ(c[0].flags & kSeen, kEnds | DMS_RX_F_PAY);
	for (unsigned i = 1; i < 3; i++) {
		EXPECT_EQ(c[i].flags & kSeen,
			  kEnds | DMS_RX_F_PAY | DMS_RX_F_ERR | DMS_RX_F_PBUF_DONE)
			<< i;
		EXPECT_EQ(c[i].pbuf_id, kPid + i - 1);
		EXPECT_EQ(c[i].pay_len, 0u);
	}
	EXPECT_EQ(c[3].flags & kSeen, kEnds | DMS_RX_F_PAY);
	EXPECT_EQ(c[3].pbuf_id, kPid + 2);
	EXPECT_EQ(std::memcmp(pbuf(kPid + 2), f2.data() + 54, 500), 0);
	EXPECT_EQ(rd(DMS_NIC_REG_STAT_RX_DMA_ERR), 1u);
	EXPECT_EQ(ctrl(), DMS_NIC_Q_ENABLE | DMS_NIC_Q_PACK); // the queue runs on
}

// A header-only frame lost to a header buffer fault touched no payload
// buffer: its ERR completion ends none, and the stream goes on at 256.
TEST_F(NicPack, HeaderFaultLeavesTheStream)
{
	wr(DMS_NIC_REG_RX_CTRL, DMS_NIC_RX_HDR_SPLIT);
	wr(DMS_NIC_REG_HDS_THRESH, 150);
	enable(DMS_NIC_Q_PACK, 4096);
	dms_rx_buf hb{kBadAddr, uint16_t(kHid + 1), {}};
	std::memcpy(host_->at(kHring + 16), &hb, 16);
	const auto small = tcp_frame(100), f = tcp_frame(200);
	rx(f);
	rx(small);
	rx(f);
	const auto c = cmpls();
	ASSERT_EQ(c.size(), 3u);
	EXPECT_EQ(c[1].flags & (kSeen | DMS_RX_F_HDR), kEnds | DMS_RX_F_ERR | DMS_RX_F_HDR);
	EXPECT_EQ(c[2].flags & kSeen, kEnds | DMS_RX_F_PAY);
	EXPECT_EQ(c[2].pbuf_id, kPid);
	EXPECT_EQ(std::memcmp(pbuf(kPid) + 256, f.data() + 54, 200), 0);
	EXPECT_EQ(rd(DMS_NIC_REG_STAT_RX_DMA_ERR), 1u);
}

// Header-only frames (payload under HDS_THRESH, in a header buffer whole)
// leave the stream alone; an enable and a device reset both start it
// again at offset 0 of the first buffer.
TEST_F(NicPack, HeaderOnlyKeepsAndEnableResetsTheFill)
{
	wr(DMS_NIC_REG_RX_CTRL, DMS_NIC_RX_HDR_SPLIT);
	wr(DMS_NIC_REG_HDS_THRESH, 150);
	enable(DMS_NIC_Q_PACK, 4096);
	const auto small = tcp_frame(100), f = tcp_frame(200);
	rx(f);
	rx(small);
	rx(f);
	auto c = cmpls();
	ASSERT_EQ(c.size(), 3u);
	EXPECT_EQ(c[1].flags & (kSeen | DMS_RX_F_HDR), kEnds | DMS_RX_F_HDR);
	EXPECT_EQ(c[2].pbuf_id, kPid);
	EXPECT_EQ(std::memcmp(pbuf(kPid) + 256, f.data() + 54, 200), 0);
	for (bool reset : {false, true}) {
		if (reset) {
			rx(f); // the stream at 256 again
			wr(DMS_NIC_REG_CTRL, DMS_NIC_CTRL_RESET);
			run();
			wr(DMS_NIC_REG_RX_CTRL, DMS_NIC_RX_HDR_SPLIT);
			wr(DMS_NIC_REG_MTU, 9000);
		}
		host_->clear();
		enable(DMS_NIC_Q_PACK, 4096);
		rx(f);
		rx(f);
		c = cmpls();
		ASSERT_EQ(c.size(), 2u) << reset;
		EXPECT_EQ(c[0].pbuf_id, kPid);
		EXPECT_EQ(c[1].pbuf_id, kPid);
		EXPECT_EQ(std::memcmp(pbuf(kPid), f.data() + 54, 200), 0) << reset;
		EXPECT_EQ(std::memcmp(pbuf(kPid) + 256, f.data() + 54, 200), 0) << reset;
	}
}

// Awkward sizes: 520-byte payload buffers (not a multiple of 128), the
// stream at 512 (8 bytes left), then a 9022-byte frame (MTU 9000). Every
// piece stays in its buffer, the bytes around them are untouched, and the
// frame's bytes all land. It takes 19 pieces (18 without PACK): more than
// Linux's 17 frags, as a whole jumbo frame in small buffers already does
// without PACK (datasheet, Receive).
TEST_F(NicPack, PiecesStayInsideTheirBuffers)
{
	enable(DMS_NIC_Q_PACK, 520);
	std::memset(host_->at(kPdata), 0xee, 64 * 520);
	const auto f0 = tcp_frame(400 - 54), f1 = tcp_frame(9022 - 54);
	rx(f0); // 400 -> fill 512 < 520: the next piece is 8 bytes
	rx(f1);
	const auto c = cmpls();
	ASSERT_EQ(c.size(), 1u + 19u);
	size_t at = 0;
	for (unsigned i = 0; i < 19; i++) {
		const dms_rx_cmpl &p = c[1 + i];
		const size_t off = i ? 0 : 512;
		ASSERT_LE(off + p.pay_len, 520u) << i;
		EXPECT_EQ(p.pbuf_id, kPid + i) << i;
		EXPECT_EQ(std::memcmp(pbuf(p.pbuf_id) + off, f1.data() + at, p.pay_len), 0) << i;
		at += p.pay_len;
	}
	EXPECT_EQ(at, f1.size());
	EXPECT_EQ(c[1].pay_len, 8u);
	EXPECT_EQ(c[1].flags & kSeen, DMS_RX_F_SOP | DMS_RX_F_PAY | DMS_RX_F_PBUF_DONE);
	EXPECT_EQ(c[19].flags & kSeen, DMS_RX_F_EOP | DMS_RX_F_PAY);
	EXPECT_EQ(c[19].pay_len, 174u);
	EXPECT_EQ(pbuf(kPid)[400], 0xee);      // between the two frames' pieces
	EXPECT_EQ(pbuf(kPid + 18)[174], 0xee); // past the last piece
	EXPECT_EQ(pbuf(kPid + 19)[0], 0xee);   // a buffer the frame did not touch
}

// GRO on a PACK queue with 1 KiB buffers, headers not split, the stream at
// 896: an aggregate may take 16 buffers' worth of frame, so it touches at
// most 17 (without the extra one it would reach 17 KiB and 18 pieces).
TEST_F(NicPack, GroAggregateStaysWithin17Pieces)
{
	wr(DMS_NIC_REG_RX_CTRL, DMS_NIC_RX_CSUM | DMS_NIC_RX_GRO);
	enable(DMS_NIC_Q_PACK, 1024);
	frames::Spec udp;
	udp.proto = 17;
	udp.payload = 800; // 842 bytes: fill 896
	rx(frames::build(udp));
	for (uint32_t i = 0; i < 20; i++) {
		const auto s = segment(1000 * i, 1000);
		ASSERT_EQ(dms_nic_receive(node_, s.data(), s.size()), 1);
	}
	run();
	const auto c = cmpls();
	ASSERT_GE(c.size(), 2u);
	unsigned frames = 0, segs = 0, pieces = 0, most = 0;
	for (size_t i = 1; i < c.size(); i++) {
		if (c[i].flags & DMS_RX_F_SOP) {
			frames++;
			segs += c[i].gro_segs ? c[i].gro_segs : 1;
			pieces = 0;
		}
		EXPECT_FALSE(c[i].flags & DMS_RX_F_ERR);
		most = std::max(most, ++pieces);
	}
	EXPECT_EQ(segs, 20u);
	EXPECT_GE(frames, 2u);
	EXPECT_LE(most, unsigned(DMS_NIC_GRO_MAX_BUFS));
	EXPECT_EQ(c[1].gro_segs, 16); // 66 + 16 * 1000 bytes: 16 KiB at most
}

// The largest aggregate (IP total length near 65535, a frame just over 64
// KiB) still fits 17 4 KiB buffers from the furthest a fill may start
// (3968): a PACK queue coalesces as much as a plain one. Counting a whole
// extra buffer instead cut it a segment short (gro.py's large_max).
TEST_F(NicPack, LargestAggregateFitsFromAnyFill)
{
	wr(DMS_NIC_REG_RX_CTRL, DMS_NIC_RX_CSUM | DMS_NIC_RX_GRO);
	enable(DMS_NIC_Q_PACK, 4096);
	for (uint32_t i = 0; i < 9; i++) {
		const auto s = segment(8184 * i, 8184); // 8 of them: IP length 65524
		ASSERT_EQ(dms_nic_receive(node_, s.data(), s.size()), 1);
	}
	run();
	const auto c = cmpls();
	ASSERT_GE(c.size(), 1u);
	EXPECT_EQ(c[0].gro_segs, 8);
	EXPECT_EQ(c[0].frame_len, 66u + 8 * 8184);
}
