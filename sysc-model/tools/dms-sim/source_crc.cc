// SPDX-License-Identifier: MIT
#include "source_crc.h"

#include "gpu/crc32c.h"

namespace dms_sim
{

SourceCrc::SourceCrc(const uint8_t *src, uint64_t len, uint32_t seg) : src_(src), seg_(seg)
{
	for (uint64_t off = 0; off + seg <= len; off += seg)
		seg_crc_.push_back(devmemsim::crc32c_update(0, src + off, seg));
	// shift_seg of each bit, then of each byte value by linearity.
	const std::vector<uint8_t> zeros(seg);
	uint32_t bit[32];
	for (unsigned b = 0; b < 32; b++)
		bit[b] = devmemsim::crc32c_update(1u << b, zeros.data(), seg);
	for (unsigned k = 0; k < 4; k++)
		for (unsigned v = 0; v < 256; v++) {
			uint32_t x = 0;
			for (unsigned b = 0; b < 8; b++)
				if (v >> b & 1)
					x ^= bit[8 * k + b];
			shift_[k][v] = x;
		}
}

uint32_t SourceCrc::update(uint32_t crc, uint64_t off, uint32_t len) const
{
	if (len != seg_ || off % seg_ || off / seg_ >= seg_crc_.size())
		return devmemsim::crc32c_update(crc, src_ + off, len);
	return shift_[0][crc & 0xff] ^ shift_[1][crc >> 8 & 0xff] ^ shift_[2][crc >> 16 & 0xff] ^
	       shift_[3][crc >> 24] ^ seg_crc_[off / seg_];
}

} // namespace dms_sim
