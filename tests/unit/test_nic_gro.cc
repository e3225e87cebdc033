// SPDX-License-Identifier: MIT
// The NIC's hardware GRO (v1.5) through the C ABI with a fake host: what
// coalesces, what each flush rule delivers and in which order, limits,
// IPv6, payload buffers in GPU memory, and a queue disabled or the device
// reset with aggregates open.
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

namespace
{

using fake_host::Host;
constexpr uint64_t kRam = fake_host::kRamBase;
constexpr uint64_t kHbuf = kRam, kPbuf = kRam + 0x1000, kCmpl = kRam + 0x2000;
constexpr uint64_t kHdata = kRam + 0x10000, kPdata = kRam + 0x40000;
constexpr uint64_t kGpuBar = 0x4000000000ull; // where "the guest" put the GPU's BAR 2
constexpr unsigned kLog2 = 6, kRing = 64, kHsize = 256, kPsize = 4096;
constexpr uint32_t kTimeoutNs = 1000000;
constexpr uint8_t kAck = 0x10, kPsh = 0x08, kFin = 0x01;

// A TCP segment of flow `sport` with payload bytes seq*7+i.
std::vector<uint8_t> segment(uint32_t seq, size_t payload, uint8_t flags = kAck,
			     uint16_t sport = 1234, bool ipv6 = false)
{
	frames::Spec s;
	s.ipv6 = ipv6;
	s.payload = payload;
	s.sport = sport;
	s.tcp_options = 12; // like timestamps
	std::vector<uint8_t> f = frames::build(s);
	const size_t l4 = ipv6 ? 54 : 34;
	if (!ipv6) {
		f[20] = 0x40; // DF, so the IPv4 ID (0) may stay fixed
		frames::put16(f, 24, 0);
		frames::put16(f, 24,
			      uint16_t(~devmemsim::inet_fold(devmemsim::inet_sum(&f[14], 20))));
	}
	for (int b = 0; b < 4; b++)
		f[l4 + 4 + b] = uint8_t(seq >> (24 - 8 * b));
	f[l4 + 13] = flags;
	for (size_t i = 0; i < payload; i++)
		f[l4 + 32 + i] = uint8_t((seq + i) * 7);
	devmemsim::l4_csum_fill(f.data(), devmemsim::parse_frame(f.data(), f.size()));
	return f;
}

struct Frame {
	dms_rx_cmpl sop{};
	std::vector<uint8_t> hdr, pay;
};

class NicGro : public ::testing::Test
{
protected:
	static void SetUpTestSuite()
	{
		char err[256] = "";
		node_ = dms_node_new(nullptr, err, sizeof(err));
		ASSERT_NE(node_, nullptr) << err;
		host_ = new Host;
		host_->attach(node_, DMS_DEV_NIC);
		gpu_ = new std::vector<uint8_t>(dms_gpu_mem_size(node_));
		dms_gpu_set_memory(node_, gpu_->data());
		dms_set_bar(node_, DMS_DEV_GPU, 2, kGpuBar, gpu_->size());
		dms_node_step(node_, 0);
	}
	void SetUp() override
	{
		wr(DMS_NIC_REG_CTRL, DMS_NIC_CTRL_RESET);
		fake_host::run_until_idle(node_, 1000);
		dms_node_reset_stats(node_);
		host_->clear();
		pdata_ = kPdata;
		enable();
		wr(DMS_NIC_REG_RX_CTRL, DMS_NIC_RX_HDR_SPLIT | DMS_NIC_RX_CSUM | DMS_NIC_RX_GRO);
		wr(DMS_NIC_REG_GRO_TIMEOUT_NS, kTimeoutNs);
		t_ = now() + 1000;
	}
	static void wr(uint32_t off, uint32_t v) { dms_reg_write(node_, DMS_DEV_NIC, off, v, 4); }
	static uint32_t rd(uint32_t off)
	{
		return uint32_t(dms_reg_read(node_, DMS_DEV_NIC, off, 4));
	}
	static void qw(uint32_t off, uint32_t v) { wr(DMS_NIC_Q_BASE(0) + off, v); }
	void enable()
	{
		qw(DMS_NIC_RXQ_RING_LOG2, kLog2);
		qw(DMS_NIC_RXQ_HBUF_BASE_LO, uint32_t(kHbuf));
		qw(DMS_NIC_RXQ_PBUF_BASE_LO, uint32_t(kPbuf));
		qw(DMS_NIC_RXQ_CMPL_BASE_LO, uint32_t(kCmpl));
		qw(DMS_NIC_RXQ_HBUF_SIZE, kHsize);
		qw(DMS_NIC_RXQ_PBUF_SIZE, kPsize);
		qw(DMS_NIC_RXQ_CTRL, DMS_NIC_Q_ENABLE);
		phase_ = true;
		head_ = 0;
		std::memset(host_->at(kCmpl), 0, 32 * kRing);
		for (unsigned i = 0; i < kRing - 1; i++) {
			dms_rx_buf hb{kHdata + i * kHsize, uint16_t(i), {}};
			dms_rx_buf pb{pdata_ + i * uint64_t(kPsize), uint16_t(i), {}};
			std::memcpy(host_->at(kHbuf + 16 * i), &hb, 16);
			std::memcpy(host_->at(kPbuf + 16 * i), &pb, 16);
		}
		qw(DMS_NIC_RXQ_HBUF_TAIL, kRing - 1);
		qw(DMS_NIC_RXQ_PBUF_TAIL, kRing - 1);
	}
	static uint64_t now()
	{
		std::string s = dms_node_stats_json(node_);
		return std::stoull(s.substr(s.find("\"time_ns\": ") + 11));
	}
	// Frame f arrives 1 us after the previous one.
	void rx(const std::vector<uint8_t> &f)
	{
		dms_node_step(node_, t_);
		ASSERT_EQ(dms_nic_receive(node_, f.data(), f.size()), 1);
		dms_node_step(node_, t_);
		t_ += 1000;
	}
	// Let the GRO timer run out.
	void expire()
	{
		t_ += 2 * kTimeoutNs;
		dms_node_step(node_, t_);
	}
	const uint8_t *pay_buf(uint16_t id) const
	{
		const uint64_t a = pdata_ + id * uint64_t(kPsize);
		return a >= kGpuBar ? gpu_->data() + (a - kGpuBar) : host_->at(a);
	}
	// The next frame the device completed, if any (buffers not reposted).
	bool next(Frame *out)
	{
		*out = Frame{};
		for (bool first = true;; first = false) {
			dms_rx_cmpl c;
			std::memcpy(&c, host_->at(kCmpl + 32 * head_), 32);
			if (bool(c.flags & DMS_RX_F_GEN) != phase_) {
				EXPECT_TRUE(first) << "frame without EOP";
				return false;
			}
			if (++head_ == kRing) {
				head_ = 0;
				phase_ = !phase_;
			}
			qw(DMS_NIC_RXQ_CMPL_HEAD, head_);
			if (first) {
				EXPECT_TRUE(c.flags & DMS_RX_F_SOP);
				out->sop = c;
				const uint8_t *h = host_->at(kHdata + c.hbuf_id * kHsize);
				out->hdr.assign(h, h + c.hdr_len);
			}
			if (c.flags & DMS_RX_F_PAY)
				out->pay.insert(out->pay.end(), pay_buf(c.pbuf_id),
						pay_buf(c.pbuf_id) + c.pay_len);
			if (c.flags & DMS_RX_F_EOP)
				return true;
		}
	}
	static std::vector<uint8_t> payload_of(const std::vector<uint8_t> &f, bool ipv6 = false)
	{
		return {f.begin() + (ipv6 ? 86 : 66), f.end()};
	}
	static uint32_t seq_of(const Frame &f)
	{
		return uint32_t(f.hdr[38]) << 24 | uint32_t(f.hdr[39]) << 16 | f.hdr[40] << 8 |
		       f.hdr[41];
	}
	static uint16_t sport_of(const Frame &f) { return uint16_t(f.hdr[34] << 8 | f.hdr[35]); }
	// Where an aggregate opened on a queue kept busy by other flows (a
	// frame every 0.5 ms, each alone) is delivered among their frames.
	long delivered_among_busy(uint16_t frames)
	{
		rx(segment(0, 1000));
		const uint64_t t0 = t_ - 1000;
		std::vector<uint16_t> order;
		for (uint16_t i = 0; i < frames; i++) {
			t_ = t0 + 500000ull * (i + 1);
			rx(segment(0, 100, kAck | kPsh, uint16_t(3000 + i)));
			for (Frame f; next(&f);)
				order.push_back(sport_of(f));
		}
		EXPECT_EQ(order.size(), frames + 1u);
		return std::find(order.begin(), order.end(), 1234) - order.begin();
	}

