// SPDX-License-Identifier: MIT
#include "regfile.h"

#include "devmemsim/regs_common.h"

namespace devmemsim
{

uint64_t RegFile::read(uint64_t off, unsigned size)
{
	if (off > UINT32_MAX - 8)
		return size == 8 ? UINT64_MAX : DMS_REG_UNDEFINED;
	uint32_t o = static_cast<uint32_t>(off);
	if (size == 4 && !(o & 3))
		return read32(o);
	if (size == 8 && !(o & 7))
		return read32(o) | static_cast<uint64_t>(read32(o + 4)) << 32;
	return size >= 8 ? UINT64_MAX : (1ull << (size * 8)) - 1;
}

void RegFile::write(uint64_t off, uint64_t val, unsigned size)
{
	if (off > UINT32_MAX - 8)
		return;
	uint32_t o = static_cast<uint32_t>(off);
	if (size == 4 && !(o & 3)) {
		write32(o, static_cast<uint32_t>(val));
	} else if (size == 8 && !(o & 7)) {
		write32(o, static_cast<uint32_t>(val));
		write32(o + 4, static_cast<uint32_t>(val >> 32));
	}
}

} // namespace devmemsim
