// SPDX-License-Identifier: MIT
// The NIC with nic.parser = "rtl": every frame's placement (split or not,
// header length), metadata (L3/L4 info, checksum verdict, RSS hash) and the
// split counter are what the behavioural parser implies for the same
// traffic. Driven through the C ABI like test_nic.cc.
#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "devmemsim/devmemsim.h"
#include "devmemsim/nic_desc.h"
#include "devmemsim/nic_regs.h"
#include "fake_host.h"
#include "frames.h"
#include "nic/csum.h"
#include "nic/parser.h"
#include "nic/rss.h"
#include "nic/rtl_parser.h"

using namespace devmemsim;

namespace
{

constexpr uint64_t kRam = fake_host::kRamBase;
constexpr uint64_t kRamSize = 4 << 20;
constexpr uint64_t kHbufRing = kRam, kPbufRing = kRam + 0x1000, kCmplRing = kRam + 0x2000;
constexpr uint64_t kHdata = kRam + 0x10000, kPdata = kRam + 0x40000;
constexpr unsigned kLog2 = 6, kSlots = 64, kHbuf = 256, kPbuf = 4096;

fake_host::Host g_host(kRamSize);
uint8_t *at(uint64_t a)
{
	return g_host.at(a);
}

class RtlNic : public ::testing::Test
{
protected:
	static void SetUpTestSuite()
	{
		std::string err;
		node_ = fake_host::new_node("[nic]\nqueues = 1\nparser = \"rtl\"\n", &err);
		ASSERT_NE(node_, nullptr) << err;
		g_host.attach(node_, DMS_DEV_NIC);
		dms_node_step(node_, 0);
	}
	static void wr(uint32_t off, uint32_t v) { dms_reg_write(node_, DMS_DEV_NIC, off, v, 4); }
	static uint32_t rd(uint32_t off)
	{
		return uint32_t(dms_reg_read(node_, DMS_DEV_NIC, off, 4));
	}
	static void qw(uint32_t off, uint32_t v) { wr(DMS_NIC_Q_BASE(0) + off, v); }
	static void run() { fake_host::run_until_idle(node_, 100000); }
	// Post nh header and np payload buffers.
	void post(unsigned nh, unsigned np)
	{
		for (unsigned i = 0; i < nh; i++, htail_++) {
			const unsigned s = htail_ % kSlots;
			dms_rx_buf hb{kHdata + s * kHbuf, uint16_t(s), {}};
			std::memcpy(at(kHbufRing + 16 * s), &hb, 16);
		}
		for (unsigned i = 0; i < np; i++, ptail_++) {
			const unsigned s = ptail_ % kSlots;
			dms_rx_buf pb{kPdata + s * uint64_t(kPbuf), uint16_t(s), {}};
			std::memcpy(at(kPbufRing + 16 * s), &pb, 16);
		}
		qw(DMS_NIC_RXQ_HBUF_TAIL, htail_ % kSlots);
		qw(DMS_NIC_RXQ_PBUF_TAIL, ptail_ % kSlots);
	}
	void SetUp() override
	{
		wr(DMS_NIC_REG_CTRL, DMS_NIC_CTRL_RESET);
		run();
		dms_node_reset_stats(node_);
		g_host.clear();
		qw(DMS_NIC_RXQ_RING_LOG2, kLog2);
		qw(DMS_NIC_RXQ_HBUF_BASE_LO, uint32_t(kHbufRing));
		qw(DMS_NIC_RXQ_PBUF_BASE_LO, uint32_t(kPbufRing));
		qw(DMS_NIC_RXQ_CMPL_BASE_LO, uint32_t(kCmplRing));
		qw(DMS_NIC_RXQ_HBUF_SIZE, kHbuf);
		qw(DMS_NIC_RXQ_PBUF_SIZE, kPbuf);
		qw(DMS_NIC_RXQ_CTRL, DMS_NIC_Q_ENABLE);
		htail_ = ptail_ = 0;
		post(kSlots / 2, kSlots / 2);
		head_ = 0;
		phase_ = true;
		for (unsigned i = 0; i < 10; i++)
			wr(DMS_NIC_REG_RSS_KEY(i), 0x6d5a56da + 0x01010101 * i);
		for (unsigned i = 0; i < 40; i++)
			rss_.key[i] = uint8_t((0x6d5a56da + 0x01010101 * (i / 4)) >> (8 * (i % 4)));
		wr(DMS_NIC_REG_RX_CTRL, DMS_NIC_RX_HDR_SPLIT | DMS_NIC_RX_CSUM | DMS_NIC_RX_RSS);
		wr(DMS_NIC_REG_HDS_THRESH, 0);
		wr(DMS_NIC_REG_MTU, 9000);
	}
	bool next(dms_rx_cmpl *c)
	{
		std::memcpy(c, at(kCmplRing + 32 * head_), 32);
		if (bool(c->flags & DMS_RX_F_GEN) != phase_)
			return false;
		if (++head_ == kSlots) {
			head_ = 0;
			phase_ = !phase_;
		}
		qw(DMS_NIC_RXQ_CMPL_HEAD, head_);
		return true;
	}