	static dms_node *node_;
	static Host *host_;
	static std::vector<uint8_t> *gpu_;
	uint64_t t_ = 0, pdata_ = kPdata;
	bool phase_ = true;
	unsigned head_ = 0;
};
dms_node *NicGro::node_;
Host *NicGro::host_;
std::vector<uint8_t> *NicGro::gpu_;

} // namespace

TEST_F(NicGro, InOrderSegmentsBecomeOneFrame)
{
	EXPECT_GE(rd(DMS_NIC_REG_VERSION), 0x00010005u);
	EXPECT_EQ(rd(DMS_NIC_REG_GRO_FLOWS), unsigned(DMS_NIC_GRO_FLOWS_MAX));
	std::vector<uint8_t> want;
	for (uint32_t i = 0; i < 4; i++) {
		auto s = segment(1000 + 1000 * i, 1000);
		auto p = payload_of(s);
		want.insert(want.end(), p.begin(), p.end());
		rx(s);
	}
	Frame f;
	EXPECT_FALSE(next(&f)) << "delivered before the timer";
	expire();
	ASSERT_TRUE(next(&f));
	EXPECT_EQ(f.sop.gro_segs, 4);
	EXPECT_EQ(f.sop.gso_size, 1000);
	EXPECT_EQ(f.sop.frame_len, 66u + 4000);
	EXPECT_TRUE(f.sop.flags & DMS_RX_F_CSUM_OK);
	EXPECT_TRUE(f.sop.flags & DMS_RX_F_SPLIT);
	EXPECT_EQ(f.pay, want);
	// The headers are the first segment's with the lengths rewritten.
	EXPECT_EQ(seq_of(f), 1000u);
	EXPECT_EQ(f.hdr[16] << 8 | f.hdr[17], 52 + 4000);
	EXPECT_EQ(devmemsim::inet_fold(devmemsim::inet_sum(&f.hdr[14], 20)), 0xffff);
	EXPECT_EQ(f.hdr[47], kAck);
	EXPECT_FALSE(next(&f));
	EXPECT_EQ(rd(DMS_NIC_REG_RX_GRO_FRAMES), 1u);
	EXPECT_EQ(rd(DMS_NIC_REG_RX_GRO_SEGS), 4u);
}

