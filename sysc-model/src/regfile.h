// SPDX-License-Identifier: MIT
// Register access rules shared by the devices' BAR0 register files.
#pragma once

#include <cstdint>

namespace devmemsim
{

// 64-bit device registers are pairs of 32-bit registers (low first).
inline uint32_t lo32(uint64_t v)
{
	return static_cast<uint32_t>(v);
}
inline uint32_t hi32(uint64_t v)
{
	return static_cast<uint32_t>(v >> 32);
}
inline void set_lo(uint64_t &v, uint32_t x)
{
	v = (v & ~0xffffffffull) | x;
}
inline void set_hi(uint64_t &v, uint32_t x)
{
	v = (v & 0xffffffffull) | static_cast<uint64_t>(x) << 32;
}

// A device's 32-bit register file. Accesses follow the datasheet: aligned
// 32-bit accesses reach one register, aligned 64-bit accesses two (low
// register first); anything else reads all-ones and writes are dropped.
class RegFile
{
public:
	virtual ~RegFile() = default;

	uint64_t read(uint64_t off, unsigned size);
	void write(uint64_t off, uint64_t val, unsigned size);

protected:
	// Read a 32-bit register; unknown offsets return DMS_REG_UNDEFINED.
	virtual uint32_t read32(uint32_t off) = 0;
	// Write a 32-bit register; unknown or read-only offsets ignore it.
	virtual void write32(uint32_t off, uint32_t val) = 0;
};

} // namespace devmemsim
