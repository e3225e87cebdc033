// SPDX-License-Identifier: MIT
// A device that lies (faults.nic_lie_*_rate, faults.gpu_lie_status_rate):
// at rate 1 each lie is in what the device reports (RX completions, a GPU
// job's status), is counted in the node's "faults" stats, comes out the
// same for the same seed, and never moves the device's DMA: every write
// stays in the completion ring and the buffers the host posted.
#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "devmemsim/devmemsim.h"
#include "devmemsim/gpu_regs.h"
#include "devmemsim/nic_desc.h"
#include "devmemsim/nic_regs.h"
#include "fake_host.h"
#include "frames.h"

namespace
{

using fake_host::Host;
constexpr uint64_t kRam = fake_host::kRamBase;
constexpr uint64_t kHring = kRam, kPring = kRam + 0x1000, kCmpl = kRam + 0x2000;
constexpr uint64_t kHdata = kRam + 0x10000, kPdata = kRam + 0x40000;
constexpr uint64_t kCopyTo = kRam + 0x800000; // a GPU copy's host buffer
constexpr unsigned kLog2 = 6, kRing = 64, kHsize = 256, kPsize = 4096;
constexpr uint8_t kAck = 0x10;

// The fake host, checking every device write against what was posted:
// the completion ring, the posted header and payload buffers, the GPU
// copy's host buffer.
struct CheckedHost : Host {
	unsigned posted = 0; // buffers of each kind posted, slots 0..posted-1
	unsigned stray = 0;  // writes outside all of them

	static int dma_checked(void *o, uint64_t addr, void *buf, uint64_t len, int w)
	{
		auto *h = static_cast<CheckedHost *>(o);
		if (w && !h->allowed(addr, len))
			h->stray++;
		return Host::dma(o, addr, buf, len, w);
	}
	static bool within(uint64_t addr, uint64_t len, uint64_t lo, uint64_t size)
	{
		return addr >= lo && len <= size && addr - lo <= size - len;
	}
	bool allowed(uint64_t addr, uint64_t len) const
	{
		if (within(addr, len, kCmpl, 32 * kRing) || within(addr, len, kCopyTo, 1 << 16))
			return true;
		for (unsigned s = 0; s < posted; s++)
			if (within(addr, len, kHdata + s * kHsize, kHsize) ||
			    within(addr, len, kPdata + s * uint64_t(kPsize), kPsize))
				return true;
		return false;
	}
};

// A TCP segment of flow 1234 (12 option bytes), for GRO.
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
	f[34 + 13] = kAck;
	for (size_t i = 0; i < payload; i++)
		f[66 + i] = uint8_t((seq + i) * 7);
	devmemsim::l4_csum_fill(f.data(), devmemsim::parse_frame(f.data(), f.size()));
	return f;
}

std::vector<uint8_t> tcp_frame(size_t payload, uint8_t tag = 0)
{
	frames::Spec s;
	s.payload = payload;
	std::vector<uint8_t> f = frames::build(s);
	f[60] = tag;
	return f;
}

