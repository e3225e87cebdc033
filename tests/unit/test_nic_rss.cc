// SPDX-License-Identifier: MIT
// The NIC's RSS (v1.6) through the C ABI with a fake host: the hash of each
// flow class under every field selection against an independent Toeplitz
// reference, the IPv6 flow label, symmetric transforms, contexts with
// their own key, table and size, flow steering rules to a context, and
// refused register writes.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
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
constexpr uint64_t kRam = fake_host::kRamBase;
constexpr unsigned kQueues = 4, kLog2 = 6, kRing = 64, kPbuf = 2048;

uint64_t ring_base(unsigned q)
{
	return kRam + q * 0x100000ull;
}
// Payload buffer ring, completion ring, buffers of queue q.
uint64_t pbuf_ring(unsigned q)
{
	return ring_base(q);
}
uint64_t cmpl_ring(unsigned q)
{
	return ring_base(q) + 0x1000;
}
uint64_t hbuf_ring(unsigned q)
{
	return ring_base(q) + 0x2000;
}
uint64_t bufs(unsigned q)
{
	return ring_base(q) + 0x10000;
}

// Toeplitz by its definition, bit by bit: for every set bit i of the
// input (most significant first), XOR in the 32 key bits from bit i on.
uint32_t reference_toeplitz(const uint8_t *key, size_t key_len, const std::vector<uint8_t> &in)
{
	auto key_bit = [&](size_t i) {
		return i / 8 < key_len ? key[i / 8] >> (7 - i % 8) & 1 : 0;
	};
	uint32_t hash = 0;
	for (size_t i = 0; i < 8 * in.size(); i++) {
		if (!(in[i / 8] >> (7 - i % 8) & 1))
			continue;
		uint32_t window = 0;
		for (size_t b = 0; b < 32; b++)
			window = window << 1 | key_bit(i + b);
		hash ^= window;
	}
	return hash;
}

struct Flow {
	bool ipv6 = false;
	uint8_t proto = 6; // 6 TCP, 17 UDP, 47 (GRE): neither
	uint8_t src[16] = {192, 168, 7, 1}, dst[16] = {10, 1, 2, 3};
	uint16_t sport = 40000, dport = 5201;
	uint32_t label = 0;
	unsigned cls() const
	{
		unsigned c = proto == 6	   ? DMS_NIC_RSS_CLASS_TCP4
			     : proto == 17 ? DMS_NIC_RSS_CLASS_UDP4
					   : DMS_NIC_RSS_CLASS_IP4;
		return ipv6 ? c + DMS_NIC_RSS_CLASS_TCP6 : c;
	}
	std::vector<uint8_t> frame() const
	{
		frames::Spec s;
		s.ipv6 = ipv6;
		s.proto = proto;
		std::memcpy(s.src, src, 16);
		std::memcpy(s.dst, dst, 16);
		s.sport = sport;
		s.dport = dport;
		std::vector<uint8_t> f = frames::build(s);
		if (ipv6) { // version 6, traffic class 0, the label in bits 19:0
			f[15] = uint8_t(label >> 16 & 0xf);
			f[16] = uint8_t(label >> 8);
			f[17] = uint8_t(label);
		}
		return f;
	}
	Flow swapped() const
	{
		Flow r = *this;
		std::memcpy(r.src, dst, 16);
		std::memcpy(r.dst, src, 16);
		std::swap(r.sport, r.dport);
		return r;
	}
	// The hash input the datasheet describes, built here from the flow.
	std::vector<uint8_t> input(uint32_t fields, uint32_t xfrm) const
	{
		std::vector<uint8_t> in;
		const size_t alen = ipv6 ? 16 : 4;
		const uint8_t sp[2] = {uint8_t(sport >> 8), uint8_t(sport)};
		const uint8_t dp[2] = {uint8_t(dport >> 8), uint8_t(dport)};
		pair(in, src, dst, alen, fields & DMS_NIC_RSS_F_IP_SRC,
		     fields & DMS_NIC_RSS_F_IP_DST, xfrm);
		if (proto == 6 || proto == 17)
			pair(in, sp, dp, 2, fields & DMS_NIC_RSS_F_L4_SRC,
			     fields & DMS_NIC_RSS_F_L4_DST, xfrm);
		if (ipv6 && (fields & DMS_NIC_RSS_F_FLOW_LABEL))
			for (int shift : {24, 16, 8, 0})
				in.push_back(uint8_t(label >> shift));
		return in;
	}
	static void pair(std::vector<uint8_t> &in, const uint8_t *a, const uint8_t *b, size_t n,
			 bool want_a, bool want_b, uint32_t xfrm)
	{
		if (want_a && want_b && xfrm) {
			for (size_t i = 0; i < n; i++)
				in.push_back(xfrm == DMS_NIC_RSS_XFRM_SYM_OR_XOR ? a[i] | b[i]
										 : a[i] ^ b[i]);
			for (size_t i = 0; i < n; i++)
				in.push_back(a[i] ^ b[i]);
			return;
		}
		for (size_t i = 0; want_a && i < n; i++)
			in.push_back(a[i]);
		for (size_t i = 0; want_b && i < n; i++)
			in.push_back(b[i]);
	}
};

