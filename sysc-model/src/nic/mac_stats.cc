// SPDX-License-Identifier: MIT
#include "nic/mac_stats.h"

#include <algorithm>

#include "regfile.h"

namespace devmemsim
{

namespace
{

constexpr size_t kMinFrame = 60; // without FCS: shorter frames are padded
constexpr size_t kFcs = 4;
constexpr size_t kHeader = 14;
constexpr uint16_t kEtherTypeMacControl = 0x8808;
// Length/type values up to this are lengths (IEEE 802.3 3.2.6); from
// kMinType on they are types; between the two they are neither.
constexpr uint16_t kMaxLength = 1500;
constexpr uint16_t kMinType = 1536;
// The least MAC client data of a frame: shorter data is padded, so a
// length field below this cannot be checked against the frame.
constexpr uint16_t kMinData = kMinFrame - kHeader;

constexpr size_t kBinHi[DMS_NIC_MSTAT_BINS] = {
	DMS_NIC_MSTAT_BIN0_HI, DMS_NIC_MSTAT_BIN1_HI, DMS_NIC_MSTAT_BIN2_HI, DMS_NIC_MSTAT_BIN3_HI,
	DMS_NIC_MSTAT_BIN4_HI, DMS_NIC_MSTAT_BIN5_HI, DMS_NIC_MSTAT_BIN6_HI,
};

uint16_t type_of(const uint8_t *frame)
{
	return static_cast<uint16_t>(frame[12] << 8 | frame[13]);
}

} // namespace

size_t MacStats::wire_len(size_t len)
{
	return std::max(len, kMinFrame) + kFcs;
}

unsigned MacStats::bin(size_t wire)
{
	unsigned b = 0;
	while (b + 1 < DMS_NIC_MSTAT_BINS && wire > kBinHi[b])
		b++;
	return b;
}

void MacStats::classify(const uint8_t *frame, size_t len, unsigned mcast, unsigned bcast,
			unsigned ctrl)
{
	if (len < kHeader)
		return;
	if (std::all_of(frame, frame + 6, [](uint8_t b) { return b == 0xff; }))
		n_[bcast]++;
	else if (frame[0] & 1)
		n_[mcast]++;
	if (type_of(frame) == kEtherTypeMacControl)
		n_[ctrl]++;
}

void MacStats::tx(const uint8_t *frame, size_t len)
{
	const size_t wire = wire_len(len);
	n_[DMS_NIC_MSTAT_TX_OK]++;
	n_[DMS_NIC_MSTAT_TX_OCTETS] += wire;
	n_[DMS_NIC_MSTAT_TX_HIST(bin(wire))]++;
	classify(frame, len, DMS_NIC_MSTAT_TX_MCAST, DMS_NIC_MSTAT_TX_BCAST, DMS_NIC_MSTAT_TX_CTRL);
}

void MacStats::rx(const uint8_t *frame, size_t len, size_t max_len)
{
	if (len > max_len) {
		n_[DMS_NIC_MSTAT_RX_TOO_LONG]++;
		return;
	}
	const size_t wire = wire_len(len);
	n_[DMS_NIC_MSTAT_RX_OK]++;
	n_[DMS_NIC_MSTAT_RX_OCTETS] += wire;
	n_[DMS_NIC_MSTAT_RX_HIST(bin(wire))]++;
	classify(frame, len, DMS_NIC_MSTAT_RX_MCAST, DMS_NIC_MSTAT_RX_BCAST, DMS_NIC_MSTAT_RX_CTRL);
	if (len >= kHeader) {
		const uint16_t lt = type_of(frame);
		if (lt > kMaxLength && lt < kMinType)
			n_[DMS_NIC_MSTAT_RX_LEN_RANGE]++;
		else if (lt >= kMinData && lt <= kMaxLength && lt != len - kHeader)
			n_[DMS_NIC_MSTAT_RX_LEN_ERR]++;
	}
}

bool MacStats::read(uint32_t off, uint32_t *val)
{
	if (off < DMS_NIC_REG_MSTAT_LO(0) || off >= DMS_NIC_REG_MSTAT_LO(DMS_NIC_MSTAT_COUNT))
		return false;
	const unsigned i = (off - DMS_NIC_REG_MSTAT_LO(0)) / 8;
	if (off == DMS_NIC_REG_MSTAT_LO(i)) {
		latch_hi_ = hi32(n_[i]);
		*val = lo32(n_[i]);
	} else {
		*val = latch_hi_;
	}
	return true;
}

} // namespace devmemsim