class NicLies : public ::testing::Test
{
protected:
	static void SetUpTestSuite()
	{
		std::string err;
		node_ = fake_host::new_node("[faults]\nseed = 1\n", &err);
		ASSERT_NE(node_, nullptr) << err;
		host_ = new CheckedHost;
		static const dms_dev_ops nic_ops = {CheckedHost::dma_checked, Host::irq, Host::send,
						    Host::on_rx_ready};
		static const dms_dev_ops gpu_ops = {CheckedHost::dma_checked, Host::irq, nullptr,
						    nullptr};
		dms_dev_attach(node_, DMS_DEV_NIC, &nic_ops, host_);
		dms_dev_attach(node_, DMS_DEV_GPU, &gpu_ops, host_);
		mem_ = new std::vector<uint8_t>(dms_gpu_mem_size(node_));
		dms_gpu_set_memory(node_, mem_->data());
		dms_node_step(node_, 0);
	}
	void SetUp() override
	{
		set("");
		wr(DMS_NIC_REG_CTRL, DMS_NIC_CTRL_RESET);
		run();
		dms_node_reset_stats(node_);
		host_->clear();
		host_->stray = 0;
		wr(DMS_NIC_REG_MTU, 9000);
		wr(DMS_NIC_REG_RX_CTRL, DMS_NIC_RX_HDR_SPLIT | DMS_NIC_RX_CSUM);
	}
	void TearDown() override { EXPECT_EQ(host_->stray, 0u) << "a write outside the posted"; }
	static void set(const std::string &s)
	{
		char err[256] = "";
		ASSERT_EQ(dms_node_set_faults(node_, s.c_str(), err, sizeof(err)), 0) << err;
	}
	static uint32_t rd(uint32_t off)
	{
		return uint32_t(dms_reg_read(node_, DMS_DEV_NIC, off, 4));
	}
	static void wr(uint32_t off, uint32_t v) { dms_reg_write(node_, DMS_DEV_NIC, off, v, 4); }
	static void qw(uint32_t off, uint32_t v) { wr(DMS_NIC_Q_BASE(0) + off, v); }
	static void run() { fake_host::run_until_idle(node_, 1000); }
	// Queue 0's RX rings, `posted` buffers of each kind; buffer ids are
	// ring slots, as dmsnic numbers them.
	void enable(uint32_t flags = 0, unsigned posted = kRing - 1)
	{
		qw(DMS_NIC_RXQ_CTRL, 0);
		qw(DMS_NIC_RXQ_RING_LOG2, kLog2);
		qw(DMS_NIC_RXQ_HBUF_BASE_LO, uint32_t(kHring));
		qw(DMS_NIC_RXQ_PBUF_BASE_LO, uint32_t(kPring));
		qw(DMS_NIC_RXQ_CMPL_BASE_LO, uint32_t(kCmpl));
		qw(DMS_NIC_RXQ_HBUF_SIZE, kHsize);
		qw(DMS_NIC_RXQ_PBUF_SIZE, kPsize);
		qw(DMS_NIC_RXQ_CTRL, DMS_NIC_Q_ENABLE | flags);
		std::memset(host_->at(kCmpl), 0, 32 * kRing);
		head_ = 0;
		phase_ = true;
		for (unsigned s = 0; s < kRing; s++) {
			dms_rx_buf hb{kHdata + s * kHsize, uint16_t(s), {}};
			dms_rx_buf pb{kPdata + s * uint64_t(kPsize), uint16_t(s), {}};
			std::memcpy(host_->at(kHring + 16 * s), &hb, 16);
			std::memcpy(host_->at(kPring + 16 * s), &pb, 16);
		}
		host_->posted = posted;
		qw(DMS_NIC_RXQ_HBUF_TAIL, posted);
		qw(DMS_NIC_RXQ_PBUF_TAIL, posted);
	}
	static void rx(const std::vector<uint8_t> &f)
	{
		ASSERT_EQ(dms_nic_receive(node_, f.data(), f.size()), 1);
		run();
	}
	// The completions written since the last call; the head follows.
	std::vector<dms_rx_cmpl> cmpls()
	{
		std::vector<dms_rx_cmpl> out;
		for (;;) {
			dms_rx_cmpl c;
			std::memcpy(&c, host_->at(kCmpl + 32 * head_), 32);
			if (bool(c.flags & DMS_RX_F_GEN) != phase_)
				break;
			c.flags &= uint16_t(~DMS_RX_F_GEN);
			out.push_back(c);
			if (++head_ == kRing) {
				head_ = 0;
				phase_ = !phase_;
			}
		}
		qw(DMS_NIC_RXQ_CMPL_HEAD, head_);
		return out;
	}
	static std::string faults_json()
	{
		std::string s = dms_node_stats_json(node_);
		size_t at = s.find("\"faults\": {");
		return at == std::string::npos ? "" : s.substr(at, s.find('}', at) - at + 1);
	}
	static bool counted(const std::string &key, unsigned n)
	{
		return faults_json().find("\"" + key + "\": " + std::to_string(n) + ",") !=
			       std::string::npos ||
		       faults_json().find("\"" + key + "\": " + std::to_string(n) + "}") !=
			       std::string::npos;
	}
	static uint32_t gpu_rd(uint32_t off)
	{
		return uint32_t(dms_reg_read(node_, DMS_DEV_GPU, off, 4));
	}
	// A 4 KiB copy from device memory (0xab bytes) to kCopyTo (zeroed); its
	// status.
	static uint32_t copy()
	{
		std::fill(mem_->begin(), mem_->begin() + 4096, 0xab);
		std::memset(host_->at(kCopyTo), 0, 4096);
		fake_host::gpu_start_copy(node_, 0, kCopyTo, 4096, 0);
		run();
		return gpu_rd(DMS_GPU_REG_COPY_STATUS);
	}
	static uint32_t crc()
	{
		fake_host::gpu_start_crc(node_, 0, 4096, 0);
		run();
		return gpu_rd(DMS_GPU_REG_CRC_STATUS);
	}
	static unsigned code(uint32_t status)
	{
		return (status & DMS_GPU_STATUS_ERR_MASK) >> DMS_GPU_STATUS_ERR_SHIFT;
	}

