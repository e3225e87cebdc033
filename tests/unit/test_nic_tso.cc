// SPDX-License-Identifier: MIT
// TX segmentation (TSO, USO; datasheet "Segmentation") through the C ABI
// with a fake host: segment boundaries, IPv4/IPv6 TCP, UDP GSO, payload in
// GPU memory, refused requests, and the TX engine's work budget. Expected
// segments are built here, with their own RFC 1071 checksum code.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include "devmemsim/devmemsim.h"
#include "devmemsim/nic_desc.h"
#include "devmemsim/nic_regs.h"
#include "devmemsim/pci_ids.h"
#include "fake_host.h"
#include "frames.h"

namespace
{

using fake_host::Host;
using Frame = std::vector<uint8_t>;
constexpr uint64_t kRam = fake_host::kRamBase;
constexpr uint64_t kDesc = kRam, kCmpl = kRam + 0x1000, kData = kRam + 0x10000;
constexpr uint64_t kBar = 0x800000000; // the GPU's memory BAR
constexpr unsigned kLog2 = 6, kRing = 1u << kLog2;

// RFC 1071, one 16-bit word at a time (independent of the model's csum.cc).
uint32_t ref_sum(const uint8_t *p, size_t n, uint32_t s = 0)
{
	for (size_t i = 0; i + 1 < n; i += 2)
		s += uint32_t(p[i] << 8 | p[i + 1]);
	if (n & 1)
		s += uint32_t(p[n - 1] << 8);
	return s;
}

uint16_t ref_csum(uint32_t s)
{
	while (s >> 16)
		s = (s & 0xffff) + (s >> 16);
	return uint16_t(~s);
}

void put16(Frame &f, size_t at, unsigned v)
{
	frames::put16(f, at, v);
}

unsigned get16(const Frame &f, size_t at)
{
	return unsigned(f[at] << 8 | f[at + 1]);
}

// Where the headers of a frames::build() frame are.
struct Layout {
	size_t l3, l4, hdr;
	bool v6, udp;
};

Layout layout(const frames::Spec &s)
{
	const size_t l3 = 14 + 4 * s.vlans;
	const size_t l4 = l3 + (s.ipv6 ? 40 : 20 + s.ip_options);
	return {l3, l4, l4 + (s.proto == 17 ? 8 : 20 + s.tcp_options), s.ipv6, s.proto == 17};
}

// Segment i of super-frame f as the datasheet defines it.
Frame expected(const Frame &f, const Layout &L, size_t mss, size_t i, size_t segs)
{
	const size_t n = std::min(mss, f.size() - L.hdr - i * mss);
	Frame s(f.begin(), f.begin() + L.hdr);
	s.insert(s.end(), f.begin() + L.hdr + i * mss, f.begin() + L.hdr + i * mss + n);
	if (L.v6) {
		put16(s, L.l3 + 4, unsigned(s.size() - L.l3 - 40));
	} else {
		put16(s, L.l3 + 2, unsigned(s.size() - L.l3));
		put16(s, L.l3 + 4, (get16(f, L.l3 + 4) + i) & 0xffff);
		put16(s, L.l3 + 10, 0);
		put16(s, L.l3 + 10, ref_csum(ref_sum(&s[L.l3], L.l4 - L.l3)));
	}
	const size_t check = L.l4 + (L.udp ? 6 : 16);
	if (L.udp) {
		put16(s, L.l4 + 4, unsigned(s.size() - L.l4));
	} else {
		uint32_t seq = uint32_t(get16(f, L.l4 + 4) << 16 | get16(f, L.l4 + 6));
		seq += uint32_t(i * mss);
		put16(s, L.l4 + 4, seq >> 16);
		put16(s, L.l4 + 6, seq & 0xffff);
		if (i + 1 < segs)
			s[L.l4 + 13] &= uint8_t(~0x09); // FIN, PSH
		if (i)
			s[L.l4 + 13] &= uint8_t(~0x80); // CWR
	}
	put16(s, check, 0);
	const size_t alen = L.v6 ? 16 : 4, seg = s.size() - L.l4;
	uint32_t sum = ref_sum(&s[L.l3 + (L.v6 ? 8 : 12)], 2 * alen);
	sum += (L.udp ? 17 : 6) + uint32_t(seg);
	uint16_t c = ref_csum(ref_sum(&s[L.l4], seg, sum));
	put16(s, check, c || !L.udp ? c : 0xffff);
	return s;
}

class NicTso : public ::testing::Test
{
protected:
	static void SetUpTestSuite()
	{
		char err[256] = "";
		node_ = dms_node_new(nullptr, err, sizeof(err));
		ASSERT_NE(node_, nullptr) << err;
		host_ = new Host;
		host_->attach(node_, DMS_DEV_NIC);
		host_->attach(node_, DMS_DEV_GPU);
		gpu_mem_ = new std::vector<uint8_t>(dms_gpu_mem_size(node_));
		dms_gpu_set_memory(node_, gpu_mem_->data());
		dms_set_bar(node_, DMS_DEV_GPU, DMS_GPU_BAR_MEM, kBar, gpu_mem_->size());
		dms_node_step(node_, 0);
	}
	void SetUp() override
	{
		wr(DMS_NIC_REG_CTRL, DMS_NIC_CTRL_RESET);
		run();
		dms_node_reset_stats(node_);
		host_->clear();
		qw(DMS_NIC_TXQ_RING_LOG2, kLog2);
		qw(DMS_NIC_TXQ_DESC_BASE_LO, uint32_t(kDesc));
		qw(DMS_NIC_TXQ_CMPL_BASE_LO, uint32_t(kCmpl));
		qw(DMS_NIC_TXQ_CTRL, DMS_NIC_Q_ENABLE);
		tail_ = 0;
		data_ = kData;
		cmpl_ = 0;
	}
	static uint32_t rd(uint32_t off)
	{
		return uint32_t(dms_reg_read(node_, DMS_DEV_NIC, off, 4));
	}
	static void wr(uint32_t off, uint32_t v) { dms_reg_write(node_, DMS_DEV_NIC, off, v, 4); }
	static void qw(uint32_t off, uint32_t v) { wr(DMS_NIC_Q_BASE(0) + off, v); }
	static void run() { fake_host::run_until_idle(node_, 100000); }
	static std::string stats() { return dms_node_stats_json(node_); }

