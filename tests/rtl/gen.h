// SPDX-License-Identifier: MIT
// Frames for the behavioural-vs-RTL parser comparisons: every header
// combination the parser knows (and the ones it refuses), boundary values
// of every field it reads, truncations at every header byte, seeded random
// byte strings and random mutations of valid frames.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "frames.h"
#include "nic/parser.h"

namespace gen
{

using Frame = std::vector<uint8_t>;
using devmemsim::L3;
using devmemsim::L4;
using devmemsim::Parsed;

// ------------------------------------------------------------ reporting

inline const char *l3_name(L3 v)
{
	return v == L3::Ipv4 ? "ipv4" : v == L3::Ipv6 ? "ipv6" : "none";
}
inline const char *l4_name(L4 v)
{
	return v == L4::Tcp ? "tcp" : v == L4::Udp ? "udp" : "none";
}

inline std::string hex(const uint8_t *p, size_t n)
{
	std::string s;
	char b[4];
	for (size_t i = 0; i < n; i++) {
		std::snprintf(b, sizeof(b), "%02x", p[i]);
		s += b;
	}
	return s;
}

inline std::string show(const Parsed &p)
{
	std::ostringstream o;
	o << "l3=" << l3_name(p.l3) << " l4=" << l4_name(p.l4) << " vlans=" << p.vlans
	  << " l3_off=" << p.l3_off << " l4_off=" << p.l4_off << " split_off=" << p.split_off
	  << " l3_end=" << p.l3_end << " fragment=" << p.fragment
	  << " ipv4_csum_ok=" << p.ipv4_csum_ok << " proto=" << unsigned(p.proto)
	  << " src=" << hex(p.src.data(), 16) << " dst=" << hex(p.dst.data(), 16)
	  << " sport=" << p.sport << " dport=" << p.dport;
	return o.str();
}

// The frame as hex, 32 bytes a line; frames longer than `max` are cut.
inline std::string dump(const Frame &f, size_t max = 256)
{
	std::ostringstream o;
	o << "frame (" << f.size() << " bytes):\n";
	const size_t n = std::min(f.size(), max);
	for (size_t i = 0; i < n; i += 32)
		o << "  " << hex(f.data() + i, std::min<size_t>(32, n - i)) << "\n";
	if (n < f.size())
		o << "  ... " << f.size() - n << " more bytes\n";
	return o.str();
}

inline bool same(const Parsed &a, const Parsed &b)
{
	return a.l3 == b.l3 && a.l4 == b.l4 && a.vlans == b.vlans && a.l3_off == b.l3_off &&
	       a.l4_off == b.l4_off && a.split_off == b.split_off && a.l3_end == b.l3_end &&
	       a.fragment == b.fragment && a.ipv4_csum_ok == b.ipv4_csum_ok && a.proto == b.proto &&
	       a.src == b.src && a.dst == b.dst && a.sport == b.sport && a.dport == b.dport;
}

// The RTL's error flags as the behavioural result implies them.
struct Flags {
	bool l2 = false, l3 = false, l4 = false;
	bool operator==(const Flags &o) const { return l2 == o.l2 && l3 == o.l3 && l4 == o.l4; }
};
inline Flags expected_flags(const Frame &f, const Parsed &p)
{
	Flags x;
	x.l2 = f.size() < 14 || p.l3_off == 0;
	if (!x.l2) {
		unsigned type = f[p.l3_off - 2] << 8 | f[p.l3_off - 1];
		x.l3 = (type == 0x0800 || type == 0x86dd) && p.l3 == L3::None;
	}
	x.l4 = p.l3 != L3::None && !p.fragment && (p.proto == 6 || p.proto == 17) &&
	       p.l4 == L4::None;
	return x;
}

// ------------------------------------------------------------ structured

inline void put16(Frame &f, size_t at, unsigned v)
{
	if (at + 1 < f.size()) {
		f[at] = uint8_t(v >> 8);
		f[at + 1] = uint8_t(v);
	}
}

// Insert a VLAN tag (tpid) in front of the Ethertype at 12.
inline Frame add_tag(Frame f, unsigned tpid)
{
	const uint8_t tag[4] = {uint8_t(tpid >> 8), uint8_t(tpid), 0x00, 0x2a};
	f.insert(f.begin() + 12, tag, tag + 4);
	return f;
}

// Replace every VLAN tag of a frames::build() frame by the given TPIDs.
inline Frame retag(const Frame &f, unsigned vlans, const std::vector<unsigned> &tpids)
{
	Frame g(f.begin(), f.begin() + 12);
	for (unsigned t : tpids) {
		g.push_back(uint8_t(t >> 8));
		g.push_back(uint8_t(t));
		g.push_back(0x00);
		g.push_back(0x07);
	}
	g.insert(g.end(), f.begin() + 12 + 4 * vlans, f.end());
	return g;
}

// Every header combination, with a small payload.
inline std::vector<Frame> combinations(size_t payload)
{
	std::vector<Frame> out;
	const uint16_t frags[] = {0, 0x4000, 0x2000, 0x0001, 0x1fff, 0x6000, 0x8000};
	for (unsigned vlans = 0; vlans <= 2; vlans++) {
		for (unsigned ipo = 0; ipo <= 40; ipo += 4)
			for (uint8_t proto : {6, 17, 1, 47, 0}) {
				for (unsigned tcpo = 0; tcpo <= (proto == 6 ? 40u : 0u); tcpo += 4)
					for (uint16_t frag : frags) {
						if (frag && (tcpo % 12 || ipo % 8))
							continue;
						frames::Spec s;
						s.vlans = vlans;
						s.ip_options = ipo;
						s.proto = proto;
						s.tcp_options = tcpo;
						s.payload = payload;
						s.frag = frag;
						s.sport = uint16_t(1000 + ipo);
						s.dport = uint16_t(2000 + tcpo);
						out.push_back(frames::build(s));
					}
			}
		for (uint8_t next : {0, 43, 44, 60, 59, 51, 50})
			for (uint8_t proto : {6, 17, 58}) {
				for (unsigned tcpo = 0; tcpo <= (proto == 6 ? 40u : 0u);
				     tcpo += 8) {
					frames::Spec s;
					s.vlans = vlans;
					s.ipv6 = true;
					s.ipv6_next = next;
					s.proto = proto;
					s.tcp_options = tcpo;
					s.payload = payload;
					for (int i = 0; i < 16; i++) {
						s.src[i] = uint8_t(0x20 + i);
						s.dst[i] = uint8_t(0xf0 - i);
					}
					out.push_back(frames::build(s));
				}
			}
	}
	// Other Ethertypes, tag orders, a third tag, a tag with nothing after.
	frames::Spec base;
	base.payload = payload;
	const Frame v4 = frames::build(base);
	frames::Spec b6 = base;
	b6.ipv6 = true;
	const Frame v6 = frames::build(b6);
	for (unsigned type : {0x0806u, 0x88ccu, 0x9100u, 0x0000u, 0xffffu, 0x0801u, 0x86ddu}) {
		Frame f = v4;
		put16(f, 12, type);
		out.push_back(f);
	}
	const std::vector<std::vector<unsigned>> orders = {{0x8100},
							   {0x88a8},
							   {0x8100, 0x8100},
							   {0x88a8, 0x88a8},
							   {0x8100, 0x88a8},
							   {0x88a8, 0x8100},
							   {0x9100},
							   {0x8100, 0x9100},
							   {0x8100, 0x8100, 0x8100},
							   {0x88a8, 0x8100, 0x8100}};
	for (const auto &o : orders) {
		out.push_back(retag(v4, 0, o));
		out.push_back(retag(v6, 0, o));
	}
	return out;
}

// The shortest prefix that still holds every header byte the parser may
// read (QinQ + 60-byte IPv4 header + TCP up to its data offset), plus a few.
constexpr size_t kHeaderSpan = 22 + 60 + 60 + 4;

// Every truncation of f within its headers, and its full length.
inline void truncations(const Frame &f, std::vector<Frame> &out, size_t span = kHeaderSpan)
{
	for (size_t n = 0; n <= std::min(f.size(), span); n++)
		out.emplace_back(f.begin(), f.begin() + n);
	if (f.size() > span)
		out.push_back(f);
}

// Boundary values of every field the parser reads, one field at a time.
inline std::vector<Frame> field_edges(const Frame &f)
{
	std::vector<Frame> out;
	const Parsed p = devmemsim::parse_frame(f.data(), f.size());
	if (p.l3_off == 0)
		return out;
	const size_t l3 = p.l3_off;
	auto with = [&](size_t at, uint8_t v) {
		if (at < f.size()) {
			Frame g = f;
			g[at] = v;
			out.push_back(g);
		}
	};
	auto with16 = [&](size_t at, unsigned v) {
		if (at + 1 < f.size()) {
			Frame g = f;
			put16(g, at, v);
			out.push_back(g);
		}
	};
	// Ethertype / TPIDs before the L3 header.
	for (size_t at = 12; at + 1 < l3; at += 4)
		for (unsigned t : {0x0800u, 0x86ddu, 0x8100u, 0x88a8u, 0x0806u, 0x8101u})
			with16(at, t);
	// Version and header length: every value of the first byte.
	for (unsigned v = 0; v < 256; v++)
		with(l3, uint8_t(v));
	// Every protocol / next header value.
	const size_t proto_at = l3 + (p.l3 == L3::Ipv6 ? 6 : 9);
	for (unsigned v = 0; v < 256; v++)
		with(proto_at, uint8_t(v));
	const size_t rest = f.size() - l3;
	if (p.l3 == L3::Ipv4 || (f.size() > l3 && f[l3] >> 4 == 4)) {
		const size_t ihl = (f[l3] & 0xf) * 4u;
		for (long d = -2; d <= 2; d++) {
			for (long base : {long(ihl), long(rest), long(ihl) + 8, long(ihl) + 20, 0L})
				if (base + d >= 0 && base + d <= 0xffff)
					with16(l3 + 2, unsigned(base + d));
			if (p.l4_off)
				with16(l3 + 2,
				       unsigned(std::max<long>(0, long(p.l4_off - l3) + 20 + d)));
		}
		with16(l3 + 2, 0xffff);
		for (unsigned fr : {0x0000u, 0x2000u, 0x4000u, 0x8000u, 0x0001u, 0x1000u, 0x1fffu,
				    0xffffu, 0xdfffu, 0xc000u})
			with16(l3 + 6, fr);
		with16(l3 + 10, 0x0000); // checksum wrong (or right by chance)
		with16(l3 + 10, 0xffff);
		for (size_t i = 0; i < ihl && l3 + i < f.size(); i++) { // any corrupted byte
			Frame g = f;
			g[l3 + i] ^= 0x10;
			out.push_back(g);
		}
	}
	if (p.l3 == L3::Ipv6 || (f.size() > l3 && f[l3] >> 4 == 6)) {
		for (long d = -2; d <= 2; d++)
			for (long base : {long(rest) - 40, 0L, 8L, 20L})
				if (base + d >= 0 && base + d <= 0xffff)
					with16(l3 + 4, unsigned(base + d));
		with16(l3 + 4, 0xffff);
	}
	if (p.l4_off) {
		const size_t l4 = p.l4_off;
		for (unsigned v = 0; v < 16; v++)
			with(l4 + 12, uint8_t(v << 4 | 0x0a));
		with16(l4, 0);
		with16(l4 + 2, 0xffff);
	}
	return out;
}

// ------------------------------------------------------------ random

// Random bytes; half of them steered towards the paths that matter (an
// IP Ethertype, tags, a plausible version nibble), else rarely reached.
inline Frame random_frame(std::mt19937_64 &rng)
{
	std::uniform_int_distribution<int> byte(0, 255);
	size_t len;
	switch (rng() % 8) {
	case 0:
		len = rng() % 24;
		break;
	case 1:
		len = 60 + rng() % 1455;
		break;
	default:
		len = rng() % 160;
	}
	Frame f(len);
	for (auto &b : f)
		b = uint8_t(byte(rng));
	if (rng() % 2) {
		size_t at = 12;
		unsigned tags = rng() % 4;
		for (unsigned t = 0; t < tags; t++, at += 4)
			put16(f, at, rng() % 2 ? 0x8100 : 0x88a8);
		const bool v6 = rng() % 2;
		put16(f, at, v6 ? 0x86dd : 0x0800);
		const size_t l3 = at + 2;
		if (l3 < f.size() && rng() % 4)
			f[l3] = uint8_t((v6 ? 0x60 : 0x40) | (v6 ? f[l3] & 0xf : 5 + rng() % 11));
		if (rng() % 2 && l3 + 9 < f.size()) { // a length that fits, a TCP/UDP proto
			const size_t rest = f.size() - l3;
			if (v6) {
				put16(f, l3 + 4, unsigned(rest >= 40 ? rest - 40 - rng() % 3 : 0));
				f[l3 + 6] = rng() % 2 ? 6 : 17;
			} else {
				put16(f, l3 + 2, unsigned(rest - rng() % 3));
				f[l3 + 9] = rng() % 2 ? 6 : 17;
				put16(f, l3 + 6, rng() % 4 ? 0 : unsigned(rng()));
			}
		}
	}
	return f;
}

// A valid frame with 1..4 random edits: bytes set or flipped, cut short,
// lengthened, or a length field rewritten.
inline Frame mutate(Frame f, std::mt19937_64 &rng)
{
	const unsigned n = 1 + rng() % 4;
	for (unsigned k = 0; k < n; k++) {
		const size_t hdr = std::min<size_t>(f.size(), 100);
		switch (rng() % 7) {
		case 0:
			if (hdr)
				f[rng() % hdr] = uint8_t(rng());
			break;
		case 1:
			if (hdr)
				f[rng() % hdr] ^= uint8_t(1u << (rng() % 8));
			break;
		case 2:
			f.resize(rng() % (f.size() + 1));
			break;
		case 3:
			for (unsigned i = rng() % 64; i; i--)
				f.push_back(uint8_t(rng()));
			break;
		case 4:
			if (hdr >= 2) {
				size_t at = rng() % (hdr - 1);
				put16(f, at, rng() % 2 ? unsigned(rng() % 256) : unsigned(rng()));
			}
			break;
		case 5: { // a length field near the truth
			const Parsed p = devmemsim::parse_frame(f.data(), f.size());
			if (p.l3_off && p.l3_off + 6 < f.size()) {
				const long rest = long(f.size() - p.l3_off);
				const long d = long(rng() % 9) - 4;
				if (f[p.l3_off] >> 4 == 6)
					put16(f, p.l3_off + 4,
					      unsigned(std::max(0L, rest - 40 + d)));
				else
					put16(f, p.l3_off + 2, unsigned(std::max(0L, rest + d)));
			}
			break;
		}
		default: { // the TCP data offset
			const Parsed p = devmemsim::parse_frame(f.data(), f.size());
			if (p.l4_off && p.l4_off + 12 < f.size())
				f[p.l4_off + 12] = uint8_t(rng() << 4);
			break;
		}
		}
	}
	return f;
}

} // namespace gen
