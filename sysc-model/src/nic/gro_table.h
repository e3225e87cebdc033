// SPDX-License-Identifier: MIT
// Hardware GRO (NIC v1.5): which TCP segments may coalesce, the open
// aggregates of one RX queue, and the frame an aggregate becomes. The
// rules are the datasheet's ("Hardware GRO"); the RX path (nic_rx.cc)
// decides when aggregates open and flush and places the frames.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <systemc>
#include <vector>

#include "nic/parser.h"
#include "nic/ptp.h"

namespace devmemsim
{

// Limits an aggregate must stay within, from the GRO registers and the
// queue's buffers.
struct GroLimits {
	uint32_t max_segs = 0;	// segments per aggregate
	uint32_t max_bytes = 0; // IP packet bytes (IP header to the end)
	uint32_t max_bufs = 0;	// payload buffers its frame may take
	uint32_t pbuf_size = 1; // bytes per payload buffer
	// PACK queue (v1.9): the frame may start inside a buffer, at most
	// one DMS_NIC_PACK_ALIGN step short of its end.
	bool pack = false;
};

// The outer IP header of an IP-in-IP frame (l3 None: not a tunnel).
struct GroOuter {
	L3 l3 = L3::None;
	size_t off = 0;
};

// A frame as GRO sees it. coalescible: a TCP segment with payload that
// may join an aggregate (checksums good, ACK with at most PSH, ECE and
// CWR, IPv4 without options or IPv6 with at most hop-by-hop and
// destination options headers, possibly inside IPv4 or IPv6 without
// options). opens: it may also start one (no PSH).
struct GroSegment {
	bool coalescible = false, opens = false, push = false;
	uint32_t seq = 0;
	uint16_t ip_id = 0, outer_id = 0; // IPv4 IDs (p's header, the tunnel's)
	size_t hdr_len = 0, pay_len = 0;  // headers end / TCP payload bytes
	// The headers with the fields that may differ between segments of
	// one aggregate zeroed: IPv4 total length, ID and header checksum,
	// IPv6 payload length (of both IP headers of a tunnel), TCP sequence
	// number, PSH, window, checksum.
	std::vector<uint8_t> key;
};
GroSegment gro_segment(const uint8_t *frame, size_t len, const Parsed &p, bool csum_ok,
		       const GroOuter &outer = {});

// IPv6 with TCP behind hop-by-hop and destination options headers (at
// most 4; Linux's GRO takes these too), which parse_frame() leaves
// without L4: p becomes wire with the TCP header found (l4, l4_off,
// split_off, proto, ports). false, p untouched, for anything else
// (routing or fragment header, no TCP, truncated).
bool gro_ipv6_ext_tcp(const uint8_t *frame, const Parsed &wire, Parsed &p);

// IP-in-IP (IPv4 or IPv6 inside IPv4 without options or IPv6, the inner
// one as gro_segment() takes it, TCP inside), which parse_frame() leaves
// without L4: p becomes wire with the inner IP and TCP headers found
// (l3, l3_off, addresses, ipv4_csum_ok of both, l4, ...), outer says
// where the outer header is. false, p and outer untouched, otherwise.
bool gro_tunnel_tcp(const uint8_t *frame, const Parsed &wire, Parsed &p, GroOuter &outer);

// One open aggregate: the first segment's headers, then every segment's
// payload back to back.
struct GroAggregate {
	Parsed p;	     // the first segment's; of a tunnel: the inner IP header's
	Parsed wire;	     // the first segment's as the NIC's parser saw it
	GroOuter outer;	     // the tunnel's outer IP header
	bool deeper = false; // TCP behind IPv6 extension headers or IP-in-IP (p != wire)
	std::vector<uint8_t> key, frame;
	size_t hdr_len = 0;
	uint32_t next_seq = 0, gso_size = 0, segs = 0;
	// IPv4 IDs, [0] p's header, [1] the tunnel's: the last segment's, and
	// the step between segments (-1 not known yet, 0 or 1).
	std::array<uint16_t, 2> last_id{};
	std::array<int, 2> id_step{-1, -1};
	uint32_t hash = 0;
	uint32_t flow = 0; // gro_flow_hash() of its addresses and ports
	bool hashed = false, push = false;
	uint64_t serial = 0;	 // open order within the queue
	sc_core::sc_time opened; // when its first segment came
	PtpStamp stamp;		 // the first segment's (v1.6)

	// Whether seg is the next segment of this aggregate (same headers
	// but for the mutable fields, next sequence number, IPv4 ID rule,
	// payload no longer than the first's).
	bool follows(const GroSegment &seg) const;
	// Whether one more segment of n payload bytes stays within the limits.
	bool room_for(size_t n, const GroLimits &lim) const;
	void append(const uint8_t *frame, const GroSegment &seg);
	// The coalesced frame: lengths and the IPv4 header checksum rewritten,
	// PSH if any segment had it.
	std::vector<uint8_t> finish();
};

// A hash of p's addresses and ports: the table compares it first.
uint32_t gro_flow_hash(const Parsed &p);

// The aggregates one RX queue holds open (at most GRO_FLOWS of them, in
// opening order) and the bytes they hold.
struct GroTable {
	std::vector<GroAggregate> open;
	uint64_t serial = 0;
	size_t held = 0;
	sc_core::sc_time last_seen; // the last frame GRO looked at on this queue

	// The open aggregate of p's flow (addresses and ports), or -1.
	int find(const Parsed &p, uint32_t flow) const;
	// The oldest open aggregate (lowest serial), or -1.
	int oldest() const { return open.empty() ? -1 : 0; }
	GroAggregate take(int i);
	void clear()
	{
		open.clear();
		held = 0;
	}
};

} // namespace devmemsim
