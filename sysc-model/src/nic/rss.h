// SPDX-License-Identifier: MIT
// RSS contexts (nic_regs.h, v1.6): what a context holds and the hash it
// computes over a parsed frame, per flow class and input transform.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>

#include "devmemsim/nic_regs.h"
#include "nic/parser.h"

namespace devmemsim
{

// The fields each class can hash (others are dropped on write).
uint32_t rss_class_fields(unsigned cls);

struct RssContext {
	RssContext();
	std::array<uint8_t, DMS_NIC_RSS_KEY52_SIZE> key{}; // v1.7: bytes 40..51 in KEY_EXT
	std::array<uint32_t, DMS_NIC_RSS_INDIR_SIZE> indir{};
	uint32_t indir_size = DMS_NIC_RSS_INDIR_SIZE;
	uint32_t xfrm = DMS_NIC_RSS_XFRM_NONE;
	std::array<uint32_t, DMS_NIC_RSS_CLASSES> fields{};
};

// Most bytes a hash input can have: two IPv6 addresses, two ports, a label.
constexpr size_t kRssInputMax = 16 + 16 + 2 + 2 + 4;

// The flow class of a parsed frame; false for a frame that is not IP.
bool rss_class(const Parsed &p, unsigned *cls);

// The Toeplitz input of a frame under a context: the bytes of the class's
// fields, transformed (XFRM); returns its length (0: no field selected).
// flow_label is the IPv6 header's label (bits 19:0), unused for IPv4.
size_t rss_input(const RssContext &c, const Parsed &p, uint32_t flow_label,
		 uint8_t (&in)[kRssInputMax]);

// The frame's hash under the context; false when it is not hashed (not IP,
// or its class selects no field).
bool rss_hash(const RssContext &c, const Parsed &p, uint32_t flow_label, uint32_t *hash);

// Table entry a hash picks.
inline uint32_t rss_entry(const RssContext &c, uint32_t hash)
{
	return c.indir[hash % c.indir_size];
}

} // namespace devmemsim
