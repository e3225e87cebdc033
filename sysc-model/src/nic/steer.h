// SPDX-License-Identifier: MIT
// Queue selection: the ntuple flow steering table and the Toeplitz hash
// (RSS contexts: rss.h).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>

#include "nic/parser.h"

namespace devmemsim
{

// Toeplitz hash of data under key (Microsoft RSS specification).
uint32_t toeplitz(const uint8_t *key, size_t key_len, const uint8_t *data, size_t len);

struct NtupleRule {
	bool valid = false;
	bool ipv6 = false;
	uint8_t proto = 0;
	uint16_t queue = 0;
	bool rss = false;    // v1.6: queue + the table entry of context rss_ctx
	uint8_t rss_ctx = 0; // committed only when < DMS_NIC_RSS_CONTEXTS
	uint16_t sport = 0, dport = 0, sport_mask = 0, dport_mask = 0;
	std::array<uint8_t, 16> src{}, dst{}, src_mask{}, dst_mask{};
};

bool ntuple_match(const NtupleRule &r, const Parsed &p);

} // namespace devmemsim
