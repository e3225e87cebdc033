// SPDX-License-Identifier: MIT
#include "segment.h"

#include <cstring>

namespace dms_sim
{

namespace
{

void put16(uint8_t *p, uint16_t v)
{
	p[0] = uint8_t(v >> 8);
	p[1] = uint8_t(v);
}

void put32(uint8_t *p, uint32_t v)
{
	put16(p, uint16_t(v >> 16));
	put16(p + 2, uint16_t(v));
}

uint16_t get16(const uint8_t *p)
{
	return uint16_t(p[0] << 8 | p[1]);
}

uint32_t get32(const uint8_t *p)
{
	return uint32_t(get16(p)) << 16 | get16(p + 2);
}

uint16_t ipv4_csum(const uint8_t *h)
{
	uint32_t sum = 0;
	for (int i = 0; i < 20; i += 2)
		sum += uint32_t(h[i]) << 8 | h[i + 1];
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return uint16_t(~sum);
}

} // namespace

void build_headers(uint8_t *out, const Endpoint &src, const Endpoint &dst, uint32_t seq,
		   uint32_t ack, uint8_t flags, uint32_t payload_len)
{
	std::memset(out, 0, kHdrBytes);
	std::memcpy(out, dst.mac, 6);
	std::memcpy(out + 6, src.mac, 6);
	put16(out + 12, 0x0800);
	uint8_t *ip = out + 14;
	ip[0] = 0x45;
	put16(ip + 2, uint16_t(20 + 32 + payload_len));
	put16(ip + 6, 0x4000); // DF
	ip[8] = 64;
	ip[9] = 6;
	put32(ip + 12, src.ip);
	put32(ip + 16, dst.ip);
	put16(ip + 10, ipv4_csum(ip));
	uint8_t *tcp = ip + 20;
	put16(tcp, src.port);
	put16(tcp + 2, dst.port);
	put32(tcp + 4, seq);
	put32(tcp + 8, ack);
	tcp[12] = 8 << 4; // 32-byte header
	tcp[13] = flags;
	put16(tcp + 14, 0xffff);
	// Options: NOP, NOP, timestamps (kind 8, length 10; values not modelled).
	tcp[20] = 1;
	tcp[21] = 1;
	tcp[22] = 8;
	tcp[23] = 10;
}

bool parse_segment(const RxFrame &f, Segment *s)
{
	if (f.hdr_len < kHdrBytes || f.hdr[12] != 0x08 || f.hdr[13] != 0x00 || f.hdr[23] != 6)
		return false;
	const uint8_t *tcp = f.hdr + 14 + 4 * (f.hdr[14] & 0xf);
	s->src_port = get16(tcp);
	s->dst_port = get16(tcp + 2);
	s->seq = get32(tcp + 4);
	s->ack = get32(tcp + 8);
	s->flags = tcp[13];
	s->payload_off = size_t(tcp - f.hdr) + 4 * (tcp[12] >> 4);
	s->payload_len = f.hdr_len > s->payload_off ? f.hdr_len - s->payload_off : 0;
	return true;
}

} // namespace dms_sim