	static inline dms_node *node_;
	static inline CheckedHost *host_;
	static inline std::vector<uint8_t> *mem_;
	unsigned head_ = 0;
	bool phase_ = true;
};

constexpr uint16_t kEnds = DMS_RX_F_SOP | DMS_RX_F_EOP;

} // namespace

TEST_F(NicLies, NoLiesByDefault)
{
	enable();
	rx(tcp_frame(1000));
	const auto c = cmpls();
	ASSERT_EQ(c.size(), 1u);
	EXPECT_EQ(c[0].pay_len, 1000u);
	EXPECT_EQ(c[0].hdr_len, 54);
	EXPECT_EQ(c[0].pbuf_id, 0);
	for (const char *k : {"nic_lie_len", "nic_lie_id", "nic_lie_dup", "nic_lie_gro",
			      "nic_lie_pack", "gpu_lie_status"})
		EXPECT_TRUE(counted(k, 0)) << k << " " << faults_json();
}

// The data still lands where it belongs; only the lengths lie.
TEST_F(NicLies, LengthBeyondTheBuffer)
{
	set("nic_lie_len_rate=1");
	enable();
	bool hdr = false, pay = false;
	for (unsigned i = 0; i < 12; i++) {
		const auto f = tcp_frame(1000, uint8_t(i));
		rx(f);
		const auto c = cmpls();
		ASSERT_EQ(c.size(), 1u);
		EXPECT_TRUE(c[0].hdr_len > kHsize || c[0].pay_len > kPsize) << i;
		EXPECT_TRUE(c[0].hdr_len == 54 || c[0].hdr_len > kHsize) << i;
		EXPECT_TRUE(c[0].pay_len == 1000 || c[0].pay_len > kPsize) << i;
		hdr |= c[0].hdr_len > kHsize;
		pay |= c[0].pay_len > kPsize;
		EXPECT_EQ(
			std::memcmp(host_->at(kPdata + i * uint64_t(kPsize)), f.data() + 54, 1000),
			0);
	}
	EXPECT_TRUE(hdr && pay);
	EXPECT_TRUE(counted("nic_lie_len", 12)) << faults_json();
	// A frame in a header buffer only lies about its header length.
	frames::Spec raw;
	raw.proto = 47; // no L4 the parser knows: never split
	rx(frames::build(raw));
	const auto c = cmpls();
	ASSERT_EQ(c.size(), 1u);
	EXPECT_EQ(c[0].flags & DMS_RX_F_PAY, 0);
	EXPECT_GT(c[0].hdr_len, kHsize);
}

