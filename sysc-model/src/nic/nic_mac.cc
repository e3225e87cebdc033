// SPDX-License-Identifier: MIT
// The NIC's MAC: what it sees of each frame for the FEC codeword and
// PAUSE counters (v1.6 registers at 0x0880-0x089f) and the MSTAT counters
// (v1.8, mac_stats.h), and the serial number (0x08c0).
#include "devmemsim/nic_regs.h"
#include "nic/nic.h"

namespace devmemsim
{

namespace
{

constexpr uint16_t kEtherTypeMacControl = 0x8808;
constexpr uint16_t kOpcodePause = 0x0001;
// Preamble + SFD, FCS and inter-frame gap around a frame (IEEE 802.3).
constexpr uint64_t kWireOverheadBytes = 24;

bool is_pause(const std::vector<uint8_t> &frame)
{
	if (frame.size() < 16)
		return false;
	const auto type = static_cast<uint16_t>(frame[12] << 8 | frame[13]);
	const auto opcode = static_cast<uint16_t>(frame[14] << 8 | frame[15]);
	return type == kEtherTypeMacControl && opcode == kOpcodePause;
}

// The 64-bit serial: the MAC's EUI-64 (FF:FE after byte 2), byte 0 first.
uint64_t serial_of(const std::array<uint8_t, 6> &mac)
{
	const uint8_t eui[8] = {mac[0], mac[1], mac[2], 0xff, 0xfe, mac[3], mac[4], mac[5]};
	uint64_t v = 0;
	for (uint8_t b : eui)
		v = v << 8 | b;
	return v;
}

} // namespace

bool Nic::mac_read(uint32_t off, uint32_t *val)
{
	switch (off) {
	case DMS_NIC_REG_MAC_PAUSE:
	case DMS_NIC_REG_FEC_CORRECTED:
	case DMS_NIC_REG_FEC_UNCORR:
		*val = 0; // no flow control; an error-free wire
		return true;
	case DMS_NIC_REG_PAUSE_RX_FRAMES:
		*val = static_cast<uint32_t>(c_.pause_rx);
		return true;
	case DMS_NIC_REG_PAUSE_TX_FRAMES:
		*val = static_cast<uint32_t>(c_.pause_tx);
		return true;
	case DMS_NIC_REG_FEC_MODE:
		*val = DMS_NIC_FEC_RS;
		return true;
	case DMS_NIC_REG_FEC_CW_LO: {
		const uint64_t cw = c_.mac_rx_bits / DMS_NIC_FEC_CW_DATA_BITS;
		fec_latch_hi_ = hi32(cw);
		*val = lo32(cw);
		return true;
	}
	case DMS_NIC_REG_FEC_CW_HI:
		*val = fec_latch_hi_;
		return true;
	case DMS_NIC_REG_SERIAL_LO:
		*val = lo32(serial_of(mac_));
		return true;
	case DMS_NIC_REG_SERIAL_HI:
		*val = hi32(serial_of(mac_));
		return true;
	default:
		return false;
	}
}

bool Nic::mac_receive(const std::vector<uint8_t> &frame)
{
	c_.mac_rx_bits += 8 * (frame.size() + kWireOverheadBytes);
	mstat_.rx(frame.data(), frame.size(), mtu_ + kL2Overhead);
	if (!is_pause(frame))
		return true;
	c_.pause_rx++;
	trace_("rx PAUSE frame: counted, not honoured");
	return false;
}

// The MAC sends no PAUSE frames of its own; the host's go out as they are.
void Nic::mac_send(const std::vector<uint8_t> &frame)
{
	mstat_.tx(frame.data(), frame.size());
	if (is_pause(frame))
		c_.pause_tx++;
}

} // namespace devmemsim