	void put_desc(const void *d)
	{
		std::memcpy(host_->at(kDesc + 16 * (tail_ % kRing)), d, 16);
		tail_++;
	}
	// Bytes at a bus address: guest RAM, or GPU memory behind the BAR.
	uint8_t *bytes(uint64_t addr)
	{
		return addr >= kBar ? &(*gpu_mem_)[addr - kBar] : host_->at(addr);
	}
	// Post f as one chain (a segmentation descriptor first if mss), cut at
	// cuts; buffers from cut `gpu_from` on go to GPU memory. Not rung.
	void post(const Frame &f, unsigned mss, unsigned hdr_len, uint16_t kind,
		  std::vector<size_t> cuts = {}, size_t gpu_from = ~size_t(0))
	{
		if (mss) {
			dms_tx_seg_desc sd{};
			sd.mss = uint16_t(mss);
			sd.hdr_len = uint16_t(hdr_len);
			sd.flags = uint16_t(DMS_TX_F_SEG | kind);
			put_desc(&sd);
		}
		cuts.insert(cuts.begin(), 0);
		cuts.push_back(f.size());
		for (size_t i = 0; i + 1 < cuts.size(); i++) {
			const size_t len = cuts[i + 1] - cuts[i];
			const uint64_t a = i >= gpu_from ? kBar + (data_ - kData) : data_;
			data_ += (len + 63) & ~size_t(63);
			std::memcpy(bytes(a), f.data() + cuts[i], len);
			dms_tx_desc d{a, uint32_t(len),
				      uint16_t((i == 0 ? DMS_TX_F_SOP : 0) |
					       (i + 2 == cuts.size() ? DMS_TX_F_EOP : 0)),
				      uint16_t(tail_ % kRing)};
			put_desc(&d);
		}
	}
	void ring() { qw(DMS_NIC_TXQ_TAIL, tail_ % kRing); }
	// Flags of the next TX completion (0: none written).
	uint16_t next_cmpl()
	{
		dms_tx_cmpl c;
		std::memcpy(&c, host_->at(kCmpl + 8 * cmpl_), 8);
		if (!(c.flags & DMS_TX_C_GEN))
			return 0;
		cmpl_++;
		return c.flags;
	}
	// Send f segmented and check every wire frame against expected().
	void check_segments(const Frame &f, const frames::Spec &s, unsigned mss, uint16_t kind,
			    std::vector<size_t> cuts = {}, size_t gpu_from = ~size_t(0))
	{
		const Layout L = layout(s);
		post(f, mss, unsigned(L.hdr), kind, cuts, gpu_from);
		ring();
		run();
		const size_t pay = f.size() - L.hdr, segs = (pay + mss - 1) / mss;
		ASSERT_EQ(host_->sent.size(), segs) << stats();
		for (size_t i = 0; i < segs; i++)
			EXPECT_EQ(host_->sent[i], expected(f, L, mss, i, segs)) << "segment " << i;
		EXPECT_EQ(next_cmpl(), DMS_TX_C_GEN);
		EXPECT_EQ(next_cmpl(), 0);
		EXPECT_EQ(rd(DMS_NIC_REG_TSO_SUPER), 1u);
		EXPECT_EQ(rd(DMS_NIC_REG_TSO_WIRE), segs);
		EXPECT_EQ(rd(DMS_NIC_REG_TSO_ERR), 0u);
	}

