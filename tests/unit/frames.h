// SPDX-License-Identifier: MIT
// Frame builders for the NIC tests: Ethernet, VLAN, IPv4 (with options),
// IPv6, TCP (with options), UDP, with correct checksums.
#pragma once

#include <cstdint>
#include <vector>

#include "nic/csum.h"
#include "nic/parser.h"

namespace frames
{

struct Spec {
	unsigned vlans = 0;
	bool ipv6 = false;
	unsigned ip_options = 0;  // IPv4 option bytes (multiple of 4)
	uint8_t proto = 6;	  // 6 TCP, 17 UDP, other: raw
	unsigned tcp_options = 0; // multiple of 4
	size_t payload = 100;
	uint8_t src[16] = {10, 0, 0, 1};
	uint8_t dst[16] = {10, 0, 0, 2};
	uint16_t sport = 1234, dport = 80;
	uint16_t frag = 0;     // IPv4 flags/fragment offset field
	uint8_t ipv6_next = 0; // 0: proto; else an extension header number
};

inline void put16(std::vector<uint8_t> &f, size_t at, unsigned v)
{
	f[at] = static_cast<uint8_t>(v >> 8);
	f[at + 1] = static_cast<uint8_t>(v);
}

inline std::vector<uint8_t> build(const Spec &s)
{
	std::vector<uint8_t> f(12, 0);
	for (int i = 0; i < 6; i++) {
		f[i] = static_cast<uint8_t>(0x52 + i);
		f[6 + i] = static_cast<uint8_t>(0x62 + i);
	}
	for (unsigned v = 0; v < s.vlans; v++) {
		f.push_back(v == 0 && s.vlans == 2 ? 0x88 : 0x81);
		f.push_back(v == 0 && s.vlans == 2 ? 0xa8 : 0x00);
		f.push_back(0x00);
		f.push_back(static_cast<uint8_t>(10 + v));
	}
	f.push_back(s.ipv6 ? 0x86 : 0x08);
	f.push_back(s.ipv6 ? 0xdd : 0x00);
	size_t l3 = f.size();
	size_t l4len = (s.proto == 6 ? 20 + s.tcp_options : s.proto == 17 ? 8 : 0) + s.payload;
	if (s.ipv6) {
		size_t ext = s.ipv6_next ? 8 : 0;
		f.resize(l3 + 40 + ext, 0);
		f[l3] = 0x60;
		put16(f, l3 + 4, static_cast<unsigned>(l4len + ext));
		f[l3 + 6] = s.ipv6_next ? s.ipv6_next : s.proto;
		f[l3 + 7] = 64;
		std::copy(s.src, s.src + 16, f.begin() + l3 + 8);
		std::copy(s.dst, s.dst + 16, f.begin() + l3 + 24);
		if (ext)
			f[l3 + 40] = s.proto; // extension header's next header
	} else {
		size_t ihl = 20 + s.ip_options;
		f.resize(l3 + ihl, 0);
		f[l3] = static_cast<uint8_t>(0x40 | ihl / 4);
		put16(f, l3 + 2, static_cast<unsigned>(ihl + l4len));
		put16(f, l3 + 6, s.frag);
		f[l3 + 8] = 64;
		f[l3 + 9] = s.proto;
		std::copy(s.src, s.src + 4, f.begin() + l3 + 12);
		std::copy(s.dst, s.dst + 4, f.begin() + l3 + 16);
		for (size_t i = 20; i < ihl; i++)
			f[l3 + i] = 1; // NOP options
		uint16_t c = static_cast<uint16_t>(
			~devmemsim::inet_fold(devmemsim::inet_sum(&f[l3], ihl)));
		put16(f, l3 + 10, c);
	}
	size_t l4 = f.size();
	f.resize(l4 + l4len, 0);
	if (s.proto == 6 || s.proto == 17) {
		put16(f, l4, s.sport);
		put16(f, l4 + 2, s.dport);
		if (s.proto == 6) {
			f[l4 + 12] = static_cast<uint8_t>((20 + s.tcp_options) / 4 << 4);
			for (size_t i = 20; i < 20 + s.tcp_options; i++)
				f[l4 + i] = 1;
		} else {
			put16(f, l4 + 4, static_cast<unsigned>(l4len));
		}
	}
	size_t pay = f.size() - s.payload;
	for (size_t i = 0; i < s.payload; i++)
		f[pay + i] = static_cast<uint8_t>(i * 13 + 7);
	devmemsim::Parsed p = devmemsim::parse_frame(f.data(), f.size());
	if (p.l4 != devmemsim::L4::None)
		devmemsim::l4_csum_fill(f.data(), p);
	return f;
}

} // namespace frames
