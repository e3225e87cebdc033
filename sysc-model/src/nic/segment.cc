// SPDX-License-Identifier: MIT
// Segmentation as Linux's software GSO does it (net/ipv4/tcp_offload.c,
// udp_offload.c): every segment gets the super-frame's headers with its
// own IP length, IPv4 ID (+1 per segment) and header checksum, TCP
// sequence number (+mss per segment; FIN and PSH only on the last, CWR
// only on the first) or UDP length, and a full L4 checksum.
#include "nic/segment.h"

#include <cstring>

#include "devmemsim/nic_desc.h"
#include "devmemsim/nic_regs.h"
#include "nic/csum.h"

namespace devmemsim
{

namespace
{

constexpr uint8_t kTcpFin = 0x01, kTcpPsh = 0x08, kTcpCwr = 0x80;
// Ethernet + IPv4 + UDP: the shortest headers a segment can have.
constexpr size_t kMinHdr = 14 + 20 + 8;

void put16(uint8_t *p, size_t v)
{
	p[0] = static_cast<uint8_t>(v >> 8);
	p[1] = static_cast<uint8_t>(v);
}

uint16_t get16(const uint8_t *p)
{
	return static_cast<uint16_t>(p[0] << 8 | p[1]);
}

uint32_t get32(const uint8_t *p)
{
	return static_cast<uint32_t>(get16(p)) << 16 | get16(p + 2);
}

bool one_kind(unsigned kind)
{
	return kind == DMS_TX_SEG_TCP4 || kind == DMS_TX_SEG_TCP6 || kind == DMS_TX_SEG_UDP;
}

} // namespace

const char *Segmenter::plan(const uint8_t *f, size_t len, const SegRequest &r, unsigned mtu)
{
	f_ = f;
	len_ = len;
	hdr_ = r.hdr_len;
	mss_ = r.mss;
	segs_ = 0;
	if (const char *why = check_sizes(len, r, mtu))
		return why;
	if (const char *why = check_headers(r))
		return why;
	if (hdr_ - p_.l3_off + mss_ > mtu)
		return "segments longer than the MTU";
	return nullptr;
}

const char *Segmenter::check_sizes(size_t len, const SegRequest &r, unsigned mtu)
{
	if (!one_kind(r.kind))
		return "not exactly one segmentation kind";
	if (r.mss < DMS_NIC_TSO_MIN_MSS || r.mss > mtu)
		return "MSS out of range";
	if (r.hdr_len < kMinHdr || r.hdr_len > DMS_NIC_TSO_MAX_HDR)
		return "header length out of range";
	if (len <= r.hdr_len)
		return "no payload";
	const size_t pay = len - r.hdr_len;
	if (pay > DMS_NIC_TSO_MAX_PAYLOAD)
		return "payload too long";
	if ((pay + r.mss - 1) / r.mss > DMS_NIC_TSO_MAX_SEGS)
		return "too many segments";
	segs_ = (pay + r.mss - 1) / r.mss;
	return nullptr;
}

// Parse the headers as they will be in the first segment (with its IP
// length), so the parser's own checks apply; they must end at hdr_len.
const char *Segmenter::check_headers(const SegRequest &r)
{
	const size_t l3 = parse_frame(f_, hdr_).l3_off;
	std::vector<uint8_t> probe(f_, f_ + hdr_ + seg_payload(0));
	const unsigned version = l3 < hdr_ ? probe[l3] >> 4 : 0;
	if (version == 4 && hdr_ >= l3 + 20)
		put16(&probe[l3 + 2], probe.size() - l3);
	else if (version == 6 && hdr_ >= l3 + 40)
		put16(&probe[l3 + 4], probe.size() - l3 - 40);
	else
		return "no IPv4 or IPv6 header";
	p_ = parse_frame(probe.data(), probe.size());
	const bool l3_ok =
		r.kind == DMS_TX_SEG_UDP || (r.kind == DMS_TX_SEG_TCP4) == (p_.l3 == L3::Ipv4);
	const L4 l4 = r.kind == DMS_TX_SEG_UDP ? L4::Udp : L4::Tcp;
	if (p_.l3 == L3::None || p_.l4 != l4 || !l3_ok)
		return "headers do not match the segmentation kind";
	if (p_.split_off != hdr_)
		return "header length does not match the headers";
	if (p_.l3 == L3::Ipv4)
		ip_id_ = get16(f_ + p_.l3_off + 4);
	if (p_.l4 == L4::Tcp) {
		seq_ = get32(f_ + p_.l4_off + 4);
		tcp_flags_ = f_[p_.l4_off + 13];
	}
	return nullptr;
}

size_t Segmenter::seg_payload(size_t i) const
{
	const size_t off = i * mss_, pay = len_ - hdr_;
	return pay - off < mss_ ? pay - off : mss_;
}

void Segmenter::build(size_t i, std::vector<uint8_t> &out) const
{
	const size_t n = seg_payload(i);
	out.resize(hdr_ + n);
	std::memcpy(out.data(), f_, hdr_);
	std::memcpy(out.data() + hdr_, f_ + hdr_ + i * mss_, n);
	fix_headers(i, out.data(), out.size());
	Parsed p = p_;
	p.l3_end = out.size();
	l4_csum_fill(out.data(), p);
}

void Segmenter::fix_headers(size_t i, uint8_t *s, size_t len) const
{
	const size_t l3 = p_.l3_off, l4 = p_.l4_off;
	if (p_.l3 == L3::Ipv4) {
		put16(s + l3 + 2, len - l3);
		put16(s + l3 + 4, static_cast<uint16_t>(ip_id_ + i));
		put16(s + l3 + 10, 0);
		put16(s + l3 + 10, static_cast<uint16_t>(~inet_fold(inet_sum(s + l3, l4 - l3))));
	} else {
		put16(s + l3 + 4, len - l3 - 40);
	}
	if (p_.l4 == L4::Udp) {
		put16(s + l4 + 4, len - l4);
		return;
	}
	const uint32_t seq = seq_ + static_cast<uint32_t>(i * mss_);
	put16(s + l4 + 4, seq >> 16);
	put16(s + l4 + 6, seq & 0xffff);
	uint8_t flags = tcp_flags_;
	if (i + 1 < segs_)
		flags &= static_cast<uint8_t>(~(kTcpFin | kTcpPsh));
	if (i)
		flags &= static_cast<uint8_t>(~kTcpCwr);
	s[l4 + 13] = flags;
}

} // namespace devmemsim