TEST_F(NicGro, PshAndShortSegmentsEndTheAggregateAtOnce)
{
	rx(segment(0, 1000));
	rx(segment(1000, 1000, kAck | kPsh));
	Frame f;
	ASSERT_TRUE(next(&f));
	EXPECT_EQ(f.sop.gro_segs, 2);
	EXPECT_EQ(f.hdr[47], kAck | kPsh);
	rx(segment(2000, 1000));
	rx(segment(3000, 300)); // shorter: the last one
	ASSERT_TRUE(next(&f));
	EXPECT_EQ(f.sop.gro_segs, 2);
	EXPECT_EQ(f.pay.size(), 1300u);
	// A first segment with PSH goes alone; so does one that is longer.
	rx(segment(3300, 500, kAck | kPsh));
	ASSERT_TRUE(next(&f));
	EXPECT_EQ(f.sop.gro_segs, 0);
	rx(segment(3800, 500));
	rx(segment(4300, 600));
	ASSERT_TRUE(next(&f));
	EXPECT_EQ(f.sop.gro_segs, 0);
	EXPECT_EQ(f.pay.size(), 500u);
	expire();
	ASSERT_TRUE(next(&f));
	EXPECT_EQ(f.pay.size(), 600u);
}

TEST_F(NicGro, SegmentAndByteLimits)
{
	wr(DMS_NIC_REG_GRO_MAX_SEGS, 3);
	EXPECT_EQ(rd(DMS_NIC_REG_GRO_MAX_SEGS), 3u);
	for (uint32_t i = 0; i < 7; i++)
		rx(segment(1448 * i, 1448));
	Frame f;
	for (int n : {3, 3}) {
		ASSERT_TRUE(next(&f));
		EXPECT_EQ(f.sop.gro_segs, n);
	}
	EXPECT_FALSE(next(&f));
	expire();
	ASSERT_TRUE(next(&f));
	EXPECT_EQ(f.sop.gro_segs, 0);

	// The largest frame: 45 x 1448 payload bytes keep the IP packet
	// within 65535 bytes; the 46th starts the next aggregate.
	wr(DMS_NIC_REG_GRO_MAX_SEGS, 1000);
	EXPECT_EQ(rd(DMS_NIC_REG_GRO_MAX_SEGS), unsigned(DMS_NIC_GRO_SEGS_MAX));
	std::vector<uint8_t> want;
	for (uint32_t i = 7; i < 7 + 46; i++) {
		auto s = segment(1448 * i, 1448);
		if (i < 7 + 45) {
			auto p = payload_of(s);
			want.insert(want.end(), p.begin(), p.end());
		}
		rx(s);
	}
	ASSERT_TRUE(next(&f));
	EXPECT_EQ(f.sop.gro_segs, 45);
	EXPECT_EQ(f.pay, want);
	EXPECT_EQ(f.hdr[16] << 8 | f.hdr[17], 52 + 45 * 1448);
}

