// SPDX-License-Identifier: MIT
// The NIC's behavioural header parser: where headers end and what the
// frame is, for header split, steering, RSS and checksums.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>

namespace devmemsim
{

enum class L3 : uint8_t { None, Ipv4, Ipv6 };
enum class L4 : uint8_t { None, Tcp, Udp };

struct Parsed {
	L3 l3 = L3::None;
	L4 l4 = L4::None;
	unsigned vlans = 0;	  // 802.1Q / 802.1ad tags (at most 2)
	size_t l3_off = 0;	  // start of the IP header
	size_t l4_off = 0;	  // start of the TCP/UDP header (l4 != None)
	size_t split_off = 0;	  // end of the L4 header; 0: the frame does not split
	size_t l3_end = 0;	  // end of the IP packet (total/payload length)
	bool fragment = false;	  // IPv4 fragment (MF or offset): no L4
	bool ipv4_csum_ok = true; // IPv4 header checksum
	// 5-tuple in network byte order; IPv4 addresses in bytes 0..3.
	std::array<uint8_t, 16> src{}, dst{};
	uint16_t sport = 0, dport = 0; // host order
	uint8_t proto = 0;	       // IP protocol / IPv6 next header
};

// Parse an Ethernet frame (without FCS). Never reads beyond len.
//
// Split rule: a frame splits after its TCP or UDP header when it is
// Ethernet with at most two VLAN tags, then IPv4 (options allowed, not a
// fragment) or IPv6 whose next header is TCP or UDP directly (any
// extension header means no split), with the whole L4 header present.
// Anything else does not split.
Parsed parse_frame(const uint8_t *frame, size_t len);

} // namespace devmemsim
