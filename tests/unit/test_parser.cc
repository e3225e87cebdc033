// SPDX-License-Identifier: MIT
// Header split decisions, checksums, RSS (published Toeplitz vectors) and
// flow steering.
#include <gtest/gtest.h>

#include <random>
#include <vector>

#include "frames.h"
#include "nic/csum.h"
#include "nic/parser.h"
#include "nic/rss.h"
#include "nic/steer.h"

using namespace devmemsim;
using frames::build;
using frames::Spec;

TEST(Parser, TcpOverIpv4)
{
	auto f = build(Spec{});
	Parsed p = parse_frame(f.data(), f.size());
	EXPECT_EQ(p.l3, L3::Ipv4);
	EXPECT_EQ(p.l4, L4::Tcp);
	EXPECT_EQ(p.l3_off, 14u);
	EXPECT_EQ(p.l4_off, 34u);
	EXPECT_EQ(p.split_off, 54u); // 14 + 20 + 20
	EXPECT_EQ(p.sport, 1234);
	EXPECT_EQ(p.dport, 80);
	EXPECT_TRUE(l4_csum_ok(f.data(), p));
}

TEST(Parser, SplitOffsets)
{
	struct Case {
		Spec s;
		size_t split;
	} cases[] = {
		{[] {
			 Spec s;
			 s.vlans = 1;
			 return s;
		 }(),
		 58}, // 802.1Q
		{[] {
			 Spec s;
			 s.vlans = 2;
			 return s;
		 }(),
		 62}, // QinQ
		{[] {
			 Spec s;
			 s.ip_options = 12;
			 return s;
		 }(),
		 66}, // IPv4 options
		{[] {
			 Spec s;
			 s.tcp_options = 12;
			 return s;
		 }(),
		 66}, // TCP options (timestamps)
		{[] {
			 Spec s;
			 s.ipv6 = true;
			 return s;
		 }(),
		 74}, // 14 + 40 + 20
		{[] {
			 Spec s;
			 s.proto = 17;
			 return s;
		 }(),
		 42}, // UDP
		{[] {
			 Spec s;
			 s.ipv6 = true;
			 s.proto = 17;
			 return s;
		 }(),
		 62}, // UDP over IPv6
	};
	for (const Case &c : cases) {
		auto f = build(c.s);
		Parsed p = parse_frame(f.data(), f.size());
		EXPECT_EQ(p.split_off, c.split) << "vlans " << c.s.vlans << " ipv6 " << c.s.ipv6;
		EXPECT_TRUE(l4_csum_ok(f.data(), p));
	}
}

TEST(Parser, NoSplitCases)
{
	Spec frag;
	frag.frag = 0x2000; // more fragments
	Spec ext;
	ext.ipv6 = true;
	ext.ipv6_next = 60; // destination options header
	Spec icmp;
	icmp.proto = 1;
	for (const Spec &s : {frag, ext, icmp}) {
		auto f = build(s);
		EXPECT_EQ(parse_frame(f.data(), f.size()).split_off, 0u);
	}
	// Non-IP (ARP).
	auto arp = build(Spec{});
	arp[12] = 0x08;
	arp[13] = 0x06;
	EXPECT_EQ(parse_frame(arp.data(), arp.size()).l3, L3::None);
}

TEST(Parser, TruncatedFramesNeverSplitOrOverread)
{
	auto f = build(Spec{});
	for (size_t len = 0; len < 54; len++) {
		std::vector<uint8_t> t(f.begin(), f.begin() + long(len));
		Parsed p = parse_frame(t.data(), t.size());
		EXPECT_EQ(p.split_off, 0u) << len;
	}
	// A TCP data offset (60 bytes) beyond the packet (30 bytes of TCP).
	Spec small;
	small.payload = 10;
	auto h = build(small);
	h[14 + 20 + 12] = 0xf0;
	EXPECT_EQ(parse_frame(h.data(), h.size()).split_off, 0u);
	// An IPv4 total length beyond the frame.
	auto g = build(Spec{});
	frames::put16(g, 16, 2000);
	EXPECT_EQ(parse_frame(g.data(), g.size()).l3, L3::None);
}

TEST(Checksum, DetectsCorruptionAndFills)
{
	auto f = build(Spec{});
	Parsed p = parse_frame(f.data(), f.size());
	f[60] ^= 1;
	EXPECT_FALSE(l4_csum_ok(f.data(), p));
	l4_csum_fill(f.data(), p);
	EXPECT_TRUE(l4_csum_ok(f.data(), p));
	Spec u;
	u.ipv6 = true;
	u.proto = 17;
	auto g = build(u);
	Parsed q = parse_frame(g.data(), g.size());
	EXPECT_TRUE(l4_csum_ok(g.data(), q));
	g[70] ^= 0x80;
	EXPECT_FALSE(l4_csum_ok(g.data(), q));
}

namespace
{
// RFC 1071 as written: big-endian 16-bit words, an odd last byte padded.
uint16_t reference_sum(const uint8_t *p, size_t len, uint64_t sum)
{
	for (size_t i = 0; i + 1 < len; i += 2)
		sum += uint64_t(p[i]) << 8 | p[i + 1];
	if (len & 1)
		sum += uint64_t(p[len - 1]) << 8;
	return inet_fold(sum);
}
} // namespace