struct Rx {
	unsigned queue;
	dms_rx_cmpl c;
};

class NicRss : public NicSuite
{
protected:
	void SetUp() override
	{
		wr(DMS_NIC_REG_CTRL, DMS_NIC_CTRL_RESET);
		fake_host::run_until_idle(node_, 1000);
		host_->clear();
		for (unsigned q = 0; q < kQueues; q++)
			enable(q);
		wr(DMS_NIC_REG_RX_CTRL, DMS_NIC_RX_RSS | DMS_NIC_RX_NTUPLE);
		for (unsigned i = 0; i < DMS_NIC_RSS_KEY_SIZE; i++)
			key_[i] = uint8_t(0x6d + 37 * i);
		set_key(0, key_);
	}
	static void qw(unsigned q, uint32_t off, uint32_t v) { wr(DMS_NIC_Q_BASE(q) + off, v); }
	void enable(unsigned q)
	{
		qw(q, DMS_NIC_RXQ_RING_LOG2, kLog2);
		qw(q, DMS_NIC_RXQ_HBUF_BASE_LO, uint32_t(hbuf_ring(q)));
		qw(q, DMS_NIC_RXQ_PBUF_BASE_LO, uint32_t(pbuf_ring(q)));
		qw(q, DMS_NIC_RXQ_CMPL_BASE_LO, uint32_t(cmpl_ring(q)));
		qw(q, DMS_NIC_RXQ_HBUF_SIZE, 256);
		qw(q, DMS_NIC_RXQ_PBUF_SIZE, kPbuf);
		qw(q, DMS_NIC_RXQ_CTRL, DMS_NIC_Q_ENABLE);
		head_[q] = 0;
		phase_[q] = true;
		posted_[q] = 0;
		for (unsigned i = 0; i < kRing - 1; i++)
			post(q);
	}
	// One more payload buffer on queue q (header split is off: frames go
	// whole to one payload buffer each).
	void post(unsigned q)
	{
		const unsigned s = posted_[q] % kRing;
		dms_rx_buf b{bufs(q) + s * kPbuf, uint16_t(s), {}};
		std::memcpy(host_->at(pbuf_ring(q) + 16 * s), &b, 16);
		posted_[q]++;
		qw(q, DMS_NIC_RXQ_PBUF_TAIL, posted_[q] % kRing);
	}
	bool next(unsigned q, dms_rx_cmpl *c)
	{
		std::memcpy(c, host_->at(cmpl_ring(q) + 32 * head_[q]), 32);
		if (bool(c->flags & DMS_RX_F_GEN) != phase_[q])
			return false;
		if (++head_[q] == kRing) {
			head_[q] = 0;
			phase_[q] = !phase_[q];
		}
		qw(q, DMS_NIC_RXQ_CMPL_HEAD, head_[q]);
		post(q);
		return true;
	}
	// The frame arrives; where it went and its completion.
	Rx receive(const std::vector<uint8_t> &f)
	{
		EXPECT_EQ(dms_nic_receive(node_, f.data(), f.size()), 1);
		fake_host::run_until_idle(node_, 1000);
		Rx r{};
		unsigned found = 0;
		for (unsigned q = 0; q < kQueues; q++) {
			dms_rx_cmpl c;
			while (next(q, &c)) {
				r = {q, c};
				found++;
			}
		}
		EXPECT_EQ(found, 1u);
		return r;
	}
	static void set_key(unsigned ctx, const uint8_t *key)
	{
		wr(DMS_NIC_REG_RSS_CTX_SEL, ctx);
		for (unsigned w = 0; w < DMS_NIC_RSS_KEY_WORDS; w++) {
			const uint8_t *k = key + 4 * w;
			wr(DMS_NIC_REG_RSS_CTX_KEY(w),
			   k[0] | k[1] << 8 | k[2] << 16 | uint32_t(k[3]) << 24);
		}
	}
	static void set_table(unsigned ctx, const std::vector<uint32_t> &t)
	{
		wr(DMS_NIC_REG_RSS_CTX_SEL, ctx);
		wr(DMS_NIC_REG_RSS_CTX_INDIR_SIZE, uint32_t(t.size()));
		for (size_t i = 0; i < t.size(); i++)
			wr(DMS_NIC_REG_RSS_CTX_INDIR(i), t[i]);
	}
	// Flow steering rule at index idx: TCP/IPv4 to dport, queue + context.
	static void rule_to_context(unsigned idx, uint16_t dport, unsigned queue, uint32_t nt_ctx)
	{
		wr(DMS_NIC_REG_NT_CTRL, DMS_NIC_NT_VALID | 6 << DMS_NIC_NT_PROTO_SHIFT |
						queue << DMS_NIC_NT_QUEUE_SHIFT);
		wr(DMS_NIC_REG_NT_PORTS, dport);
		wr(DMS_NIC_REG_NT_PORT_MASK, 0xffff);
		wr(DMS_NIC_REG_RSS_NT_CTX, nt_ctx);
		wr(DMS_NIC_REG_NT_COMMIT, idx);
	}