TEST_F(NicLies, IdNeverPosted)
{
	set("nic_lie_id_rate=1");
	enable();
	unsigned beyond = 0, earlier = 0;
	for (unsigned i = 0; i < 8; i++) {
		rx(tcp_frame(1000));
		const auto c = cmpls();
		ASSERT_EQ(c.size(), 1u);
		// Frame i took slot i of both rings: one id says so, the other
		// lies, beyond the ring or naming the buffer of frame i - 1.
		const bool hdr_lies = c[0].hbuf_id != i;
		EXPECT_NE(hdr_lies, c[0].pbuf_id != i) << i;
		const unsigned bad = hdr_lies ? c[0].hbuf_id : c[0].pbuf_id;
		EXPECT_TRUE(bad >= kRing || (i > 0 && bad == i - 1)) << i << ": " << bad;
		(bad >= kRing ? beyond : earlier)++;
	}
	EXPECT_GT(beyond, 0u);
	EXPECT_GT(earlier, 0u);
	EXPECT_TRUE(counted("nic_lie_id", 8)) << faults_json();
	EXPECT_EQ(rd(DMS_NIC_Q_BASE(0) + DMS_NIC_RXQ_CTRL), DMS_NIC_Q_ENABLE);
}

TEST_F(NicLies, CompletionWrittenTwice)
{
	set("nic_lie_dup_rate=1");
	enable();
	rx(tcp_frame(1000));
	auto c = cmpls();
	ASSERT_EQ(c.size(), 2u);
	EXPECT_EQ(std::memcmp(&c[0], &c[1], sizeof(c[0])), 0);
	EXPECT_EQ(c[1].flags & kEnds, kEnds);
	// A frame over two payload buffers: its EOP completion again.
	rx(tcp_frame(6000));
	c = cmpls();
	ASSERT_EQ(c.size(), 3u);
	EXPECT_EQ(std::memcmp(&c[1], &c[2], sizeof(c[0])), 0);
	EXPECT_EQ(c[2].flags & kEnds, DMS_RX_F_EOP);
	EXPECT_TRUE(counted("nic_lie_dup", 2)) << faults_json();
}

// On a PACK queue the duplicate of a frame's EOP completion continues no
// frame and names the buffer the NIC still fills: the NIC's next piece goes
// after the true one, not after the duplicate. A driver that takes the
// duplicate as a piece counts ahead of the NIC, may end that buffer while
// the NIC still holds it, and refilling its slot's worth puts the tail on
// the NIC's head buffer: the NIC sees an empty ring and waits, with every
// frame behind it, until a doorbell posts past it (guest-lies' stall).
TEST_F(NicLies, PackDuplicateNamesTheBufferStillFilled)
{
	set("nic_lie_dup_rate=1");
	enable(DMS_NIC_Q_PACK);
	// Split: 4096 payload bytes fill buffer 0, 1904 start buffer 1.
	rx(tcp_frame(6000));
	auto c = cmpls();
	ASSERT_EQ(c.size(), 3u);
	const uint16_t kind = DMS_RX_F_SOP | DMS_RX_F_EOP | DMS_RX_F_PBUF_DONE;
	EXPECT_EQ(c[0].flags & kind, DMS_RX_F_SOP | DMS_RX_F_PBUF_DONE);
	EXPECT_EQ(c[1].flags & kind, DMS_RX_F_EOP);
	EXPECT_EQ(std::memcmp(&c[1], &c[2], sizeof(c[0])), 0);
	EXPECT_EQ(c[2].pbuf_id, 1);
	const uint32_t fill =
		(c[1].pay_len + DMS_NIC_PACK_ALIGN - 1) / DMS_NIC_PACK_ALIGN * DMS_NIC_PACK_ALIGN;
	set("");
	// The NIC's next piece: buffer 1 where the true piece ended (rounded
	// up), not where a driver that took the duplicate would read it.
	const auto f = tcp_frame(1000, 0x5a);
	rx(f);
	c = cmpls();
	ASSERT_EQ(c.size(), 1u);
	EXPECT_EQ(c[0].pbuf_id, 1);
	EXPECT_FALSE(c[0].flags & DMS_RX_F_PBUF_DONE);
	ASSERT_EQ(c[0].hdr_len + c[0].pay_len, f.size());
	EXPECT_EQ(std::memcmp(host_->at(kPdata + kPsize + fill), &f[c[0].hdr_len], c[0].pay_len),
		  0);
	// Buffer 0 came back and slot 63 is posted again (tail 0); a driver
	// that also ended buffer 1 posts slot 0: tail 1, the NIC's head.
	const uint32_t waits = rd(DMS_NIC_REG_STAT_RX_NO_BUF);
	qw(DMS_NIC_RXQ_PBUF_TAIL, 1);
	rx(tcp_frame(1000));
	EXPECT_TRUE(cmpls().empty());
	EXPECT_EQ(rd(DMS_NIC_REG_STAT_RX_NO_BUF), waits + 1);
	// Only a doorbell past it (or a restart of the queue) lets it go on.
	qw(DMS_NIC_RXQ_PBUF_TAIL, 2);
	run();
	c = cmpls();
	ASSERT_EQ(c.size(), 1u);
	EXPECT_EQ(c[0].pbuf_id, 1);
}

