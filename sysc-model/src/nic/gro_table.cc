// SPDX-License-Identifier: MIT
// Hardware GRO's segment rules and aggregates; see gro_table.h.
#include "nic/gro_table.h"

#include <algorithm>

#include "nic/csum.h"

namespace devmemsim
{

namespace
{

constexpr uint8_t kTcpAck = 0x10, kTcpPsh = 0x08, kTcpEce = 0x40, kTcpCwr = 0x80;
constexpr uint8_t kHopByHop = 0, kIpip = 4, kTcp = 6, kIpv6 = 41, kDstOpts = 60;
constexpr unsigned kMaxExtHeaders = 4;

uint16_t be16(const uint8_t *p)
{
	return static_cast<uint16_t>(p[0] << 8 | p[1]);
}

uint32_t be32(const uint8_t *p)
{
	return uint32_t(p[0]) << 24 | uint32_t(p[1]) << 16 | uint32_t(p[2]) << 8 | p[3];
}

void put16(uint8_t *p, size_t v)
{
	p[0] = static_cast<uint8_t>(v >> 8);
	p[1] = static_cast<uint8_t>(v);
}

void zero(std::vector<uint8_t> &v, size_t at, size_t n)
{
	std::fill_n(v.begin() + static_cast<std::ptrdiff_t>(at), n, 0);
}

// Zero an IP header's fields segments of one aggregate may differ in.
void mask_ip(std::vector<uint8_t> &key, L3 l3, size_t off)
{
	if (l3 == L3::Ipv4) {
		zero(key, off + 2, 4); // total length, ID
		zero(key, off + 10, 2);
	} else if (l3 == L3::Ipv6) {
		zero(key, off + 4, 2); // payload length
	}
}

// Rewrite an IP header's length (and IPv4 checksum) for a frame of len bytes.
void fix_ip(std::vector<uint8_t> &frame, L3 l3, size_t off)
{
	uint8_t *ip = frame.data() + off;
	const size_t ip_len = frame.size() - off;
	if (l3 == L3::Ipv4) {
		put16(ip + 2, ip_len);
		put16(ip + 10, 0);
		put16(ip + 10, static_cast<uint16_t>(~inet_fold(inet_sum(ip, 20))));
	} else if (l3 == L3::Ipv6) {
		put16(ip + 4, ip_len - 40);
	}
}

// The headers of seg with the fields segments of one aggregate may
// differ in zeroed (GroSegment::key).
std::vector<uint8_t> masked_headers(const uint8_t *f, const Parsed &p, const GroOuter &outer)
{
	std::vector<uint8_t> key(f, f + p.split_off);
	mask_ip(key, p.l3, p.l3_off);
	mask_ip(key, outer.l3, outer.off);
	zero(key, p.l4_off + 4, 4); // sequence number
	key[p.l4_off + 13] &= static_cast<uint8_t>(~kTcpPsh);
	zero(key, p.l4_off + 14, 4); // window, checksum
	return key;
}

} // namespace

GroSegment gro_segment(const uint8_t *f, size_t len, const Parsed &p, bool csum_ok,
		       const GroOuter &outer)
{
	GroSegment s;
	if (p.l4 != L4::Tcp || !p.split_off || p.l3_end > len || !csum_ok || !p.ipv4_csum_ok)
		return s;
	if (p.l3 == L3::Ipv4 && (f[p.l3_off] & 0xf) != 5)
		return s; // IPv4 options
	// ECE and CWR are part of the key: a segment joins only an aggregate
	// whose first segment had the same (as Linux's tcp_gro_receive()).
	const uint8_t flags = f[p.l4_off + 13];
	if ((flags & ~(kTcpPsh | kTcpEce | kTcpCwr)) != kTcpAck || p.l3_end == p.split_off)
		return s;
	s.hdr_len = p.split_off;
	s.pay_len = p.l3_end - p.split_off;
	s.seq = be32(f + p.l4_off + 4);
	if (p.l3 == L3::Ipv4)
		s.ip_id = be16(f + p.l3_off + 4);
	if (outer.l3 == L3::Ipv4)
		s.outer_id = be16(f + outer.off + 4);
	s.push = flags & kTcpPsh;
	s.coalescible = true;
	s.opens = !s.push;
	s.key = masked_headers(f, p, outer);
	return s;
}

bool gro_ipv6_ext_tcp(const uint8_t *f, const Parsed &wire, Parsed &p)
{
	if (wire.l3 != L3::Ipv6 || wire.l4 != L4::None || wire.fragment)
		return false;
	uint8_t next = wire.proto;
	size_t off = wire.l3_off + 40;
	unsigned n = 0;
	while ((next == kHopByHop && n == 0) || next == kDstOpts) {
		if (++n > kMaxExtHeaders || wire.l3_end < off + 8)
			return false;
		next = f[off];
		off += (f[off + 1] + 1u) * 8;
	}
	if (!n || next != kTcp || wire.l3_end < off + 20)
		return false;
	const size_t doff = (f[off + 12] >> 4) * 4u;
	if (doff < 20 || wire.l3_end < off + doff)
		return false;
	p = wire;
	p.l4 = L4::Tcp;
	p.proto = kTcp;
	p.l4_off = off;
	p.split_off = off + doff;
	p.sport = be16(f + off);
	p.dport = be16(f + off + 2);
	return true;
}

namespace
{

// The inner IP header of a tunnel at off, as gro_segment() takes it (IPv4
// without options and not a fragment, or IPv6 straight to TCP), filling
// it in: true if its length ends where the outer packet does.
bool inner_ip(const uint8_t *f, size_t off, uint8_t proto, size_t end, Parsed &q)
{
	q.src.fill(0);
	q.dst.fill(0);
	q.l3_off = off;
	if (proto == kIpip) {
		if (end < off + 20 || f[off] != 0x45 || be16(f + off + 2) != end - off ||
		    (be16(f + off + 6) & 0x3fff) || f[off + 9] != kTcp)
			return false;
		q.l3 = L3::Ipv4;
		q.ipv4_csum_ok = q.ipv4_csum_ok && inet_fold(inet_sum(f + off, 20)) == 0xffff;
		std::copy_n(f + off + 12, 4, q.src.begin());
		std::copy_n(f + off + 16, 4, q.dst.begin());
		q.l4_off = off + 20;
		return true;
	}
	if (end < off + 40 || f[off] >> 4 != 6 || be16(f + off + 4) != end - off - 40 ||
	    f[off + 6] != kTcp)
		return false;
	q.l3 = L3::Ipv6;
	std::copy_n(f + off + 8, 16, q.src.begin());
	std::copy_n(f + off + 24, 16, q.dst.begin());
	q.l4_off = off + 40;
	return true;
}

} // namespace

bool gro_tunnel_tcp(const uint8_t *f, const Parsed &wire, Parsed &p, GroOuter &outer)
{
	if (wire.l3 == L3::None || wire.l4 != L4::None || wire.fragment ||
	    (wire.proto != kIpip && wire.proto != kIpv6))
		return false;
	if (wire.l3 == L3::Ipv4 && (f[wire.l3_off] & 0xf) != 5)
		return false; // outer IPv4 options
	Parsed q = wire;
	const size_t off = wire.l3_off + (wire.l3 == L3::Ipv4 ? 20 : 40);
	if (!inner_ip(f, off, wire.proto, wire.l3_end, q) || wire.l3_end < q.l4_off + 20)
		return false;
	const size_t doff = (f[q.l4_off + 12] >> 4) * 4u;
	if (doff < 20 || wire.l3_end < q.l4_off + doff)
		return false;
	q.l4 = L4::Tcp;
	q.proto = kTcp;
	q.split_off = q.l4_off + doff;
	q.sport = be16(f + q.l4_off);
	q.dport = be16(f + q.l4_off + 2);
	p = q;
	outer = {wire.l3, wire.l3_off};
	return true;
}

bool GroAggregate::follows(const GroSegment &seg) const
{
	if (seg.key != key || seg.seq != next_seq || seg.pay_len > gso_size)
		return false;
	// IPv4 IDs go up by one per segment or stay fixed (as Linux's GRO
	// takes them, DF or not); one aggregate does not mix the two. Each
	// IPv4 header of a tunnel keeps its own rule.
	const uint16_t ids[2] = {seg.ip_id, seg.outer_id};
	const bool v4[2] = {p.l3 == L3::Ipv4, outer.l3 == L3::Ipv4};
	for (int i = 0; i < 2; i++) {
		const int step = static_cast<uint16_t>(ids[i] - last_id[i]);
		if (v4[i] && (step > 1 || (id_step[i] >= 0 && step != id_step[i])))
			return false;
	}
	return true;
}

bool GroAggregate::room_for(size_t n, const GroLimits &lim) const
{
	const size_t len = frame.size() + n;
	// On a PACK queue the frame may start as far into a buffer as a fill
	// (a multiple of DMS_NIC_PACK_ALIGN below the size) goes.
	const size_t start =
		lim.pack ? (lim.pbuf_size - 1) / DMS_NIC_PACK_ALIGN * DMS_NIC_PACK_ALIGN : 0;
	const size_t bufs = (start + len + lim.pbuf_size - 1) / lim.pbuf_size;
	const size_t ip_off = outer.l3 != L3::None ? outer.off : p.l3_off; // the outermost
	return segs + 1 <= lim.max_segs && len - ip_off <= lim.max_bytes && bufs <= lim.max_bufs;
}

void GroAggregate::append(const uint8_t *f, const GroSegment &seg)
{
	if (segs == 0) {
		key = seg.key;
		hdr_len = seg.hdr_len;
		frame.assign(f, f + seg.hdr_len);
		gso_size = static_cast<uint32_t>(seg.pay_len);
	} else if (segs == 1) {
		id_step[0] = static_cast<uint16_t>(seg.ip_id - last_id[0]);
		id_step[1] = static_cast<uint16_t>(seg.outer_id - last_id[1]);
	}
	frame.insert(frame.end(), f + seg.hdr_len, f + seg.hdr_len + seg.pay_len);
	next_seq = seg.seq + static_cast<uint32_t>(seg.pay_len);
	last_id = {seg.ip_id, seg.outer_id};
	push = push || seg.push;
	segs++;
}

std::vector<uint8_t> GroAggregate::finish()
{
	std::vector<uint8_t> out = std::move(frame);
	frame.clear();
	fix_ip(out, p.l3, p.l3_off);
	fix_ip(out, outer.l3, outer.off);
	if (push)
		out[p.l4_off + 13] |= kTcpPsh;
	return out;
}

uint32_t gro_flow_hash(const Parsed &p)
{
	uint32_t h = 2166136261u; // FNV-1a
	auto mix = [&h](const uint8_t *b, size_t n) {
		for (size_t k = 0; k < n; k++)
			h = (h ^ b[k]) * 16777619u;
	};
	mix(p.src.data(), p.src.size());
	mix(p.dst.data(), p.dst.size());
	const uint8_t ports[4] = {uint8_t(p.sport >> 8), uint8_t(p.sport), uint8_t(p.dport >> 8),
				  uint8_t(p.dport)};
	mix(ports, sizeof(ports));
	return h;
}

int GroTable::find(const Parsed &p, uint32_t flow) const
{
	for (size_t i = 0; i < open.size(); i++) {
		const Parsed &o = open[i].p;
		if (open[i].flow == flow && o.l3 == p.l3 && o.src == p.src && o.dst == p.dst &&
		    o.sport == p.sport && o.dport == p.dport)
			return static_cast<int>(i);
	}
	return -1;
}

GroAggregate GroTable::take(int i)
{
	GroAggregate a = std::move(open[size_t(i)]);
	open.erase(open.begin() + i);
	held -= a.frame.size();
	return a;
}

} // namespace devmemsim