// inet_sum() takes wide and vector shortcuts: random data, odd lengths, odd
// starts, all-ones words (the largest lane sums) and all zeros must fold to
// the reference's sum.
TEST(Checksum, SumMatchesReference)
{
	std::mt19937 rng(1071);
	std::vector<uint8_t> buf(1 << 14);
	for (auto &b : buf)
		b = uint8_t(rng());
	for (int i = 0; i < 3000; i++) {
		const size_t off = rng() % 64, len = rng() % (i < 1000 ? 100 : buf.size() - off);
		const uint64_t seed = rng() % 3 ? rng() : 0;
		ASSERT_EQ(inet_fold(inet_sum(&buf[off], len, seed)),
			  reference_sum(&buf[off], len, seed))
			<< "len " << len << " offset " << off;
	}
	// Past 2^16 32-byte blocks, where 32-bit lanes would overflow.
	std::vector<uint8_t> ones((3 << 21) + 5, 0xff), zeros(9001, 0);
	EXPECT_EQ(inet_fold(inet_sum(ones.data(), ones.size())),
		  reference_sum(ones.data(), ones.size(), 0));
	EXPECT_EQ(inet_fold(inet_sum(ones.data() + 1, ones.size() - 1, 7)),
		  reference_sum(ones.data() + 1, ones.size() - 1, 7));
	EXPECT_EQ(inet_fold(inet_sum(zeros.data(), zeros.size())), 0);
}

// Microsoft, "Verifying the RSS Hash Calculation" (RSS specification):
// key 6d5a56da..., hashes of IPv4 and IPv4+TCP inputs.
namespace
{
const uint8_t kMsKey[40] = {0x6d, 0x5a, 0x56, 0xda, 0x25, 0x5b, 0x0e, 0xc2, 0x41, 0x67,
			    0x25, 0x3d, 0x43, 0xa3, 0x8f, 0xb0, 0xd0, 0xca, 0x2b, 0xcb,
			    0xae, 0x7b, 0x30, 0xb4, 0x77, 0xcb, 0x2d, 0xa3, 0x80, 0x30,
			    0xf2, 0x0c, 0x6a, 0x42, 0xb7, 0x3b, 0xbe, 0xac, 0x01, 0xfa};

// A context with the published key and the reset fields (addresses and,
// for TCP, ports).
uint32_t ms_hash(const Parsed &p)
{
	RssContext c;
	std::copy(kMsKey, kMsKey + 40, c.key.begin());
	uint32_t h = 0;
	EXPECT_TRUE(rss_hash(c, p, 0, &h));
	return h;
}

Parsed flow(std::initializer_list<uint8_t> src, std::initializer_list<uint8_t> dst, uint16_t sport,
	    uint16_t dport, bool l4)
{
	Parsed p;
	p.l3 = src.size() == 4 ? L3::Ipv4 : L3::Ipv6;
	p.l4 = l4 ? L4::Tcp : L4::None;
	p.proto = 6;
	std::copy(src.begin(), src.end(), p.src.begin());
	std::copy(dst.begin(), dst.end(), p.dst.begin());
	p.sport = sport;
	p.dport = dport;
	return p;
}
} // namespace

TEST(Rss, MicrosoftIpv4Vectors)
{
	struct V {
		Parsed p;
		uint32_t ip, tcp;
	} vs[] = {
		{flow({66, 9, 149, 187}, {161, 142, 100, 80}, 2794, 1766, true), 0x323e8fc2,
		 0x51ccc178},
		{flow({199, 92, 111, 2}, {65, 69, 140, 83}, 14230, 4739, true), 0xd718262a,
		 0xc626b0ea},
		{flow({24, 19, 198, 95}, {12, 22, 207, 184}, 12898, 38024, true), 0xd2d0a5de,
		 0x5c2b394a},
		{flow({38, 27, 205, 30}, {209, 142, 163, 6}, 48228, 2217, true), 0x82989176,
		 0xafc7327f},
		{flow({153, 39, 163, 191}, {202, 188, 127, 2}, 44251, 1303, true), 0x5d1809c5,
		 0x10e828a2},
	};
	for (auto &v : vs) {
		EXPECT_EQ(ms_hash(v.p), v.tcp);
		Parsed ip = v.p;
		ip.l4 = L4::None;
		EXPECT_EQ(ms_hash(ip), v.ip);
	}
}

TEST(Rss, MicrosoftIpv6Vector)
{
	// Source 3ffe:2501:200:1fff::7 port 2794, destination 3ffe:2501:200:3::1
	// port 1766.
	Parsed p = flow({0x3f, 0xfe, 0x25, 0x01, 0x02, 0x00, 0x1f, 0xff, 0, 0, 0, 0, 0, 0, 0, 7},
			{0x3f, 0xfe, 0x25, 0x01, 0x02, 0x00, 0x00, 0x03, 0, 0, 0, 0, 0, 0, 0, 1},
			2794, 1766, true);
	EXPECT_EQ(ms_hash(p), 0x40207d3du);
	p.l4 = L4::None;
	EXPECT_EQ(ms_hash(p), 0x2cc18cd5u);
}

TEST(Steering, MasksMatchAndNonIpNeverMatches)
{
	auto f = build(Spec{});
	Parsed p = parse_frame(f.data(), f.size());
	NtupleRule r;
	r.valid = true;
	r.proto = 6;
	r.queue = 2;
	r.dport = 80;
	r.dport_mask = 0xffff;
	EXPECT_TRUE(ntuple_match(r, p));
	r.dport = 81;
	EXPECT_FALSE(ntuple_match(r, p));
	r.dport_mask = 0; // wildcard port
	r.dst = {10, 0, 0, 2};
	r.dst_mask = {255, 255, 255, 255};
	EXPECT_TRUE(ntuple_match(r, p));
	r.dst[3] = 3;
	EXPECT_FALSE(ntuple_match(r, p));
	r.dst_mask = {255, 255, 255, 0};
	EXPECT_TRUE(ntuple_match(r, p));
	r.proto = 17;
	EXPECT_FALSE(ntuple_match(r, p));
	r.proto = 6;
	r.ipv6 = true;
	EXPECT_FALSE(ntuple_match(r, p));
}
