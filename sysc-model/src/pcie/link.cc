// SPDX-License-Identifier: MIT
#include "pcie/link.h"

#include <cmath>

namespace devmemsim::pcie
{

namespace
{

constexpr double kFlitBytes = 256.0;
constexpr double kFlitTlpBytes = 236.0;

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

static Cost cost(const LinkParams &p, uint64_t n, uint64_t per_tlp, uint64_t payload)
{
	uint64_t tlp_bytes = payload + n * (per_tlp + framing_bytes(p.gen));
	return {n, static_cast<uint64_t>(std::llround(wire_bytes(p, tlp_bytes)))};
}

Cost write_cost(const LinkParams &p, uint64_t addr, uint64_t len)
{
	return cost(p, split_count(addr, len, p.mps), mem_header_bytes(addr), len);
}

Cost read_request_cost(const LinkParams &p, uint64_t addr, uint64_t len)
{
	return cost(p, split_count(addr, len, p.mrrs), mem_header_bytes(addr), 0);
}

Cost completion_cost(const LinkParams &p, uint64_t addr, uint64_t len)
{
	unsigned cpl = p.rcb < p.mps ? p.rcb : p.mps;
	return cost(p, split_count(addr, len, cpl), kCplHeaderBytes, len);
}

uint64_t serialize_ps(const LinkParams &p, uint64_t wire)
{
	return static_cast<uint64_t>(
		std::llround(static_cast<double>(wire) * 1e12 / raw_bytes_per_second(p)));
}

double effective_write_bandwidth(const LinkParams &p, uint64_t len)
{
	// 64-bit addressed, len-aligned writes: every TLP carries a 4-DW header.
	Cost c = write_cost(p, 1ull << 32, len);
	return raw_bytes_per_second(p) * static_cast<double>(len) /
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
