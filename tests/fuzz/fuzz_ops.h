// SPDX-License-Identifier: MIT
// The fuzzer's input language: a byte string read as a sequence of
// operations on the node (opcode byte, then its arguments; a short input
// ends the sequence). The seed writer uses the same encoding (Writer).
#ifndef DEVMEMSIM_TESTS_FUZZ_OPS_H
#define DEVMEMSIM_TESTS_FUZZ_OPS_H

#include <cstddef>
#include <cstdint>
#include <vector>

namespace fuzz
{

enum Op : uint8_t {
	// dev: a device id, DMS_NIC(i) or DMS_GPU(i) (mod 2K); q: NIC q / 4's
	// queue q % 4 (mod 4K); other NIC and GPU choices as fuzz_node.cc says.
	kRegWrite,   // dev, off16, size, value64
	kRegRead,    // dev, off16, size
	kRamWrite,   // off32, len16, bytes
	kQueueSetup, // q, ring log2, hbuf size sel (bit 7: DROP_EN), pbuf size sel, enable bits
	kRxPost,     // q, count
	kTxPost,     // q, frame spec (5 bytes), frags, flags
	kWireRaw,    // len16, bytes
	kWireFrame,  // frame spec (5 bytes), mutation (4 bytes)
	kMsix,	     // dev, vector, target kind, off32, data32, masked
	kStep,	     // delta code
	kLink,	     // up
	kNicReset,   //
	kStats,	     // reset stats too?
	kGpuJob,     // engine, dev off32, target kind, host off32, len32
	kCrcList,    // count, entries (dev off32, len16 each)
	kBars,	     // GPU memory BAR mapped?
	kPeer,	     // what the wire peer does with sent frames
	kBusMaster,  // dev, on
	kReplug,     // dev: hot-unplug and plug again
	kGpuReset,   //
	kFaults,     // key mask32, one value byte per key set
	kForeignId,  // id32, off16, value64: every id-taking call, a device it names not
	kTxSegPost,  // q, mss16, kind, header length adjust, frame spec (5 bytes), frags, flags
	kSegment,    // flow, how, payload16 [hole16] [flags]: TCP in sequence (GRO)
	kRssSetup,   // ctx, size, xfrm, class+fields, key word32, entries, rule (v1.6)
	kTiming,     // reg sel, q, value32, host time delta16: PTP, rate limits (v1.6)
	kNicReg,     // q, reg sel, index, how, value32: v1.7-v1.10 registers by name
	kWireTiny,   // how, length sel, [bytes | frame spec]: empty and runt frames
	kMacStats,   // nic: IEEE 802.3 counters read and checked (v1.7)
	kOpCount
};

// kWireTiny's frame lengths: empty, runts, a bare or cut Ethernet header,
// cut IP headers, and around the 60-byte minimum frame.
constexpr uint8_t kTinyLens[] = {0,  1,	 2,  6,	 12, 13, 14, 15, 17, 18, 19, 20, 33,
				 34, 38, 41, 42, 53, 54, 58, 59, 60, 61, 63, 64, 65};

// Where an address argument points: decoded by the harness.
enum Target : uint8_t { kToRam, kToGpuMem, kToNicRegs, kToGpuRegs, kToApic, kToRaw, kTargetCount };

class Reader
{
public:
	Reader(const uint8_t *d, size_t n) : d_(d), n_(n) {}
	bool done() const { return pos_ >= n_; }
	uint64_t u(unsigned bytes)
	{
		uint64_t v = 0;
		for (unsigned i = 0; i < bytes; i++)
			v |= uint64_t(pos_ < n_ ? d_[pos_++] : 0) << (8 * i);
		return v;
	}
	uint8_t u8() { return uint8_t(u(1)); }
	uint16_t u16() { return uint16_t(u(2)); }
	uint32_t u32() { return uint32_t(u(4)); }
	// Up to len bytes of the input itself.
	std::vector<uint8_t> bytes(size_t len)
	{
		const size_t take = pos_ + len <= n_ ? len : n_ - pos_;
		std::vector<uint8_t> out(d_ + pos_, d_ + pos_ + take);
		pos_ += take;
		return out;
	}

private:
	const uint8_t *d_;
	size_t n_, pos_ = 0;
};

class Writer
{
public:
	Writer &op(Op o) { return put(o, 1); }
	Writer &put(uint64_t v, unsigned bytes)
	{
		for (unsigned i = 0; i < bytes; i++)
			out.push_back(uint8_t(v >> (8 * i)));
		return *this;
	}
	Writer &u8(uint64_t v) { return put(v, 1); }
	Writer &u16(uint64_t v) { return put(v, 2); }
	Writer &u32(uint64_t v) { return put(v, 4); }
	Writer &u64(uint64_t v) { return put(v, 8); }
	std::vector<uint8_t> out;
};

} // namespace fuzz

#endif