	uint8_t key_[DMS_NIC_RSS_KEY_SIZE];
	unsigned head_[kQueues], posted_[kQueues];
	bool phase_[kQueues];
};

std::vector<Flow> one_flow_per_class()
{
	std::vector<Flow> flows;
	for (bool v6 : {false, true})
		for (uint8_t proto : {6, 17, 47}) {
			Flow f;
			f.ipv6 = v6;
			f.proto = proto;
			if (v6) {
				const uint8_t s[16] = {0xfd, 0, 0, 0, 0, 0, 0, 0,
						       0,    0, 0, 0, 0, 0, 0, 1};
				const uint8_t d[16] = {0x20, 0x01, 0x0d, 0xb8, 0x12, 0x34, 0, 0,
						       0,    0,	   0,	 0,    0xab, 0xcd, 0, 2};
				std::memcpy(f.src, s, 16);
				std::memcpy(f.dst, d, 16);
				f.label = 0xbeef5;
			}
			flows.push_back(f);
		}
	return flows;
}

} // namespace

TEST_F(NicRss, ResetStateAndCapabilities)
{
	EXPECT_GE(rd(DMS_NIC_REG_VERSION), 0x00010007u);
	const uint32_t caps = DMS_NIC_CAP_RSS_CTX | DMS_NIC_CAP_RSS_FIELDS | DMS_NIC_CAP_RSS_SYM;
	EXPECT_EQ(rd(DMS_NIC_REG_CAPS) & caps, caps);
	EXPECT_EQ(rd(DMS_NIC_REG_RSS_CTX_NUM), uint32_t(DMS_NIC_RSS_CONTEXTS));
	for (unsigned ctx : {0u, 1u, DMS_NIC_RSS_CONTEXTS - 1u}) {
		wr(DMS_NIC_REG_RSS_CTX_SEL, ctx);
		EXPECT_EQ(rd(DMS_NIC_REG_RSS_CTX_SEL), ctx);
		EXPECT_EQ(rd(DMS_NIC_REG_RSS_CTX_INDIR_SIZE), uint32_t(DMS_NIC_RSS_INDIR_SIZE));
		EXPECT_EQ(rd(DMS_NIC_REG_RSS_CTX_XFRM), uint32_t(DMS_NIC_RSS_XFRM_NONE));
		const uint32_t all = DMS_NIC_RSS_F_IP_SRC | DMS_NIC_RSS_F_IP_DST |
				     DMS_NIC_RSS_F_L4_SRC | DMS_NIC_RSS_F_L4_DST;
		EXPECT_EQ(rd(DMS_NIC_REG_RSS_CTX_FIELDS(DMS_NIC_RSS_CLASS_TCP4)), all);
		EXPECT_EQ(rd(DMS_NIC_REG_RSS_CTX_FIELDS(DMS_NIC_RSS_CLASS_UDP6)), all);
		EXPECT_EQ(rd(DMS_NIC_REG_RSS_CTX_FIELDS(DMS_NIC_RSS_CLASS_IP6)),
			  DMS_NIC_RSS_F_IP_SRC | DMS_NIC_RSS_F_IP_DST);
	}
	// Context 0's window and RSS_KEY/RSS_INDIR are one key and one table.
	wr(DMS_NIC_REG_RSS_CTX_SEL, 0);
	wr(DMS_NIC_REG_RSS_INDIR(7), 3);
	EXPECT_EQ(rd(DMS_NIC_REG_RSS_CTX_INDIR(7)), 3u);
	wr(DMS_NIC_REG_RSS_CTX_KEY(2), 0x01020304);
	EXPECT_EQ(rd(DMS_NIC_REG_RSS_KEY(2)), 0x01020304u);
	// A reset puts every context back.
	wr(DMS_NIC_REG_RSS_CTX_SEL, 9);
	wr(DMS_NIC_REG_RSS_CTX_INDIR_SIZE, 8);
	wr(DMS_NIC_REG_RSS_CTX_KEY(0), 0xffffffff);
	wr(DMS_NIC_REG_CTRL, DMS_NIC_CTRL_RESET);
	EXPECT_EQ(rd(DMS_NIC_REG_RSS_CTX_SEL), 0u);
	wr(DMS_NIC_REG_RSS_CTX_SEL, 9);
	EXPECT_EQ(rd(DMS_NIC_REG_RSS_CTX_INDIR_SIZE), uint32_t(DMS_NIC_RSS_INDIR_SIZE));
	EXPECT_EQ(rd(DMS_NIC_REG_RSS_CTX_KEY(0)), 0u);
	EXPECT_EQ(rd(DMS_NIC_REG_RSS_INDIR(7)), 0u);
}