TEST_F(NicGro, OutOfOrderAndOtherFramesOfTheFlowFlushItFirst)
{
	rx(segment(0, 1000));
	rx(segment(1000, 1000));
	rx(segment(3000, 1000)); // a hole: 2000 is missing
	Frame f;
	ASSERT_TRUE(next(&f));
	EXPECT_EQ(f.sop.gro_segs, 2);
	EXPECT_EQ(seq_of(f), 0u);
	rx(segment(4000, 1000));
	rx(segment(5000, 0, kAck | kFin)); // FIN: flushes, then goes alone
	ASSERT_TRUE(next(&f));
	EXPECT_EQ(f.sop.gro_segs, 2);
	EXPECT_EQ(seq_of(f), 3000u);
	ASSERT_TRUE(next(&f));
	EXPECT_EQ(f.hdr[47], kAck | kFin);
	// A bad checksum never joins.
	rx(segment(6000, 1000));
	auto bad = segment(7000, 1000);
	bad.back() ^= 1;
	rx(bad);
	ASSERT_TRUE(next(&f));
	EXPECT_EQ(f.sop.gro_segs, 0);
	ASSERT_TRUE(next(&f));
	EXPECT_TRUE(f.sop.flags & DMS_RX_F_CSUM_BAD);
}

TEST_F(NicGro, InterleavedFlowsAndTheOldestGoesWhenTheTableIsFull)
{
	constexpr uint16_t kFlows = 8;
	wr(DMS_NIC_REG_GRO_FLOWS, kFlows);
	for (uint32_t i = 0; i < 2; i++)
		for (uint16_t flow = 0; flow < 3; flow++)
			rx(segment(1000 * i, 1000, kAck, uint16_t(2000 + flow)));
	// A pure ACK of another flow passes the open aggregates.
	rx(segment(0, 0, kAck, 3000));
	Frame f;
	ASSERT_TRUE(next(&f));
	EXPECT_EQ(sport_of(f), 3000);
	EXPECT_FALSE(next(&f));
	// Flows 3.. fill the table: each new one past GRO_FLOWS pushes out
	// the oldest, flow 2000 first.
	for (uint16_t flow = 3; flow < kFlows + 1; flow++)
		rx(segment(0, 1000, kAck, uint16_t(2000 + flow)));
	ASSERT_TRUE(next(&f));
	EXPECT_EQ(sport_of(f), 2000);
	EXPECT_EQ(f.sop.gro_segs, 2);
	EXPECT_FALSE(next(&f));
	expire();
	for (uint16_t flow = 1; flow < kFlows + 1; flow++) {
		ASSERT_TRUE(next(&f));
		EXPECT_EQ(sport_of(f), 2000 + flow);
		EXPECT_EQ(f.sop.gro_segs, flow < 3 ? 2 : 0);
	}
}

