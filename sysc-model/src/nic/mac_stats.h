// SPDX-License-Identifier: MIT
// The MAC's IEEE 802.3 clause 30 counters and RMON length histograms
// (NIC v1.8, DMS_NIC_CAP_MAC_STD_STATS): what it sends and receives,
// counted as the frames are on the wire, and their MSTAT registers.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>

#include "devmemsim/nic_regs.h"

namespace devmemsim
{

class MacStats
{
public:
	// A frame sent on the wire (len: without padding and FCS).
	void tx(const uint8_t *frame, size_t len);
	// A frame from the wire; max_len: the longest frame (without FCS) the
	// MTU allows: a longer one is only counted as too long.
	void rx(const uint8_t *frame, size_t len, size_t max_len);
	// Frames lost to a DMA fault between the MAC and host memory.
	void tx_lost() { n_[DMS_NIC_MSTAT_TX_MAC_ERR]++; }
	void rx_lost() { n_[DMS_NIC_MSTAT_RX_MAC_ERR]++; }

	uint64_t value(unsigned i) const { return i < n_.size() ? n_[i] : 0; }
	// MSTAT_LO/HI registers: false if off is not one.
	bool read(uint32_t off, uint32_t *val);

	// The frame's length on the wire: padded to the minimum, with FCS.
	static size_t wire_len(size_t len);
	// The histogram bin of a wire length.
	static unsigned bin(size_t wire);

private:
	// Broadcast, multicast and MAC control counters of one direction.
	void classify(const uint8_t *frame, size_t len, unsigned mcast, unsigned bcast,
		      unsigned ctrl);
	std::array<uint64_t, DMS_NIC_MSTAT_COUNT> n_{};
	uint32_t latch_hi_ = 0;
};

} // namespace devmemsim