// No free completion slot beyond the frame's: no duplicate, not counted.
TEST_F(NicLies, DuplicateOnlyInAFreeSlot)
{
	set("nic_lie_dup_rate=1");
	enable();
	for (unsigned i = 0; i < 31; i++)
		rx(tcp_frame(100)); // 62 of the 63 usable slots, none consumed
	rx(tcp_frame(100));
	EXPECT_TRUE(counted("nic_lie_dup", 31)) << faults_json();
	EXPECT_EQ(cmpls().size(), 63u);
}

TEST_F(NicLies, AbsurdGroMetadata)
{
	set("nic_lie_gro_rate=1");
	wr(DMS_NIC_REG_RX_CTRL, DMS_NIC_RX_HDR_SPLIT | DMS_NIC_RX_CSUM | DMS_NIC_RX_GRO);
	wr(DMS_NIC_REG_GRO_MAX_SEGS, 2);
	wr(DMS_NIC_REG_GRO_TIMEOUT_NS, 1000000);
	enable();
	rx(tcp_frame(100)); // not coalesced: nothing to lie about
	auto c = cmpls();
	ASSERT_EQ(c.size(), 1u);
	EXPECT_EQ(c[0].gro_segs, 0);
	EXPECT_TRUE(counted("nic_lie_gro", 0)) << faults_json();
	std::string st = dms_node_stats_json(node_);
	uint64_t t = std::stoull(st.substr(st.find("\"time_ns\": ") + 11)) + 1000;
	for (uint32_t i = 0; i < 16; i++, t += 1000) {
		// A segment 1 us after the one before: two make an aggregate.
		const auto f = segment(1000 * i, 1000);
		dms_node_step(node_, t);
		ASSERT_EQ(dms_nic_receive(node_, f.data(), f.size()), 1);
		dms_node_step(node_, t);
		for (const auto &x : cmpls()) {
			if (!(x.flags & DMS_RX_F_SOP))
				continue;
			const bool absurd = x.gso_size == 0 || x.gso_size > x.frame_len ||
					    x.gro_segs == 0 || x.gro_segs == 0xffff;
			EXPECT_TRUE(absurd) << x.gro_segs << " " << x.gso_size;
		}
	}
	EXPECT_TRUE(counted("nic_lie_gro", 8)) << faults_json();
}

// Four 1000-byte split payloads at 0, 1024, 2048, 3072 of buffer 0: the
// first has nothing to lie about; the others run past the buffer from
// where they start, or the fourth ends the buffer without PBUF_DONE.
TEST_F(NicLies, PackPiecesContradictTheirOffsets)
{
	set("nic_lie_pack_rate=1");
	enable(DMS_NIC_Q_PACK);
	std::vector<dms_rx_cmpl> c;
	for (unsigned i = 0; i < 4; i++) {
		rx(tcp_frame(1000, uint8_t(i)));
		const auto got = cmpls();
		ASSERT_EQ(got.size(), 1u);
		c.push_back(got[0]);
		EXPECT_EQ(c[i].pbuf_id, 0);
	}
	EXPECT_EQ(c[0].pay_len, 1000u);
	for (unsigned i = 1; i < 3; i++)
		EXPECT_GT(c[i].pay_len, kPsize - 1024 * i) << i;
	EXPECT_TRUE(c[3].pay_len > kPsize - 3072 || !(c[3].flags & DMS_RX_F_PBUF_DONE));
	EXPECT_TRUE(counted("nic_lie_pack", 3)) << faults_json();
	// The NIC went on as it truly was: the next piece starts buffer 1.
	rx(tcp_frame(1000));
	const auto n = cmpls();
	ASSERT_EQ(n.size(), 1u);
	EXPECT_EQ(n[0].pbuf_id, 1);
}

