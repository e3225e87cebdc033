// SPDX-License-Identifier: MIT
// PCIe link arithmetic: how many TLPs a transfer takes and how many bytes
// they occupy on the wire, per generation and width.
//
// Sources: PCIe Base Specification 3.0 §4.2.2 (128b/130b encoding, the
// 4-byte STP framing token that carries the 12-bit sequence number), §3.6
// (4-byte LCRC), §2.2 (3/4-DW TLP headers; 4-DW for 64-bit addresses);
// PCIe 6.0 §4.2.3 (FLIT mode: 256-byte flits holding 236 TLP bytes, 6 DLP
// bytes, 8 CRC bytes and 6 FEC bytes; no per-TLP framing or LCRC). The
// method of counting per-TLP overhead follows Neugebauer et al.,
// "Understanding PCIe performance for end host networking", SIGCOMM 2018
// (pcie-bench), as does the DLLP and SKP share of the link (dllp_share()).
#pragma once

#include <cstdint>

namespace devmemsim::pcie
{

struct LinkParams {
	unsigned gen = 4;    // 3..6
	unsigned width = 16; // lanes: 1, 2, 4, 8, 16
	unsigned mps = 256;  // max payload size, bytes (128..4096, power of 2)
	unsigned mrrs = 512; // max read request size, bytes (128..4096)
	unsigned rcb = 64;   // read completion boundary / completion size
};

// Per direction of one link.
struct LinkCounters {
	uint64_t tlps = 0;
	uint64_t payload_bytes = 0;
	uint64_t wire_bytes = 0;
	uint64_t dllp_bytes = 0; // link time of the ACK/UpdateFC DLLPs and SKPs
	uint64_t busy_ps = 0;	 // time the direction spent serializing
	void add(uint64_t n_tlps, uint64_t payload, uint64_t wire, uint64_t dllp, uint64_t ps)
	{
		tlps += n_tlps;
		payload_bytes += payload;
		wire_bytes += wire;
		dllp_bytes += dllp;
		busy_ps += ps;
	}
};

// TLP header bytes for a memory request: 3 DW below 4 GiB, else 4 DW.
// Completion headers are 3 DW. (FLIT mode: 4 DW for 64-bit addresses too.)
unsigned mem_header_bytes(uint64_t addr);
constexpr unsigned kCplHeaderBytes = 12;

// Bytes a link adds to every TLP besides its header: STP token (with the
// sequence number) + LCRC for Gen3..5 (8 bytes); none in FLIT mode (Gen6),
// whose overhead is per flit.
unsigned framing_bytes(unsigned gen);

// Number of pieces when [addr, addr+len) is cut at every multiple of chunk.
uint64_t split_count(uint64_t addr, uint64_t len, uint64_t chunk);

// Raw bytes per second the link moves in one direction, after line
// encoding (128b/130b for Gen3..5, 1b/1b PAM4 flits for Gen6).
double raw_bytes_per_second(const LinkParams &p);

// Bytes on the wire for `tlp_bytes` bytes of TLPs (headers + payload +
// framing): FLIT mode adds the flit overhead (256/236).
double wire_bytes(const LinkParams &p, uint64_t tlp_bytes);

// A memory write of len bytes at addr: TLP count and wire bytes.
struct Cost {
	uint64_t tlps;
	uint64_t wire_bytes;
};
Cost write_cost(const LinkParams &p, uint64_t addr, uint64_t len);
// Read requests (header only) for len bytes at addr, split at MRRS.
Cost read_request_cost(const LinkParams &p, uint64_t addr, uint64_t len);
// Completions with data for a read of len bytes at addr, split at RCB.
Cost completion_cost(const LinkParams &p, uint64_t addr, uint64_t len);

// Share of a direction's raw bandwidth that Ack and UpdateFC DLLPs and
// SKP ordered sets take while TLPs stream (0 in FLIT mode).
double dllp_share(const LinkParams &p);
// Link bytes those DLLPs and SKPs take per `wire_bytes` of TLPs: the
// direction is busy for wire_bytes + dllp_bytes.
uint64_t dllp_bytes(const LinkParams &p, uint64_t wire_bytes);

// Serialization time of wire bytes on the link, in picoseconds.
uint64_t serialize_ps(const LinkParams &p, uint64_t wire_bytes);

// One link's arithmetic with its constants worked out once: the fabric
// costs every transaction on every link it crosses with it. Same results
// as the functions above. p must pass check().
class LinkTiming
{
public:
	explicit LinkTiming(const LinkParams &p);
	const LinkParams &params() const { return p_; }
	// Equal for links whose arithmetic is the same.
	uint32_t key() const { return key_; }
	Cost write(uint64_t addr, uint64_t len) const
	{
		return cost(pieces(addr, len, mps_shift_), mem_header_bytes(addr), len);
	}
	Cost read_request(uint64_t addr, uint64_t len) const
	{
		return cost(pieces(addr, len, mrrs_shift_), mem_header_bytes(addr), 0);
	}
	Cost completion(uint64_t addr, uint64_t len) const
	{
		return cost(pieces(addr, len, cpl_shift_), kCplHeaderBytes, len);
	}
	uint64_t dllp_bytes(uint64_t wire) const { return round_up_half(wire * dllp_per_byte_); }
	uint64_t serialize_ps(uint64_t wire) const { return round_up_half(wire * ps_per_byte_); }

private:
	static uint64_t pieces(uint64_t addr, uint64_t len, unsigned shift)
	{
		return len ? ((addr + len - 1) >> shift) - (addr >> shift) + 1 : 0;
	}
	// Non-negative x to the nearest integer (llround without the call).
	static uint64_t round_up_half(double x) { return static_cast<uint64_t>(x + 0.5); }
	Cost cost(uint64_t n, uint64_t per_tlp, uint64_t payload) const
	{
		const uint64_t tlp_bytes = payload + n * (per_tlp + framing_);
		// FLIT mode: 256 flit bytes per 236 TLP bytes, rounded to nearest.
		return {n, flit_ ? (tlp_bytes * 128 + 59) / 118 : tlp_bytes};
	}

	LinkParams p_;
	uint32_t key_;
	unsigned mps_shift_, mrrs_shift_, cpl_shift_;
	unsigned framing_;
	bool flit_;
	double dllp_per_byte_; // DLLP and SKP link bytes per TLP wire byte
	double ps_per_byte_;   // serialization time of one wire byte
};

// Payload bytes per second a stream of aligned len-byte writes reaches,
// after TLP, framing and DLLP overhead.
double effective_write_bandwidth(const LinkParams &p, uint64_t len);

// Why p is not a valid link, or nullptr.
const char *check(const LinkParams &p);

} // namespace devmemsim::pcie
