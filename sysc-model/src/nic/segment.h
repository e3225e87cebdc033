// SPDX-License-Identifier: MIT
// TCP and UDP segmentation (TSO, USO): one super-frame, headers then
// payload, cut into wire frames with their own headers and checksums
// (docs/datasheet.md, Segmentation).
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "nic/parser.h"

namespace devmemsim
{

// What a segmentation descriptor asks for (dms_tx_seg_desc).
struct SegRequest {
	unsigned mss = 0;
	unsigned hdr_len = 0;
	unsigned kind = 0; // DMS_TX_SEG_* bits as the descriptor gave them
};

class Segmenter
{
public:
	// Check the request against the super-frame f[0, len) and the MTU
	// (L3 bytes). nullptr if it can be cut, else why not. f must stay
	// valid while segments are built.
	const char *plan(const uint8_t *f, size_t len, const SegRequest &r, unsigned mtu);
	size_t segments() const { return segs_; }
	// Segment i (< segments()) as a complete frame, checksums filled in.
	void build(size_t i, std::vector<uint8_t> &out) const;

private:
	const char *check_sizes(size_t len, const SegRequest &r, unsigned mtu);
	const char *check_headers(const SegRequest &r);
	size_t seg_payload(size_t i) const;
	void fix_headers(size_t i, uint8_t *s, size_t len) const;

	const uint8_t *f_ = nullptr;
	size_t len_ = 0, hdr_ = 0, mss_ = 0, segs_ = 0;
	Parsed p_;	     // the headers, parsed as the first segment's
	uint16_t ip_id_ = 0; // IPv4 identification of the first segment
	uint32_t seq_ = 0;   // TCP sequence number of the first segment
	uint8_t tcp_flags_ = 0;
};

} // namespace devmemsim