// Every lie at once, on a mix of frames: the same seed gives the same
// completions; another seed others.
TEST_F(NicLies, SameSeedSameLies)
{
	auto trial = [this](const std::string &seed) {
		set(seed + " nic_lie_len_rate=0.5 nic_lie_id_rate=0.5 nic_lie_dup_rate=0.5 "
			   "nic_lie_pack_rate=0.5");
		enable(DMS_NIC_Q_PACK);
		std::vector<uint8_t> all;
		for (unsigned i = 0; i < 20; i++) {
			rx(tcp_frame(100 + 400 * (i % 7), uint8_t(i)));
			for (const auto &c : cmpls()) {
				const auto *b = reinterpret_cast<const uint8_t *>(&c);
				all.insert(all.end(), b, b + sizeof(c));
			}
		}
		return all;
	};
	const auto a = trial("seed=7"), b = trial("seed=7"), other = trial("seed=8");
	EXPECT_EQ(a, b);
	EXPECT_NE(a, other);
}

// Half the copy jobs claim success without running (nothing moved,
// COPY_DONE_BYTES 0), the rest end with a code no version defines; CRC
// jobs always get such a code.
TEST_F(NicLies, GpuStatusLies)
{
	EXPECT_EQ(copy(), DMS_GPU_STATUS_DONE);
	set("gpu_lie_status_rate=1");
	bool skipped = false, bogus = false;
	for (unsigned i = 0; i < 16; i++) {
		const uint32_t st = copy();
		if (st == DMS_GPU_STATUS_DONE) {
			skipped = true;
			EXPECT_EQ(gpu_rd(DMS_GPU_REG_COPY_DONE_BYTES_LO), 0u);
			EXPECT_EQ(*host_->at(kCopyTo), 0);
		} else {
			bogus = true;
			EXPECT_EQ(st & ~DMS_GPU_STATUS_ERR_MASK,
				  DMS_GPU_STATUS_DONE | DMS_GPU_STATUS_ERROR);
			EXPECT_GT(code(st), unsigned(DMS_GPU_ERR_ENGINE));
		}
	}
	EXPECT_TRUE(skipped && bogus);
	const uint32_t st = crc();
	EXPECT_TRUE(st & DMS_GPU_STATUS_ERROR);
	EXPECT_GT(code(st), unsigned(DMS_GPU_ERR_ENGINE));
	EXPECT_TRUE(counted("gpu_lie_status", 17)) << faults_json();
	// Deterministic per seed.
	auto trial = [] {
		set("seed=3 gpu_lie_status_rate=0.5");
		std::vector<uint32_t> s;
		for (unsigned i = 0; i < 16; i++)
			s.push_back(copy());
		return s;
	};
	EXPECT_EQ(trial(), trial());
}

TEST_F(NicLies, RatesAreChecked)
{
	char err[256] = "";
	for (const char *k : {"nic_lie_len_rate", "nic_lie_id_rate", "nic_lie_dup_rate",
			      "nic_lie_gro_rate", "nic_lie_pack_rate", "gpu_lie_status_rate"}) {
		const std::string bad = std::string(k) + "=1.5";
		EXPECT_EQ(dms_node_set_faults(node_, bad.c_str(), err, sizeof(err)), -1) << k;
		EXPECT_NE(std::string(err).find(std::string("faults.") + k), std::string::npos)
			<< err;
	}
	set("nic_lie_dup_rate=0.25, gpu_lie_status_rate=1");
}
