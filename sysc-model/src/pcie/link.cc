// SPDX-License-Identifier: MIT
#include "pcie/link.h"

namespace devmemsim::pcie
{

namespace
{

constexpr double kFlitBytes = 256.0;
constexpr double kFlitTlpBytes = 236.0;

// A DLLP on the wire at 8 GT/s and above: a 2-byte SDP framing token, the
// 4-byte DLLP and its 2-byte CRC (PCIe 3.0 §3.4, §4.2.2.1).
constexpr double kDllpBytes = 8.0;

// How often a receiver returns an Ack DLLP (PCIe 5.0 Tables 3-7..3-9, the
// Ack transmission latency limit) and an UpdateFC DLLP (Tables 2-46..2-48,
// the UpdateFC transmission latency guideline) while TLPs stream, in
// symbol times, by width (x1..x16) and max payload size (128..4096). The
// two tables hold the same values at 8, 16 and 32 GT/s. Following
// pcie-bench (Neugebauer et al., SIGCOMM 2018; its model/pcie.py, TLP_bw)
// one DLLP of each kind takes 8 link bytes per this many link bytes: that
// model matches the effective bandwidth the paper measured.
constexpr unsigned kDllpInterval[5][6] = {
	{333, 512, 655, 1167, 2191, 4239}, // x1
	{224, 313, 385, 641, 1153, 2177},  // x2
	{169, 214, 250, 378, 634, 1146},   // x4
	{163, 203, 182, 246, 374, 630},	   // x8
	{144, 168, 182, 246, 374, 630},	   // x16
};

// SKP ordered sets for clock compensation: 4 bytes per 1538, pcie-bench's
// figure (PCIe 3.0 §4.2.7 schedules them every 1180..1538 symbol times).
constexpr double kSkpShare = 4.0 / 1538.0;

unsigned log2u(unsigned v)
{
	unsigned n = 0;
	while (v >>= 1)
		n++;
	return n;
}

bool pow2(unsigned v)
{
	return v && !(v & (v - 1));
}

// Giga-transfers per second per lane.
double gtps(unsigned gen)
{
	switch (gen) {
	case 3:
		return 8.0;
	case 4:
		return 16.0;
	case 5:
		return 32.0;
	default:
		return 64.0;
	}
}

} // namespace

unsigned mem_header_bytes(uint64_t addr)
{
	return addr >= (1ull << 32) ? 16 : 12;
}

unsigned framing_bytes(unsigned gen)
{
	return gen >= 6 ? 0 : 8;
}

uint64_t split_count(uint64_t addr, uint64_t len, uint64_t chunk)
{
	if (!len)
		return 0;
	return (addr + len - 1) / chunk - addr / chunk + 1;
}

double raw_bytes_per_second(const LinkParams &p)
{
	double bits = gtps(p.gen) * 1e9 * p.width;
	if (p.gen <= 5)
		bits *= 128.0 / 130.0;
	return bits / 8.0;
}

double wire_bytes(const LinkParams &p, uint64_t tlp_bytes)
{
	if (p.gen >= 6)
		return static_cast<double>(tlp_bytes) * kFlitBytes / kFlitTlpBytes;
	return static_cast<double>(tlp_bytes);
}

LinkTiming::LinkTiming(const LinkParams &p)
    : p_(p), key_(p.gen | log2u(p.width) << 3 | log2u(p.mps) << 6 | log2u(p.mrrs) << 10 |
		  log2u(p.rcb) << 14),
      mps_shift_(log2u(p.mps)), mrrs_shift_(log2u(p.mrrs)),
      cpl_shift_(log2u(p.rcb < p.mps ? p.rcb : p.mps)), framing_(framing_bytes(p.gen)),
      flit_(p.gen >= 6), ps_per_byte_(1e12 / raw_bytes_per_second(p))
{
	// The TLPs get 1 - share of the link: the rest is DLLPs and SKPs.
	const double share = dllp_share(p);
	dllp_per_byte_ = share / (1.0 - share);
}

Cost write_cost(const LinkParams &p, uint64_t addr, uint64_t len)
{
	return LinkTiming(p).write(addr, len);
}

Cost read_request_cost(const LinkParams &p, uint64_t addr, uint64_t len)
{
	return LinkTiming(p).read_request(addr, len);
}

Cost completion_cost(const LinkParams &p, uint64_t addr, uint64_t len)
{
	return LinkTiming(p).completion(addr, len);
}

double dllp_share(const LinkParams &p)
{
	// FLIT mode carries Ack/Nak and flow-control information in each
	// flit's DLP bytes (PCIe 6.0 §4.2.3), already in the 256/236 ratio.
	if (p.gen >= 6)
		return 0.0;
	const unsigned interval = kDllpInterval[log2u(p.width)][log2u(p.mps) - 7];
	return 2.0 * kDllpBytes / interval + kSkpShare;
}

uint64_t dllp_bytes(const LinkParams &p, uint64_t wire)
{
	return LinkTiming(p).dllp_bytes(wire);
}

uint64_t serialize_ps(const LinkParams &p, uint64_t wire)
{
	return LinkTiming(p).serialize_ps(wire);
}

double effective_write_bandwidth(const LinkParams &p, uint64_t len)
{
	// 64-bit addressed, len-aligned writes: every TLP carries a 4-DW header.
	Cost c = write_cost(p, 1ull << 32, len);
	return raw_bytes_per_second(p) * (1.0 - dllp_share(p)) * static_cast<double>(len) /
	       static_cast<double>(c.wire_bytes);
}

const char *check(const LinkParams &p)
{
	if (p.gen < 3 || p.gen > 6)
		return "PCIe generation must be 3, 4, 5 or 6";
	if (!pow2(p.width) || p.width > 16)
		return "link width must be 1, 2, 4, 8 or 16";
	if (!pow2(p.mps) || p.mps < 128 || p.mps > 4096)
		return "max payload size must be a power of two from 128 to 4096";
	if (!pow2(p.mrrs) || p.mrrs < 128 || p.mrrs > 4096)
		return "max read request size must be a power of two from 128 to 4096";
	if (!pow2(p.rcb) || p.rcb < 64 || p.rcb > 128)
		return "read completion boundary must be 64 or 128";
	return nullptr;
}

} // namespace devmemsim::pcie