TEST_F(NicRss, HashOfEveryFieldSelectionMatchesTheReference)
{
	unsigned frames = 0;
	for (const Flow &flow : one_flow_per_class()) {
		const unsigned cls = flow.cls();
		const uint32_t valid =
			DMS_NIC_RSS_F_IP_SRC | DMS_NIC_RSS_F_IP_DST |
			(flow.proto == 47 ? 0 : DMS_NIC_RSS_F_L4_SRC | DMS_NIC_RSS_F_L4_DST) |
			(flow.ipv6 ? DMS_NIC_RSS_F_FLOW_LABEL : 0);
		wr(DMS_NIC_REG_RSS_CTX_SEL, 0);
		wr(DMS_NIC_REG_RSS_CTX_FIELDS(cls), 0xffffffff);
		EXPECT_EQ(rd(DMS_NIC_REG_RSS_CTX_FIELDS(cls)), valid) << "class " << cls;
		for (uint32_t fields = 0; fields <= valid; fields++) {
			if (fields & ~valid)
				continue;
			wr(DMS_NIC_REG_RSS_CTX_FIELDS(cls), fields);
			Rx r = receive(flow.frame());
			frames++;
			const std::vector<uint8_t> in = flow.input(fields, DMS_NIC_RSS_XFRM_NONE);
			if (in.empty()) {
				EXPECT_FALSE(r.c.flags & DMS_RX_F_RSS) << "class " << cls;
				continue;
			}
			ASSERT_TRUE(r.c.flags & DMS_RX_F_RSS)
				<< "class " << cls << " fields " << fields;
			EXPECT_EQ(r.c.rss_hash, reference_toeplitz(key_, sizeof(key_), in))
				<< "class " << cls << " fields " << fields;
		}
	}
	EXPECT_EQ(frames, 16u + 16u + 4u + 32u + 32u + 8u);
}

