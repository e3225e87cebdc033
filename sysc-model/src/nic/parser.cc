// SPDX-License-Identifier: MIT
#include "nic/parser.h"

#include <cstring>

#include "nic/csum.h"

namespace devmemsim
{

namespace
{

constexpr uint16_t kEthIpv4 = 0x0800;
constexpr uint16_t kEthIpv6 = 0x86dd;
constexpr uint16_t kEthVlan = 0x8100;
constexpr uint16_t kEthQinQ = 0x88a8;
constexpr uint8_t kTcp = 6;
constexpr uint8_t kUdp = 17;

uint16_t be16(const uint8_t *p)
{
	return static_cast<uint16_t>(p[0] << 8 | p[1]);
}

} // namespace

Parsed parse_frame(const uint8_t *f, size_t len)
{
	Parsed r;
	if (len < 14)
		return r;
	size_t off = 12;
	uint16_t type = be16(f + off);
	while ((type == kEthVlan || type == kEthQinQ) && r.vlans < 2) {
		if (len < off + 6)
			return r;
		r.vlans++;
		off += 4;
		type = be16(f + off);
	}
	off += 2;
	r.l3_off = off;

	if (type == kEthIpv4) {
		if (len < off + 20 || f[off] >> 4 != 4)
			return r;
		size_t ihl = (f[off] & 0xf) * 4u;
		size_t total = be16(f + off + 2);
		if (ihl < 20 || len < off + ihl || total < ihl || len < off + total)
			return r;
		r.l3 = L3::Ipv4;
		r.l3_end = off + total;
		r.ipv4_csum_ok = inet_fold(inet_sum(f + off, ihl)) == 0xffff;
		uint16_t frag = be16(f + off + 6);
		r.fragment = (frag & 0x2000) || (frag & 0x1fff);
		r.proto = f[off + 9];
		std::memcpy(r.src.data(), f + off + 12, 4);
		std::memcpy(r.dst.data(), f + off + 16, 4);
		off += ihl;
	} else if (type == kEthIpv6) {
		if (len < off + 40 || f[off] >> 4 != 6)
			return r;
		size_t payload = be16(f + off + 4);
		if (len < off + 40 + payload)
			return r;
		r.l3 = L3::Ipv6;
		r.l3_end = off + 40 + payload;
		r.proto = f[off + 6];
		std::memcpy(r.src.data(), f + off + 8, 16);
		std::memcpy(r.dst.data(), f + off + 24, 16);
		off += 40;
	} else {
		return r;
	}
	if (r.fragment || (r.proto != kTcp && r.proto != kUdp))
		return r;

	r.l4_off = off;
	if (r.proto == kTcp) {
		if (r.l3_end < off + 20)
			return r;
		size_t doff = (f[off + 12] >> 4) * 4u;
		if (doff < 20 || r.l3_end < off + doff)
			return r;
		r.l4 = L4::Tcp;
		r.split_off = off + doff;
	} else {
		if (r.l3_end < off + 8)
			return r;
		r.l4 = L4::Udp;
		r.split_off = off + 8;
	}
	r.sport = be16(f + off);
	r.dport = be16(f + off + 2);
	return r;
}

} // namespace devmemsim
