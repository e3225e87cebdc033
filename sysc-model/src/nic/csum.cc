// SPDX-License-Identifier: MIT
#include "nic/csum.h"

#include <algorithm>

#if defined(__x86_64__)
#include <immintrin.h>
#endif

namespace devmemsim
{

#if defined(__x86_64__)
namespace
{

// 32 bytes at a time as little-endian 16-bit words added into 32-bit lanes,
// two accumulators so the adds do not wait for each other (the NIC sums every
// frame twice, on transmit and on receive). Consumes whole 32-byte blocks.
__attribute__((target("avx2"))) uint64_t le16_sum_avx2(const uint8_t *&p, size_t &len)
{
	const __m256i low16 = _mm256_set1_epi32(0xffff);
	uint64_t wide = 0;
	while (len >= 32) {
		// 2^16 words of at most 0xffff still fit a 32-bit lane.
		const size_t blocks = std::min(len / 32, size_t(1) << 16);
		const uint8_t *q = p; // a local, so the loop keeps it in a register
		__m256i lo = _mm256_setzero_si256(), hi = _mm256_setzero_si256();
		for (size_t i = 0; i < blocks; i++, q += 32) {
			const __m256i v = _mm256_loadu_si256(reinterpret_cast<const __m256i *>(q));
			lo = _mm256_add_epi32(lo, _mm256_and_si256(v, low16));
			hi = _mm256_add_epi32(hi, _mm256_srli_epi32(v, 16));
		}
		p = q;
		len -= blocks * 32;
		uint32_t lanes[16];
		_mm256_storeu_si256(reinterpret_cast<__m256i *>(lanes), lo);
		_mm256_storeu_si256(reinterpret_cast<__m256i *>(lanes + 8), hi);
		for (uint32_t lane : lanes)
			wide += lane;
	}
	return wide;
}

} // namespace
#endif

uint64_t inet_sum(const uint8_t *p, size_t len, uint64_t sum)
{
	// Little-endian 16- or 32-bit pieces (RFC 1071: the sum does not depend
	// on byte order), folded and byte-swapped back to network order:
	// congruent modulo 0xffff with the 16-bit sum, and nonzero exactly when
	// it is, so inet_fold() gives the same result.
	uint64_t wide = 0;
#if defined(__x86_64__)
	static const bool avx2 = __builtin_cpu_supports("avx2");
	if (avx2)
		wide = le16_sum_avx2(p, len);
#endif
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
