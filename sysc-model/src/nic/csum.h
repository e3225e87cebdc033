// SPDX-License-Identifier: MIT
// Internet checksum (RFC 1071) helpers and TCP/UDP checksums over IPv4
// and IPv6 pseudo-headers (RFC 793, RFC 768, RFC 8200 §8.1).
#pragma once

#include <cstddef>
#include <cstdint>

#include "nic/parser.h"

namespace devmemsim
{

// One's-complement sum of 16-bit big-endian words (not folded).
uint64_t inet_sum(const uint8_t *p, size_t len, uint64_t sum = 0);
// Fold to 16 bits.
uint16_t inet_fold(uint64_t sum);

// True when the frame's TCP/UDP checksum (and IPv4 header checksum) are
// right. p must come from parse_frame(frame) with l4 != None.
bool l4_csum_ok(const uint8_t *frame, const Parsed &p);
// Compute and store the TCP/UDP checksum of a frame in place.
void l4_csum_fill(uint8_t *frame, const Parsed &p);

} // namespace devmemsim