TEST_F(NicGro, Ipv6)
{
	std::vector<uint8_t> want;
	for (uint32_t i = 0; i < 3; i++) {
		auto s = segment(1000 * i, 1000, i == 2 ? kAck | kPsh : kAck, 1234, true);
		auto p = payload_of(s, true);
		want.insert(want.end(), p.begin(), p.end());
		rx(s);
	}
	Frame f;
	ASSERT_TRUE(next(&f));
	EXPECT_EQ(f.sop.gro_segs, 3);
	EXPECT_EQ(f.sop.info, DMS_RX_L3_IPV6 | DMS_RX_L4_TCP);
	EXPECT_EQ(f.hdr[18] << 8 | f.hdr[19], 32 + 3000); // payload length
	EXPECT_EQ(f.pay, want);
}

// As Linux's tcp_gro_receive(): a segment with CWR (or ECE) does not join
// an aggregate of segments without, but may open one its like joins.
TEST_F(NicGro, CwrSegmentsCoalesceOnlyWithTheirLike)
{
	constexpr uint8_t kCwr = 0x80, kEce = 0x40;
	const uint8_t flags[] = {kAck, kAck | kCwr, kAck | kCwr, kAck, kAck, kAck | kEce};
	for (uint32_t i = 0; i < 6; i++)
		rx(segment(1000 * i, 1000, flags[i]));
	rx(segment(6000, 0, kAck | kFin));
	Frame f;
	const int segs[] = {0, 2, 2, 0};
	const uint8_t first[] = {kAck, kAck | kCwr, kAck, kAck | kEce};
	for (unsigned i = 0; i < 4; i++) {
		ASSERT_TRUE(next(&f)) << i;
		EXPECT_EQ(f.sop.gro_segs, segs[i]) << i;
		EXPECT_EQ(f.hdr[47], first[i]) << i;
	}
	ASSERT_TRUE(next(&f));
	EXPECT_EQ(f.hdr[47], kAck | kFin);
	EXPECT_FALSE(next(&f));
}

// An IPv6 segment with an 8-byte destination options header (`fill` in
// its option bytes) in front of TCP: the TCP checksum stays right.
std::vector<uint8_t> with_dstopts(const std::vector<uint8_t> &seg, uint8_t fill)
{
	std::vector<uint8_t> f(seg.begin(), seg.begin() + 54);
	const uint8_t ext[8] = {6, 0, fill, fill, fill, fill, fill, fill};
	f.insert(f.end(), ext, ext + 8);
	f.insert(f.end(), seg.begin() + 54, seg.end());
	f[20] = 60; // next header: destination options
	frames::put16(f, 18, (f[18] << 8 | f[19]) + 8u);
	return f;
}