TEST_F(NicRss, FlowLabelSeparatesFlowsOfOneTuple)
{
	Flow a = one_flow_per_class()[4]; // UDP/IPv6
	ASSERT_EQ(a.cls(), unsigned(DMS_NIC_RSS_CLASS_UDP6));
	Flow b = a;
	b.label = 0x12345;
	const uint32_t hash_a = receive(a.frame()).c.rss_hash;
	EXPECT_EQ(receive(b.frame()).c.rss_hash, hash_a); // label not hashed by default
	wr(DMS_NIC_REG_RSS_CTX_FIELDS(DMS_NIC_RSS_CLASS_UDP6),
	   DMS_NIC_RSS_F_IP_SRC | DMS_NIC_RSS_F_IP_DST | DMS_NIC_RSS_F_FLOW_LABEL);
	const uint32_t with_a = receive(a.frame()).c.rss_hash;
	const uint32_t with_b = receive(b.frame()).c.rss_hash;
	EXPECT_NE(with_a, with_b);
	const uint32_t f = DMS_NIC_RSS_F_IP_SRC | DMS_NIC_RSS_F_IP_DST | DMS_NIC_RSS_F_FLOW_LABEL;
	EXPECT_EQ(with_b, reference_toeplitz(key_, sizeof(key_), b.input(f, 0)));
	// IPv4 classes have no label: the bit is dropped.
	wr(DMS_NIC_REG_RSS_CTX_FIELDS(DMS_NIC_RSS_CLASS_UDP4), 0x1f);
	EXPECT_EQ(rd(DMS_NIC_REG_RSS_CTX_FIELDS(DMS_NIC_RSS_CLASS_UDP4)), 0xfu);
}

// v1.7: with the key's bytes 40..51 (KEY_EXT) the label reaches the hash's
// low bits and so the queue; with the 40-byte v1.6 key it never did (the
// input is 40 bytes: its last 4 need key bytes up to 43).
TEST_F(NicRss, FlowLabelChangesTheQueueWithA52ByteKey)
{
	ASSERT_TRUE(rd(DMS_NIC_REG_CAPS) & DMS_NIC_CAP_RSS_KEY52);
	uint8_t key[DMS_NIC_RSS_KEY52_SIZE];
	std::memcpy(key, key_, sizeof(key_));
	for (unsigned i = DMS_NIC_RSS_KEY_SIZE; i < sizeof(key); i++)
		key[i] = uint8_t(0x3b + 91 * i);
	wr(DMS_NIC_REG_RSS_CTX_SEL, 0);
	for (unsigned w = 0; w < DMS_NIC_RSS_KEY_EXT_WORDS; w++) {
		const uint8_t *k = key + DMS_NIC_RSS_KEY_SIZE + 4 * w;
		const uint32_t v = k[0] | k[1] << 8 | k[2] << 16 | uint32_t(k[3]) << 24;
		wr(DMS_NIC_REG_RSS_CTX_KEY_EXT(w), v);
		EXPECT_EQ(rd(DMS_NIC_REG_RSS_CTX_KEY_EXT(w)), v);
	}
	const uint32_t f = DMS_NIC_RSS_F_IP_SRC | DMS_NIC_RSS_F_IP_DST | DMS_NIC_RSS_F_L4_SRC |
			   DMS_NIC_RSS_F_L4_DST | DMS_NIC_RSS_F_FLOW_LABEL;
	wr(DMS_NIC_REG_RSS_CTX_FIELDS(DMS_NIC_RSS_CLASS_UDP6), f);
	set_table(0, {0, 1, 2, 3});
	Flow flow = one_flow_per_class()[4]; // UDP/IPv6: one 4-tuple, labels vary
	bool seen[kQueues] = {};
	for (uint32_t label = 0x1234; label < 0x1234 + 16 * 0x9e37; label += 0x9e37) {
		flow.label = label & 0xfffff;
		const uint32_t hash = reference_toeplitz(key, sizeof(key), flow.input(f, 0));
		Rx r = receive(flow.frame());
		EXPECT_EQ(r.c.rss_hash, hash) << "label " << flow.label;
		EXPECT_EQ(r.queue, hash % 4) << "label " << flow.label;
		seen[r.queue] = true;
	}
	EXPECT_EQ(std::count(seen, seen + kQueues, true), int(kQueues));
	// A reset clears the extension with the rest of the key.
	wr(DMS_NIC_REG_CTRL, DMS_NIC_CTRL_RESET);
	EXPECT_EQ(rd(DMS_NIC_REG_RSS_CTX_KEY_EXT(0)), 0u);
}