	static dms_node *node_;
	static Host *host_;
	static std::vector<uint8_t> *gpu_mem_;
	uint32_t tail_ = 0, cmpl_ = 0;
	uint64_t data_ = kData;
};
dms_node *NicTso::node_;
Host *NicTso::host_;
std::vector<uint8_t> *NicTso::gpu_mem_;

// A super-frame: frames::build() with TCP flags, sequence number and IPv4
// ID near their wrap, and a stale L4 checksum the NIC must not trust.
Frame super_frame(const frames::Spec &s)
{
	Frame f = frames::build(s);
	const Layout L = layout(s);
	if (!L.v6)
		put16(f, L.l3 + 4, 0xfffe);
	if (!L.udp) {
		put16(f, L.l4 + 4, 0xffff);
		put16(f, L.l4 + 6, 0xf000);
		f[L.l4 + 13] = 0x80 | 0x10 | 0x08 | 0x01; // CWR ACK PSH FIN
	}
	f[L.l4 + (L.udp ? 6 : 16)] ^= 0x5a;
	return f;
}

frames::Spec spec(size_t payload, bool v6, uint8_t proto)
{
	frames::Spec s;
	s.payload = payload;
	s.ipv6 = v6;
	s.proto = proto;
	if (v6) {
		std::fill(s.src, s.src + 16, 0x20);
		std::fill(s.dst, s.dst + 16, 0x30);
	}
	return s;
}

} // namespace

TEST_F(NicTso, AdvertisesTsoAndUso)
{
	EXPECT_GE(rd(DMS_NIC_REG_VERSION), 0x00010005u);
	EXPECT_EQ(rd(DMS_NIC_REG_CAPS) & (DMS_NIC_CAP_TSO | DMS_NIC_CAP_USO),
		  DMS_NIC_CAP_TSO | DMS_NIC_CAP_USO);
}

TEST_F(NicTso, TcpV4PayloadAnExactMultipleOfMss)
{
	frames::Spec s = spec(4 * 1000, false, 6);
	check_segments(super_frame(s), s, 1000, DMS_TX_SEG_TCP4, {54, 2000});
}

TEST_F(NicTso, TcpV4OptionsAndAShortLastSegment)
{
	frames::Spec s = spec(4500, false, 6);
	s.ip_options = 4;
	s.tcp_options = 12;
	s.vlans = 1;
	check_segments(super_frame(s), s, 1400, DMS_TX_SEG_TCP4, {30, 100, 3001});
}

TEST_F(NicTso, PayloadBelowMssIsOneSegment)
{
	frames::Spec s = spec(500, false, 6);
	check_segments(super_frame(s), s, 1448, DMS_TX_SEG_TCP4);
}

TEST_F(NicTso, TcpV6FullSuperFrame)
{
	wr(DMS_NIC_REG_MTU, 1500);
	frames::Spec s = spec(65536, true, 6);
	s.tcp_options = 12;
	std::vector<size_t> cuts;
	for (size_t c = 86; c < 65536; c += 4096)
		cuts.push_back(c);
	check_segments(super_frame(s), s, 1428, DMS_TX_SEG_TCP6, cuts);
}

TEST_F(NicTso, UdpGsoV4)
{
	frames::Spec s = spec(1400 * 10 + 500, false, 17);
	check_segments(super_frame(s), s, 1400, DMS_TX_SEG_UDP, {42});
}

TEST_F(NicTso, UdpGsoV6)
{
	frames::Spec s = spec(1400 * 5, true, 17);
	check_segments(super_frame(s), s, 1400, DMS_TX_SEG_UDP, {62, 5000});
}

// Devmem TX: headers in host memory, payload buffers in GPU memory.
TEST_F(NicTso, PayloadInGpuMemory)
{
	wr(DMS_NIC_REG_MTU, 9000);
	frames::Spec s = spec(30000, false, 6);
	check_segments(super_frame(s), s, 8948, DMS_TX_SEG_TCP4, {54, 10054, 20054}, 1);
}