// Segments with equal hop-by-hop/destination options headers coalesce
// (the frame does not split); different ones do not, and a lone segment
// goes on as it came, without L4 type.
TEST_F(NicGro, Ipv6ExtensionHeaders)
{
	std::vector<uint8_t> want = with_dstopts(segment(0, 1000, kAck, 1234, true), 0);
	const auto second = with_dstopts(segment(1000, 1000, kAck, 1234, true), 0);
	rx(want);
	rx(second);
	want.insert(want.end(), second.begin() + 94, second.end());
	frames::put16(want, 18, 8 + 32 + 2000);
	expire();
	Frame f;
	ASSERT_TRUE(next(&f));
	EXPECT_EQ(f.sop.gro_segs, 2);
	EXPECT_EQ(f.sop.gso_size, 1000);
	EXPECT_EQ(f.sop.info, DMS_RX_L3_IPV6 | DMS_RX_L4_TCP);
	EXPECT_TRUE(f.sop.flags & DMS_RX_F_CSUM_OK);
	EXPECT_FALSE(f.sop.flags & DMS_RX_F_SPLIT);
	EXPECT_EQ(f.pay, want);

	rx(with_dstopts(segment(2000, 1000, kAck, 1234, true), 0));
	rx(with_dstopts(segment(3000, 1000, kAck, 1234, true), 0x11));
	expire();
	for (int i = 0; i < 2; i++) {
		ASSERT_TRUE(next(&f)) << i;
		EXPECT_EQ(f.sop.gro_segs, 0) << i;
		EXPECT_EQ(f.sop.info, DMS_RX_L3_IPV6) << i;
		EXPECT_FALSE(f.sop.flags & (DMS_RX_F_CSUM_OK | DMS_RX_F_CSUM_BAD)) << i;
		EXPECT_EQ(f.pay.size(), 94u + 1000) << i;
	}
	EXPECT_FALSE(next(&f));
}

// seg inside an outer IP header of the same version (IP-in-IP, as gro.c's
// --ipip and --ip6ip6 send them); an outer IPv4 header gets ID `id`, DF.
std::vector<uint8_t> tunnelled(const std::vector<uint8_t> &seg, bool ipv6, uint16_t id = 0)
{
	const size_t olen = ipv6 ? 40 : 20;
	std::vector<uint8_t> f(seg.begin(), seg.begin() + 14);
	f.resize(14 + olen, 0);
	f.insert(f.end(), seg.begin() + 14, seg.end());
	const size_t inner = seg.size() - 14;
	if (ipv6) {
		f[14] = 0x60;
		frames::put16(f, 18, inner);
		f[20] = 41; // next header: IPv6
		f[21] = 64;
		f[22 + 15] = 1; // source fd00::1, destination fd00::2
		f[38 + 15] = 2;
		f[22] = f[38] = 0xfd;
	} else {
		f[14] = 0x45;
		frames::put16(f, 16, 20 + inner);
		frames::put16(f, 18, id);
		f[20] = 0x40; // DF
		f[22] = 64;
		f[23] = 4; // protocol: IPIP
		const uint8_t addrs[8] = {192, 0, 2, 1, 192, 0, 2, 2};
		std::copy_n(addrs, 8, &f[26]);
		frames::put16(f, 24,
			      uint16_t(~devmemsim::inet_fold(devmemsim::inet_sum(&f[14], 20))));
	}
	return f;
}

