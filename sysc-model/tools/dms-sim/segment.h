// SPDX-License-Identifier: MIT
// The frames dms-sim's TCP-like streams exchange: real Ethernet/IPv4/TCP
// headers, with the timestamp option Linux uses (so MSS = MTU - 52).
#pragma once

#include <cstddef>
#include <cstdint>

#include "nic_driver.h"

namespace dms_sim
{

constexpr uint8_t kTcpFin = 0x01, kTcpPsh = 0x08, kTcpAck = 0x10;

// Header bytes of a segment: Ethernet 14, IPv4 20, TCP 20 + 12 (timestamps).
constexpr uint32_t kHdrBytes = 14 + 20 + 32;
inline uint32_t mss_of(uint32_t mtu)
{
	return mtu - (kHdrBytes - 14);
}

struct Endpoint {
	const uint8_t *mac;
	uint32_t ip;
	uint16_t port;
};

// Build a segment's headers into out (kHdrBytes): the NIC fills the TCP
// checksum (DMS_TX_F_CSUM), the IPv4 header checksum is computed here.
void build_headers(uint8_t *out, const Endpoint &src, const Endpoint &dst, uint32_t seq,
		   uint32_t ack, uint8_t flags, uint32_t payload_len);

// A parsed segment: ports, sequence, ACK, flags and where the TCP payload
// starts in the header bytes (frames that did not split).
struct Segment {
	uint16_t src_port = 0, dst_port = 0;
	uint32_t seq = 0, ack = 0;
	uint8_t flags = 0;
	size_t payload_off = 0, payload_len = 0;
};

// False for anything but an IPv4 TCP segment with its headers in place.
bool parse_segment(const RxFrame &f, Segment *s);

} // namespace dms_sim