TEST_F(NicTso, RefusedRequestsAreCountedAndDropped)
{
	frames::Spec s = spec(3000, false, 6);
	const Frame f = super_frame(s);
	frames::Spec s6 = spec(3000, true, 6);
	frames::Spec icmp = spec(3000, false, 1);
	frames::Spec frag = spec(3000, false, 6);
	frag.frag = 0x2000;				      // MF
	post(f, 1, 54, DMS_TX_SEG_TCP4);		      // MSS absurdly small
	post(f, 1448, 50, DMS_TX_SEG_TCP4);		      // header length short
	post(f, 1448, 58, DMS_TX_SEG_TCP4);		      // ... or long
	post(f, 1448, 54, DMS_TX_SEG_TCP6);		      // kind is not the headers'
	post(f, 1448, 54, DMS_TX_SEG_TCP4 | DMS_TX_SEG_UDP);  // two kinds
	post(f, 1448, 54, DMS_TX_SEG_TCP4 | DMS_TX_F_SOP);    // a buffer flag
	post(super_frame(s6), 1448, 74, DMS_TX_SEG_TCP4);     // IPv6 asked as IPv4
	post(frames::build(icmp), 1448, 42, DMS_TX_SEG_TCP4); // no TCP/UDP
	post(super_frame(frag), 1448, 54, DMS_TX_SEG_TCP4);   // a fragment
	post(f, 1480, 54, DMS_TX_SEG_TCP4);		      // segments beyond the MTU
	post(Frame(f.begin(), f.begin() + 54), 1448, 54, DMS_TX_SEG_TCP4); // no payload
	const unsigned refused = 11;
	frames::Spec many = spec(64 * 100 + 1, false, 6);
	post(super_frame(many), 100, 54, DMS_TX_SEG_TCP4, {54, 5000}); // 65 segments
	ring();
	run();
	EXPECT_TRUE(host_->sent.empty()) << host_->sent.size();
	EXPECT_EQ(rd(DMS_NIC_REG_TSO_ERR), refused + 1);
	for (unsigned i = 0; i < refused + 1; i++)
		EXPECT_EQ(next_cmpl(), DMS_TX_C_GEN | DMS_TX_C_ERR) << i;
	// A chain longer than a super-frame may be is malformed.
	host_->clear();
	frames::Spec big = spec(18 * 4000 - 54, false, 6);
	std::vector<size_t> cuts;
	for (size_t c = 4000; c < 18 * 4000; c += 4000)
		cuts.push_back(c);
	data_ = kData;
	post(super_frame(big), 1448, 54, DMS_TX_SEG_TCP4, cuts);
	ring();
	run();
	EXPECT_EQ(next_cmpl(), DMS_TX_C_GEN | DMS_TX_C_ERR);
	EXPECT_EQ(rd(DMS_NIC_REG_STAT_TX_DESC_ERR), 1u);
	// The queue still works, segmented or not.
	data_ = kData;
	post(f, 1448, 54, DMS_TX_SEG_TCP4);
	post(frames::build(spec(100, false, 6)), 0, 0, 0);
	ring();
	run();
	EXPECT_EQ(host_->sent.size(), 3u + 1); // 3 segments, 1 frame
	EXPECT_EQ(next_cmpl(), DMS_TX_C_GEN);
	EXPECT_EQ(next_cmpl(), DMS_TX_C_GEN);
	EXPECT_NE(stats().find("\"tx_tso_err\": 12"), std::string::npos) << stats();
}

// Every segment counts against the TX engine's per-step budget (64
// frames): super-frames of 45 segments yield like 45 frames would.
TEST_F(NicTso, SegmentsCountAgainstTheStepBudget)
{
	frames::Spec s = spec(45 * 1448, false, 6);
	const Frame f = super_frame(s);
	for (int i = 0; i < 8; i++)
		post(f, 1448, 54, DMS_TX_SEG_TCP4, {54, 30000});
	ring();
	size_t most = 0, before = 0, steps = 0;
	uint64_t d;
	while ((d = dms_node_deadline_ns(node_)) != DMS_NO_DEADLINE && steps < 1000) {
		dms_node_step(node_, d);
		most = std::max(most, host_->sent.size() - before);
		before = host_->sent.size();
		steps++;
	}
	EXPECT_EQ(host_->sent.size(), 8u * 45);
	EXPECT_LE(most, 64u + 45);
	EXPECT_GE(steps, 4u);
}