TEST_F(NicRss, SymmetricTransformsHashBothDirectionsAlike)
{
	for (uint32_t xfrm : {DMS_NIC_RSS_XFRM_SYM_XOR, DMS_NIC_RSS_XFRM_SYM_OR_XOR}) {
		wr(DMS_NIC_REG_RSS_CTX_SEL, 0);
		wr(DMS_NIC_REG_RSS_CTX_XFRM, xfrm);
		EXPECT_EQ(rd(DMS_NIC_REG_RSS_CTX_XFRM), xfrm);
		for (const Flow &flow : one_flow_per_class()) {
			const uint32_t fields = rd(DMS_NIC_REG_RSS_CTX_FIELDS(flow.cls()));
			const uint32_t there = receive(flow.frame()).c.rss_hash;
			const uint32_t back = receive(flow.swapped().frame()).c.rss_hash;
			EXPECT_EQ(there, back) << "xfrm " << xfrm << " class " << flow.cls();
			EXPECT_EQ(there,
				  reference_toeplitz(key_, sizeof(key_), flow.input(fields, xfrm)))
				<< "xfrm " << xfrm << " class " << flow.cls();
		}
	}
	// Without a transform the two directions differ.
	wr(DMS_NIC_REG_RSS_CTX_XFRM, DMS_NIC_RSS_XFRM_NONE);
	Flow f;
	EXPECT_NE(receive(f.frame()).c.rss_hash, receive(f.swapped().frame()).c.rss_hash);
	// One half of a pair alone is hashed as it is, transform or not.
	wr(DMS_NIC_REG_RSS_CTX_XFRM, DMS_NIC_RSS_XFRM_SYM_XOR);
	wr(DMS_NIC_REG_RSS_CTX_FIELDS(DMS_NIC_RSS_CLASS_TCP4), DMS_NIC_RSS_F_IP_SRC);
	EXPECT_EQ(receive(f.frame()).c.rss_hash,
		  reference_toeplitz(key_, sizeof(key_), f.input(DMS_NIC_RSS_F_IP_SRC, 0)));
}

TEST_F(NicRss, TableSizeSelectsTheEntry)
{
	set_table(0, {3, 2, 1, 0});
	Flow f;
	for (uint16_t port = 1000; port < 1016; port++) {
		f.sport = port;
		const uint32_t fields = rd(DMS_NIC_REG_RSS_CTX_FIELDS(DMS_NIC_RSS_CLASS_TCP4));
		const uint32_t hash = reference_toeplitz(key_, sizeof(key_), f.input(fields, 0));
		Rx r = receive(f.frame());
		EXPECT_EQ(r.c.rss_hash, hash);
		EXPECT_EQ(r.queue, 3 - hash % 4) << "port " << port;
	}
}

