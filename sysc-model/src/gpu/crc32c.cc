// SPDX-License-Identifier: MIT
#include "gpu/crc32c.h"

#include <array>

namespace devmemsim
{
namespace
{

using Table = std::array<std::array<uint32_t, 256>, 4>;

// Slicing-by-4 tables.
Table make_tables()
{
	Table t{};
	for (uint32_t i = 0; i < 256; i++) {
		uint32_t c = i;
		for (int k = 0; k < 8; k++)
			c = (c >> 1) ^ (0x82f63b78u & (0u - (c & 1)));
		t[0][i] = c;
	}
	for (uint32_t i = 0; i < 256; i++)
		for (int s = 1; s < 4; s++)
			t[s][i] = (t[s - 1][i] >> 8) ^ t[0][t[s - 1][i] & 0xff];
	return t;
}

const Table &tables()
{
	static const Table t = make_tables();
	return t;
}

#if defined(__x86_64__)
// Feeding a CRC n zero bytes is linear in the CRC, so one table per CRC byte
// does it in four lookups: this joins CRCs of consecutive blocks.
Table make_shift(size_t n)
{
	const auto &t0 = tables()[0];
	uint32_t bit[32];
	for (unsigned b = 0; b < 32; b++) {
		uint32_t c = 1u << b;
		for (size_t i = 0; i < n; i++)
			c = (c >> 8) ^ t0[c & 0xff];
		bit[b] = c;
	}
	Table s{};
	for (unsigned k = 0; k < 4; k++)
		for (unsigned v = 0; v < 256; v++)
			for (unsigned b = 0; b < 8; b++)
				if (v >> b & 1)
					s[k][v] ^= bit[8 * k + b];
	return s;
}

uint32_t shift(const Table &s, uint32_t crc)
{
	return s[0][crc & 0xff] ^ s[1][crc >> 8 & 0xff] ^ s[2][crc >> 16 & 0xff] ^ s[3][crc >> 24];
}

uint64_t load64(const uint8_t *p)
{
	uint64_t v;
	__builtin_memcpy(&v, p, 8);
	return v;
}

// The CRC32 instruction takes 3 cycles but can start every cycle: three
// independent streams over three n-byte blocks keep it busy, and the block
// CRCs are joined with the n-byte shift s (n a multiple of 8).
__attribute__((target("sse4.2"))) uint32_t crc32c_3way(uint32_t crc, const uint8_t *&p, size_t &len,
						       size_t n, const Table &s)
{
	for (; len >= 3 * n; p += 3 * n, len -= 3 * n) {
		uint64_t c0 = crc, c1 = 0, c2 = 0;
		for (size_t i = 0; i < n; i += 8) {
			c0 = __builtin_ia32_crc32di(c0, load64(p + i));
			c1 = __builtin_ia32_crc32di(c1, load64(p + n + i));
			c2 = __builtin_ia32_crc32di(c2, load64(p + 2 * n + i));
		}
		crc = shift(s, shift(s, static_cast<uint32_t>(c0)) ^ static_cast<uint32_t>(c1)) ^
		      static_cast<uint32_t>(c2);
	}
	return crc;
}

// SSE 4.2's CRC32 instruction computes exactly this CRC, 8 bytes at a time
// (dms-sim checks every payload byte with it).
__attribute__((target("sse4.2"))) uint32_t crc32c_sse42(uint32_t crc, const uint8_t *p, size_t len)
{
	// Long blocks for whole segments, short ones for what is left.
	static const Table long_shift = make_shift(2048), short_shift = make_shift(128);
	crc = crc32c_3way(crc, p, len, 2048, long_shift);
	crc = crc32c_3way(crc, p, len, 128, short_shift);
	uint64_t c = crc;
	for (; len >= 8; p += 8, len -= 8)
		c = __builtin_ia32_crc32di(c, load64(p));
	for (; len; len--)
		c = __builtin_ia32_crc32qi(static_cast<uint32_t>(c), *p++);
	return static_cast<uint32_t>(c);
}
#endif

} // namespace

uint32_t crc32c_update_portable(uint32_t crc, const void *data, size_t len)
{
	const Table &t = tables();
	auto p = static_cast<const uint8_t *>(data);
	while (len >= 4) {
		crc ^= static_cast<uint32_t>(p[0]) | static_cast<uint32_t>(p[1]) << 8 |
		       static_cast<uint32_t>(p[2]) << 16 | static_cast<uint32_t>(p[3]) << 24;
		crc = t[3][crc & 0xff] ^ t[2][(crc >> 8) & 0xff] ^ t[1][(crc >> 16) & 0xff] ^
		      t[0][crc >> 24];
		p += 4;
		len -= 4;
	}
	while (len--)
		crc = (crc >> 8) ^ t[0][(crc ^ *p++) & 0xff];
	return crc;
}

uint32_t crc32c_update(uint32_t crc, const void *data, size_t len)
{
#if defined(__x86_64__)
	static const bool sse42 = __builtin_cpu_supports("sse4.2");
	if (sse42)
		return crc32c_sse42(crc, static_cast<const uint8_t *>(data), len);
#endif
	return crc32c_update_portable(crc, data, len);
}

} // namespace devmemsim
