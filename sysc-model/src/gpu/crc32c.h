// SPDX-License-Identifier: MIT
// CRC32C (Castagnoli, reflected polynomial 0x82f63b78), as Linux's
// crc32c(crc, data, len): no inversion in or out.
#pragma once

#include <cstddef>
#include <cstdint>

namespace devmemsim
{

uint32_t crc32c_update(uint32_t crc, const void *data, size_t len);

// The same without CPU-specific instructions (the reference the fast path is
// tested against).
uint32_t crc32c_update_portable(uint32_t crc, const void *data, size_t len);

} // namespace devmemsim