TEST_F(NicRss, RuleSteersToAContextWithItsOwnKeyAndTable)
{
	set_table(0, {0}); // everything else: queue 0
	uint8_t key5[DMS_NIC_RSS_KEY_SIZE];
	for (unsigned i = 0; i < sizeof(key5); i++)
		key5[i] = uint8_t(0xa5 ^ (11 * i));
	set_key(5, key5);
	set_table(5, {0, 1}); // plus the rule's queue 1: queues 1 and 2
	rule_to_context(3, 5201, 1, DMS_NIC_RSS_NT_EN | 5);
	EXPECT_EQ(rd(DMS_NIC_REG_RSS_NT_CTX), DMS_NIC_RSS_NT_EN | 5u);
	unsigned seen[kQueues] = {};
	Flow f;
	for (uint16_t port = 2000; port < 2032; port++) {
		f.sport = port;
		const uint32_t fields = rd(DMS_NIC_REG_RSS_CTX_FIELDS(DMS_NIC_RSS_CLASS_TCP4));
		const uint32_t hash = reference_toeplitz(key5, sizeof(key5), f.input(fields, 0));
		Rx r = receive(f.frame());
		EXPECT_EQ(r.c.rss_hash, hash) << "context 5's key";
		EXPECT_EQ(r.queue, 1 + hash % 2) << "port " << port;
		seen[r.queue]++;
	}
	EXPECT_GT(seen[1], 0u);
	EXPECT_GT(seen[2], 0u);
	f.dport = 80; // no rule: context 0
	EXPECT_EQ(receive(f.frame()).queue, 0u);
	// A rule to a queue (no context) keeps working beside it.
	rule_to_context(4, 80, 3, 0);
	EXPECT_EQ(receive(f.frame()).queue, 3u);
	// Queue + entry beyond the queues: queue 0.
	set_table(5, {dms_nic_num_queues(node_)});
	f.dport = 5201;
	EXPECT_EQ(receive(f.frame()).queue, 0u);
}

TEST_F(NicRss, RefusedWritesChangeNothingAndCount)
{
	const uint32_t err = rd(DMS_NIC_REG_RSS_ERR);
	wr(DMS_NIC_REG_RSS_CTX_SEL, 2);
	wr(DMS_NIC_REG_RSS_CTX_SEL, DMS_NIC_RSS_CONTEXTS);
	wr(DMS_NIC_REG_RSS_CTX_SEL, 0xffffffff);
	EXPECT_EQ(rd(DMS_NIC_REG_RSS_CTX_SEL), 2u);
	for (uint32_t bad : {0u, 3u, 12u, 256u, 0x80000000u})
		wr(DMS_NIC_REG_RSS_CTX_INDIR_SIZE, bad);
	EXPECT_EQ(rd(DMS_NIC_REG_RSS_CTX_INDIR_SIZE), uint32_t(DMS_NIC_RSS_INDIR_SIZE));
	wr(DMS_NIC_REG_RSS_CTX_INDIR_SIZE, 1);
	EXPECT_EQ(rd(DMS_NIC_REG_RSS_CTX_INDIR_SIZE), 1u);
	wr(DMS_NIC_REG_RSS_CTX_XFRM, 3);
	EXPECT_EQ(rd(DMS_NIC_REG_RSS_CTX_XFRM), uint32_t(DMS_NIC_RSS_XFRM_NONE));
	// A rule naming a context the NIC does not have is not committed.
	set_table(0, {0});
	rule_to_context(0, 5201, 2, DMS_NIC_RSS_NT_EN | DMS_NIC_RSS_CONTEXTS);
	EXPECT_EQ(rd(DMS_NIC_REG_RSS_ERR) - err, 2u + 5u + 1u + 1u);
	EXPECT_EQ(receive(Flow{}.frame()).queue, 0u);
	// Huge table entries and queue numbers do not wrap into a queue.
	wr(DMS_NIC_REG_RSS_CTX_SEL, 1);
	wr(DMS_NIC_REG_RSS_CTX_INDIR_SIZE, 1);
	wr(DMS_NIC_REG_RSS_CTX_INDIR(0), 0xffffffff);
	rule_to_context(0, 5201, 0xffff, DMS_NIC_RSS_NT_EN | 1);
	EXPECT_EQ(receive(Flow{}.frame()).queue, 0u);
	// Indexes beyond the window are not registers.
	EXPECT_EQ(rd(DMS_NIC_REG_RSS_CTX_FIELDS(DMS_NIC_RSS_CLASSES)), DMS_REG_UNDEFINED);
}