// IP-in-IP segments coalesce like plain ones; both IP headers get their
// lengths (and IPv4 checksum) rewritten, each IPv4 ID keeps its rule, and
// the frame does not split.
TEST_F(NicGro, IpInIpTunnels)
{
	for (bool ipv6 : {false, true}) {
		const size_t hdrs = 14 + (ipv6 ? 80 : 40) + 32;
		std::vector<uint8_t> want = tunnelled(segment(0, 1000, kAck, 1234, ipv6), ipv6, 7);
		const auto second = tunnelled(segment(1000, 1000, kAck, 1234, ipv6), ipv6, 8);
		rx(want);
		rx(second);
		// A third whose outer ID jumps (IPv4) or hop limit differs (IPv6)
		// does not join.
		auto third = tunnelled(segment(2000, 1000, kAck, 1234, ipv6), ipv6, 10);
		if (ipv6)
			third[21] = 63;
		rx(third);
		want.insert(want.end(), second.begin() + long(hdrs), second.end());
		if (ipv6) {
			frames::put16(want, 18, 40 + 32 + 2000);
			frames::put16(want, 58, 32 + 2000);
		} else {
			frames::put16(want, 16, 40 + 32 + 2000);
			frames::put16(want, 24, 0);
			frames::put16(want, 24,
				      uint16_t(~devmemsim::inet_fold(
					      devmemsim::inet_sum(&want[14], 20))));
			frames::put16(want, 36, 20 + 32 + 2000);
			frames::put16(want, 44, 0);
			frames::put16(want, 44,
				      uint16_t(~devmemsim::inet_fold(
					      devmemsim::inet_sum(&want[34], 20))));
		}
		expire();
		Frame f;
		ASSERT_TRUE(next(&f)) << ipv6;
		EXPECT_EQ(f.sop.gro_segs, 2) << ipv6;
		EXPECT_EQ(f.sop.info, (ipv6 ? DMS_RX_L3_IPV6 : DMS_RX_L3_IPV4) | DMS_RX_L4_TCP);
		EXPECT_TRUE(f.sop.flags & DMS_RX_F_CSUM_OK);
		EXPECT_FALSE(f.sop.flags & DMS_RX_F_SPLIT);
		EXPECT_EQ(f.pay, want) << ipv6;
		ASSERT_TRUE(next(&f)) << ipv6;
		EXPECT_EQ(f.sop.gro_segs, 0) << ipv6; // alone, as it came
		EXPECT_EQ(f.pay.size(), hdrs + 1000) << ipv6;
		EXPECT_FALSE(next(&f));
	}
}

TEST_F(NicGro, PayloadBuffersInGpuMemory)
{
	wr(DMS_NIC_REG_MTU, 9000);
	qw(DMS_NIC_RXQ_CTRL, 0);
	pdata_ = kGpuBar + 0x100000;
	enable();
	std::vector<uint8_t> want;
	for (uint32_t i = 0; i < 8; i++) {
		auto s = segment(4000 * i, 4000, i == 7 ? kAck | kPsh : kAck);
		auto p = payload_of(s);
		want.insert(want.end(), p.begin(), p.end());
		rx(s);
	}
	Frame f;
	ASSERT_TRUE(next(&f));
	EXPECT_EQ(f.sop.gro_segs, 8);
	EXPECT_EQ(f.pay, want); // read back from GPU memory
}

TEST_F(NicGro, QueueDisabledOrDeviceResetWithAggregatesOpen)
{
	rx(segment(0, 1000));
	rx(segment(1000, 1000));
	qw(DMS_NIC_RXQ_CTRL, 0);
	enable();
	expire();
	Frame f;
	EXPECT_FALSE(next(&f)) << "the aggregate went with the queue";
	rx(segment(5000, 1000));
	rx(segment(6000, 1000, kAck | kPsh));
	ASSERT_TRUE(next(&f));
	EXPECT_EQ(f.sop.gro_segs, 2);

	rx(segment(7000, 1000));
	wr(DMS_NIC_REG_CTRL, DMS_NIC_CTRL_RESET);
	EXPECT_EQ(rd(DMS_NIC_REG_GRO_TIMEOUT_NS), 0u);
	EXPECT_EQ(rd(DMS_NIC_REG_GRO_MAX_BYTES), unsigned(DMS_NIC_GRO_BYTES_MAX));
	expire();
	enable();
	EXPECT_FALSE(next(&f));
}

TEST_F(NicGro, TurningGroOffFlushesAndTimeoutZeroWaitsOnlyForQueuedFrames)
{
	rx(segment(0, 1000));
	rx(segment(1000, 1000));
	Frame f;
	EXPECT_FALSE(next(&f));
	wr(DMS_NIC_REG_RX_CTRL, DMS_NIC_RX_HDR_SPLIT | DMS_NIC_RX_CSUM);
	dms_node_step(node_, t_);
	ASSERT_TRUE(next(&f));
	EXPECT_EQ(f.sop.gro_segs, 2);

	wr(DMS_NIC_REG_RX_CTRL, DMS_NIC_RX_HDR_SPLIT | DMS_NIC_RX_CSUM | DMS_NIC_RX_GRO);
	wr(DMS_NIC_REG_GRO_TIMEOUT_NS, 0);
	dms_node_step(node_, t_);
	for (uint32_t i = 0; i < 3; i++) {
		auto s = segment(2000 + 1000 * i, 1000);
		ASSERT_EQ(dms_nic_receive(node_, s.data(), s.size()), 1);
	}
	dms_node_step(node_, t_);
	ASSERT_TRUE(next(&f));
	EXPECT_EQ(f.sop.gro_segs, 3);
	rx(segment(5000, 1000)); // alone in the FIFO: delivered as it is
	ASSERT_TRUE(next(&f));
	EXPECT_EQ(f.sop.gro_segs, 0);
}

