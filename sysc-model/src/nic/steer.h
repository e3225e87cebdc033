// SPDX-License-Identifier: MIT
// Queue selection: the ntuple flow steering table, then RSS (Toeplitz).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>

#include "nic/parser.h"

namespace devmemsim
{

// Toeplitz hash of data under key (Microsoft RSS specification).
uint32_t toeplitz(const uint8_t *key, size_t key_len, const uint8_t *data, size_t len);

// RSS hash input of a parsed frame: src addr, dst addr and, for TCP/UDP,
// src port, dst port. Returns false for non-IP frames (no hash).
bool rss_hash(const Parsed &p, const uint8_t *key, size_t key_len, uint32_t *hash);

struct NtupleRule {
	bool valid = false;
	bool ipv6 = false;
	uint8_t proto = 0;
	uint16_t queue = 0;
	uint16_t sport = 0, dport = 0, sport_mask = 0, dport_mask = 0;
	std::array<uint8_t, 16> src{}, dst{}, src_mask{}, dst_mask{};
};

bool ntuple_match(const NtupleRule &r, const Parsed &p);

} // namespace devmemsim
