// SPDX-License-Identifier: MIT
// The NIC's v1.6 registers at 0x0800-0x0bff and what they drive: the PTP
// clock and frame timestamps, the TX rate limits (device and per queue),
// the MAC's PAUSE and FEC counters, and the serial number; and what the
// MAC sees of each frame for its v1.8 MSTAT counters (mac_stats.h).
#include <algorithm>

#include "devmemsim/nic_desc.h"
#include "devmemsim/nic_regs.h"
#include "nic/nic.h"
#include "nic/nic_queue.h"
#include "sim/kernel.h"

namespace devmemsim
{

namespace
{

constexpr uint16_t kEtherTypeMacControl = 0x8808;
constexpr uint16_t kOpcodePause = 0x0001;
// Preamble + SFD, FCS and inter-frame gap around a frame (IEEE 802.3).
constexpr uint64_t kWireOverheadBytes = 24;

// Token buckets count in picoseconds: SystemC's default resolution, so
// a time's value is exact.
uint64_t ps_of(const sc_core::sc_time &t)
{
	return t.value();
}

bool is_pause(const std::vector<uint8_t> &frame)
{
	if (frame.size() < 16)
		return false;
	const auto type = static_cast<uint16_t>(frame[12] << 8 | frame[13]);
	const auto opcode = static_cast<uint16_t>(frame[14] << 8 | frame[15]);
	return type == kEtherTypeMacControl && opcode == kOpcodePause;
}

} // namespace

uint64_t Nic::ptp_now(int64_t offset_ns) const
{
	return ptp_.at(sim::device_ns() + static_cast<uint64_t>(offset_ns));
}

PtpStamp Nic::rx_stamp(size_t frame_len, uint64_t arrival) const
{
	PtpStamp s;
	if (!(ptp_ctrl_ & DMS_NIC_PTP_RX_ALL))
		return s;
	uint64_t raw = arrival;
	const uint64_t now = sim::device_ns();
	const uint64_t wire = wire_time(frame_len).value() / 1000;
	if (timed_ && now > wire) // the wire serialised it after it arrived
		raw = std::max(raw, now - wire);
	s.valid = true;
	s.ns = ptp_.at(raw);
	return s;
}

// The 64-bit serial: the MAC's EUI-64 (FF:FE after byte 2), byte 0 first.
static uint64_t serial_of(const std::array<uint8_t, 6> &mac)
{
	const uint8_t eui[8] = {mac[0], mac[1], mac[2], 0xff, 0xfe, mac[3], mac[4], mac[5]};
	uint64_t v = 0;
	for (uint8_t b : eui)
		v = v << 8 | b;
	return v;
}

uint32_t Nic::ptp_mac_read(uint32_t off)
{
	switch (off) {
	case DMS_NIC_REG_PTP_CTRL:
		return ptp_ctrl_;
	case DMS_NIC_REG_PTP_TIME_LO: {
		const uint64_t now = ptp_now();
		ptp_latch_hi_ = hi32(now);
		return lo32(now);
	}
	case DMS_NIC_REG_PTP_TIME_HI:
		return ptp_latch_hi_;
	case DMS_NIC_REG_PTP_SET_LO:
		return lo32(ptp_stage_);
	case DMS_NIC_REG_PTP_SET_HI:
		return hi32(ptp_stage_);
	case DMS_NIC_REG_PTP_CMD:
		return 0;
	case DMS_NIC_REG_PTP_ADJ_FINE:
		return static_cast<uint32_t>(ptp_.fine());
	case DMS_NIC_REG_PTP_RX_STAMPS:
		return static_cast<uint32_t>(c_.ptp_rx_stamps);
	case DMS_NIC_REG_PTP_TX_STAMPS:
		return static_cast<uint32_t>(c_.ptp_tx_stamps);
	case DMS_NIC_REG_TX_RATE_KBPS:
		return tx_rate_.rate();
	case DMS_NIC_REG_TX_BURST:
		return tx_rate_.burst();
	case DMS_NIC_REG_TX_RATE_WAITS:
		return static_cast<uint32_t>(c_.tx_rate_waits);
	case DMS_NIC_REG_MAC_PAUSE:
	case DMS_NIC_REG_FEC_CORRECTED:
	case DMS_NIC_REG_FEC_UNCORR:
		return 0; // no flow control; an error-free wire
	case DMS_NIC_REG_PAUSE_RX_FRAMES:
		return static_cast<uint32_t>(c_.pause_rx);
	case DMS_NIC_REG_PAUSE_TX_FRAMES:
		return static_cast<uint32_t>(c_.pause_tx);
	case DMS_NIC_REG_FEC_MODE:
		return DMS_NIC_FEC_RS;
	case DMS_NIC_REG_FEC_CW_LO: {
		const uint64_t cw = c_.mac_rx_bits / DMS_NIC_FEC_CW_DATA_BITS;
		fec_latch_hi_ = hi32(cw);
		return lo32(cw);
	}
	case DMS_NIC_REG_FEC_CW_HI:
		return fec_latch_hi_;
	case DMS_NIC_REG_SERIAL_LO:
		return lo32(serial_of(mac_));
	case DMS_NIC_REG_SERIAL_HI:
		return hi32(serial_of(mac_));
	default:
		return DMS_REG_UNDEFINED;
	}
}

void Nic::ptp_mac_write(uint32_t off, uint32_t val)
{
	const uint64_t raw = sim::device_ns();
	switch (off) {
	case DMS_NIC_REG_PTP_CTRL:
		ptp_ctrl_ = val & DMS_NIC_PTP_RX_ALL;
		break;
	case DMS_NIC_REG_PTP_SET_LO:
		set_lo(ptp_stage_, val);
		break;
	case DMS_NIC_REG_PTP_SET_HI:
		set_hi(ptp_stage_, val);
		break;
	case DMS_NIC_REG_PTP_CMD:
		if (val == DMS_NIC_PTP_CMD_SET)
			ptp_.set(raw, ptp_stage_);
		else if (val == DMS_NIC_PTP_CMD_ADJ)
			ptp_.adjust(raw, static_cast<int64_t>(ptp_stage_));
		trace_("ptp command %u: clock %llu", val, (unsigned long long)ptp_.at(raw));
		break;
	case DMS_NIC_REG_PTP_ADJ_FINE:
		ptp_.set_fine(raw, static_cast<int32_t>(val));
		break;
	case DMS_NIC_REG_TX_RATE_KBPS:
		tx_rate_.set_rate(val, ps_of(sc_core::sc_time_stamp()));
		tx_ev_.notify(sc_core::SC_ZERO_TIME); // a queue may wait for it
		break;
	case DMS_NIC_REG_TX_BURST:
		tx_rate_.set_burst(val);
		break;
	default:
		break;
	}
}

// Function reset: the clock keeps counting, at the nominal rate.
void Nic::ptp_reset()
{
	ptp_.set_fine(sim::device_ns(), 0);
	ptp_ctrl_ = 0;
	ptp_stage_ = 0;
	tx_rate_.reset();
	tx_stamp_ = TxStamp{};
}

uint32_t Nic::queue_rate_read(const Queue &q, uint32_t off) const
{
	if (off == DMS_NIC_TXQ_RATE_KBPS)
		return q.tx_rate.rate();
	if (off == DMS_NIC_TXQ_BURST)
		return q.tx_rate.burst();
	return DMS_REG_UNDEFINED;
}

void Nic::queue_rate_write(Queue &q, uint32_t off, uint32_t val)
{
	if (off == DMS_NIC_TXQ_RATE_KBPS) {
		q.tx_rate.set_rate(val, ps_of(sc_core::sc_time_stamp()));
		tx_ev_.notify(sc_core::SC_ZERO_TIME);
	} else if (off == DMS_NIC_TXQ_BURST) {
		q.tx_rate.set_burst(val);
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

// The queue's bucket, its scheduler nodes' (v1.8) and the device's.
bool Nic::tx_rate_ready(unsigned qi, sc_core::sc_time *due)
{
	const uint64_t now = ps_of(sc_core::sc_time_stamp());
	uint64_t latest = now;
	bool ok = true;
	auto check = [&](TokenBucket &b) {
		uint64_t at = now;
		if (!b.ready(now, &at)) {
			ok = false;
			latest = std::max(latest, at);
		}
	};
	check(q_[qi]->tx_rate);
	const TxsPath path = txs_path(qi);
	for (unsigned i = 0; i < path.len; i++)
		check(txs_nodes_[path.node[i]].rate);
	check(tx_rate_);
	if (!ok)
		*due = sc_core::sc_time::from_value(latest);
	return ok;
}

void Nic::tx_rate_take(unsigned qi, size_t bytes)
{
	const uint64_t now = ps_of(sc_core::sc_time_stamp());
	q_[qi]->tx_rate.take(now, bytes);
	const TxsPath path = txs_path(qi);
	for (unsigned i = 0; i < path.len; i++)
		txs_nodes_[path.node[i]].rate.take(now, bytes);
	tx_rate_.take(now, bytes);
	txs_charge(qi, bytes);
}

} // namespace devmemsim