TEST_F(NicGro, AnAggregateOnABusyQueueIsDeliveredWhenItGetsOld)
{
	// GRO_MAX_AGE_NS 0: after DMS_NIC_GRO_AGE_TIMEOUTS timeouts.
	EXPECT_EQ(rd(DMS_NIC_REG_GRO_MAX_AGE_NS), 0u);
	long due = DMS_NIC_GRO_AGE_TIMEOUTS * kTimeoutNs / 500000 - 1; // frames before it
	long at = delivered_among_busy(36);
	EXPECT_GE(at, due - 1);
	EXPECT_LE(at, due + 1);
	// GRO_MAX_AGE_NS set (v1.6): after that long, whatever the timeout
	// (the ring has buffers for 63 frames in all).
	wr(DMS_NIC_REG_GRO_MAX_AGE_NS, 8 * kTimeoutNs);
	EXPECT_EQ(rd(DMS_NIC_REG_GRO_MAX_AGE_NS), 8 * kTimeoutNs);
	due = 8 * kTimeoutNs / 500000 - 1;
	at = delivered_among_busy(24);
	EXPECT_GE(at, due - 1);
	EXPECT_LE(at, due + 1);
	wr(DMS_NIC_REG_GRO_MAX_AGE_NS, ~0u);
	EXPECT_EQ(rd(DMS_NIC_REG_GRO_MAX_AGE_NS), unsigned(DMS_NIC_GRO_AGE_MAX_NS));
}

// As QEMU delivers frames: the host notes the arrival time, then steps the
// model, which idled at an older time since its last event. An aggregate's
// timers run from when its segments came, not from the idle model's time.
TEST_F(NicGro, TimersRunFromWhenSegmentsCameAfterTheModelIdled)
{
	auto arrive = [&](const std::vector<uint8_t> &s) {
		dms_node_set_time(node_, t_);
		ASSERT_EQ(dms_nic_receive(node_, s.data(), s.size()), 1);
		dms_node_step(node_, t_);
	};
	dms_node_step(node_, t_);
	t_ += 50 * kTimeoutNs; // the model idles: nothing is due
	arrive(segment(0, 1000));
	t_ += kTimeoutNs / 2;
	arrive(segment(1000, 1000));
	Frame f;
	EXPECT_FALSE(next(&f)) << "delivered before the timer";
	t_ += kTimeoutNs / 2 + kTimeoutNs / 4; // 1.25 timeouts after the first
	dms_node_step(node_, t_);
	EXPECT_FALSE(next(&f)) << "the queue idle timer ran from the first segment";
	t_ += kTimeoutNs / 2;
	dms_node_step(node_, t_);
	ASSERT_TRUE(next(&f));
	EXPECT_EQ(f.sop.gro_segs, 2);
	// The age limit too: opened when the first segment came, so a flow
	// sending every half timeout is delivered after 4 timeouts, not at once.
	wr(DMS_NIC_REG_GRO_MAX_AGE_NS, 4 * kTimeoutNs);
	t_ += 50 * kTimeoutNs;
	for (uint32_t i = 0; i < 10; i++) {
		arrive(segment(2000 + 1000 * i, 1000));
		t_ += kTimeoutNs / 2;
	}
	ASSERT_TRUE(next(&f));
	EXPECT_GE(f.sop.gro_segs, 8);
	EXPECT_LE(f.sop.gro_segs, 9);
	wr(DMS_NIC_REG_GRO_MAX_AGE_NS, 0);
}
