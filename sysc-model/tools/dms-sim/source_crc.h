// SPDX-License-Identifier: MIT
// The sender's side of dms-sim's verification: the CRC32C of what a
// stream sends from its repeating source, without a pass over the bytes
// for whole segments. The CRC register is linear: running register c
// through data D gives shift_n(c) XOR crc(0, D), where shift_n runs c
// through n zero bytes. So the CRC of every segment-aligned segment of the
// source is computed once, and a segment's update is shift_n (four table
// lookups) XOR that. Other pieces (messages' segments) take the direct way.
#pragma once

#include <array>
#include <cstdint>
#include <vector>

namespace dms_sim
{

class SourceCrc
{
public:
	// The source: len bytes at src, segments of seg bytes from offset 0.
	SourceCrc(const uint8_t *src, uint64_t len, uint32_t seg);
	// crc run through len bytes of the source from offset off.
	uint32_t update(uint32_t crc, uint64_t off, uint32_t len) const;

private:
	const uint8_t *src_;
	uint32_t seg_;
	std::vector<uint32_t> seg_crc_;			 // crc(0, segment i)
	std::array<std::array<uint32_t, 256>, 4> shift_; // shift_seg, a byte of c at a time
};

} // namespace dms_sim
