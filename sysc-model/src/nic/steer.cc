// SPDX-License-Identifier: MIT
#include "nic/steer.h"

namespace devmemsim
{

uint32_t toeplitz(const uint8_t *key, size_t key_len, const uint8_t *data, size_t len)
{
	// The 32-bit window of the key starting at bit i is XORed in for every
	// set bit i of the input.
	uint32_t hash = 0;
	uint32_t window = 0;
	for (size_t i = 0; i < 4 && i < key_len; i++)
		window = window << 8 | key[i];
	for (size_t i = 0; i < len; i++) {
		uint8_t next = i + 4 < key_len ? key[i + 4] : 0;
		for (int b = 7; b >= 0; b--) {
			if (data[i] >> b & 1)
				hash ^= window;
			window = window << 1 | (next >> b & 1);
		}
	}
	return hash;
}

bool ntuple_match(const NtupleRule &r, const Parsed &p)
{
	if (!r.valid || p.l4 == L4::None || p.proto != r.proto)
		return false;
	if (r.ipv6 != (p.l3 == L3::Ipv6))
		return false;
	size_t alen = r.ipv6 ? 16 : 4;
	for (size_t i = 0; i < alen; i++) {
		if ((p.src[i] & r.src_mask[i]) != (r.src[i] & r.src_mask[i]) ||
		    (p.dst[i] & r.dst_mask[i]) != (r.dst[i] & r.dst_mask[i]))
			return false;
	}
	return (p.sport & r.sport_mask) == (r.sport & r.sport_mask) &&
	       (p.dport & r.dport_mask) == (r.dport & r.dport_mask);
}

} // namespace devmemsim
