// SPDX-License-Identifier: MIT
#include "nic/csum.h"

namespace devmemsim
{

uint64_t inet_sum(const uint8_t *p, size_t len, uint64_t sum)
{
	// Eight bytes at a time as little-endian 32-bit halves (RFC 1071: the
	// sum does not depend on byte order), folded and byte-swapped back to
	// network order: congruent modulo 0xffff with the 16-bit sum, and
	// nonzero exactly when it is, so inet_fold() gives the same result.
	uint64_t wide = 0;
	for (; len >= 8; p += 8, len -= 8) {
		uint64_t v;
		__builtin_memcpy(&v, p, 8);
		wide += (v & 0xffffffffu) + (v >> 32);
	}
	if (wide) {
		const uint16_t le = inet_fold(wide);
		sum += static_cast<uint16_t>(le << 8 | le >> 8);
	}
	for (; len >= 2; p += 2, len -= 2)
		sum += static_cast<uint64_t>(p[0] << 8 | p[1]);
	if (len)
		sum += static_cast<uint64_t>(p[0] << 8);
	return sum;
}

uint16_t inet_fold(uint64_t sum)
{
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return static_cast<uint16_t>(sum);
}

namespace
{

// Sum of the pseudo-header and the L4 segment, checksum field included.
uint64_t l4_sum(const uint8_t *f, const Parsed &p)
{
	const size_t seg = p.l3_end - p.l4_off;
	uint64_t sum = p.l3 == L3::Ipv4 ? inet_sum(p.src.data(), 4) + inet_sum(p.dst.data(), 4)
					: inet_sum(p.src.data(), 16) + inet_sum(p.dst.data(), 16);
	sum += p.proto;
	sum += seg & 0xffff;
	sum += seg >> 16;
	return inet_sum(f + p.l4_off, seg, sum);
}

size_t csum_field(const Parsed &p)
{
	return p.l4_off + (p.l4 == L4::Tcp ? 16 : 6);
}

} // namespace

bool l4_csum_ok(const uint8_t *f, const Parsed &p)
{
	if (p.l4 == L4::None || (p.l3 == L3::Ipv4 && !p.ipv4_csum_ok))
		return false;
	// UDP over IPv4 may carry no checksum (zero field).
	if (p.l4 == L4::Udp && p.l3 == L3::Ipv4 && !f[csum_field(p)] && !f[csum_field(p) + 1])
		return true;
	return inet_fold(l4_sum(f, p)) == 0xffff;
}

void l4_csum_fill(uint8_t *f, const Parsed &p)
{
	if (p.l4 == L4::None)
		return;
	size_t at = csum_field(p);
	f[at] = f[at + 1] = 0;
	uint16_t c = static_cast<uint16_t>(~inet_fold(l4_sum(f, p)));
	if (p.l4 == L4::Udp && !c)
		c = 0xffff; // RFC 768: a computed zero is sent as all ones
	f[at] = static_cast<uint8_t>(c >> 8);
	f[at + 1] = static_cast<uint8_t>(c);
}

} // namespace devmemsim