	// One frame in; its first completion checked against what the
	// behavioural parser implies; buffers given back. Returns whether it split.
	bool check(const std::vector<uint8_t> &f)
	{
		EXPECT_EQ(dms_nic_receive(node_, f.data(), f.size()), 1);
		run();
		const Parsed p = parse_frame(f.data(), f.size());
		const bool split = p.split_off && f.size() > p.split_off;
		uint32_t hash = 0;
		const bool hashed = rss_hash(rss_, p, 0, &hash);
		dms_rx_cmpl c;
		unsigned n = 0, nh = 0, np = 0;
		while (next(&c)) {
			nh += bool(c.flags & DMS_RX_F_HDR);
			np += bool(c.flags & DMS_RX_F_PAY);
			if (n++ == 0) {
				const std::string what = "frame of " + std::to_string(f.size()) +
							 " bytes, behavioural split_off " +
							 std::to_string(p.split_off);
				EXPECT_EQ(bool(c.flags & DMS_RX_F_SPLIT), split) << what;
				if (split) {
					EXPECT_EQ(c.hdr_len, p.split_off) << what;
				}
				const unsigned info = (p.l3 == L3::Ipv4	  ? DMS_RX_L3_IPV4
						       : p.l3 == L3::Ipv6 ? DMS_RX_L3_IPV6
									  : 0) |
						      (p.l4 == L4::Tcp	 ? DMS_RX_L4_TCP
						       : p.l4 == L4::Udp ? DMS_RX_L4_UDP
									 : 0);
				EXPECT_EQ(c.info, info) << what;
				EXPECT_EQ(bool(c.flags & DMS_RX_F_RSS), hashed) << what;
				EXPECT_EQ(c.rss_hash, hashed ? hash : 0) << what;
				unsigned csum = 0;
				if (p.l4 != L4::None)
					csum = l4_csum_ok(f.data(), p) ? DMS_RX_F_CSUM_OK
								       : DMS_RX_F_CSUM_BAD;
				EXPECT_EQ(c.flags & (DMS_RX_F_CSUM_OK | DMS_RX_F_CSUM_BAD), csum)
					<< what;
			}
		}
		EXPECT_EQ(n, 1u) << "completions of a frame of " << f.size() << " bytes";
		post(nh, np); // hand back what the frame took
		return split;
	}

	static dms_node *node_;
	unsigned htail_ = 0, ptail_ = 0, head_ = 0;
	bool phase_ = true;
	RssContext rss_; // the device's context 0 at reset, with the key above
};
dms_node *RtlNic::node_;

uint64_t stat(dms_node *n, const char *name)
{
	const std::string s = dms_node_stats_json(n);
	const std::string k = std::string("\"") + name + "\": ";
	const size_t at = s.find(k);
	return at == std::string::npos ? UINT64_MAX : std::stoull(s.substr(at + k.size()));
}

} // namespace

TEST_F(RtlNic, PlacementAndMetadataEqualTheBehaviouralParser)
{
	ASSERT_TRUE(RtlParser::built_in());
	std::vector<std::vector<uint8_t>> traffic;
	for (unsigned vlans = 0; vlans <= 2; vlans++)
		for (bool v6 : {false, true})
			for (uint8_t proto : {6, 17, 1})
				for (unsigned opt : {0u, 12u, 40u})
					for (size_t payload : {0u, 1u, 200u, 1400u}) {
						frames::Spec s;
						s.vlans = vlans;
						s.ipv6 = v6;
						s.proto = proto;
						s.ip_options = v6 ? 0 : opt;
						s.tcp_options = proto == 6 ? opt : 0;
						s.payload = payload;
						traffic.push_back(frames::build(s));
					}
	// Fragments, extension headers, truncated and corrupted frames.
	frames::Spec frag;
	frag.frag = 0x2000;
	traffic.push_back(frames::build(frag));
	frames::Spec ext;
	ext.ipv6 = true;
	ext.ipv6_next = 60;
	traffic.push_back(frames::build(ext));
	std::mt19937_64 rng(42);
	const size_t valid = traffic.size();
	for (int i = 0; i < 300; i++) {
		std::vector<uint8_t> f = traffic[rng() % valid];
		if (rng() % 2)
			f.resize(14 + rng() % (f.size() - 13));
		for (unsigned k = rng() % 3; k; k--)
			f[rng() % std::min<size_t>(f.size(), 80)] ^= uint8_t(1 + rng() % 255);
		traffic.push_back(f);
	}

	uint64_t splits = 0;
	for (const auto &f : traffic)
		splits += check(f);
	EXPECT_EQ(stat(node_, "rx_split"), splits);
	EXPECT_EQ(stat(node_, "rx_frames"), traffic.size());
	EXPECT_GT(splits, 100u);
}
