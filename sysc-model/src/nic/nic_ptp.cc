// SPDX-License-Identifier: MIT
// The NIC's PTP hardware clock and frame timestamps (v1.6 registers
// PTP_* at 0x0800-0x083f): the clock itself is ptp.h's PtpClock.
#include <algorithm>

#include "devmemsim/nic_desc.h"
#include "devmemsim/nic_regs.h"
#include "nic/nic.h"
#include "sim/kernel.h"

namespace devmemsim
{

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

bool Nic::ptp_read(uint32_t off, uint32_t *val)
{
	switch (off) {
	case DMS_NIC_REG_PTP_CTRL:
		*val = ptp_ctrl_;
		return true;
	case DMS_NIC_REG_PTP_TIME_LO: {
		const uint64_t now = ptp_now();
		ptp_latch_hi_ = hi32(now);
		*val = lo32(now);
		return true;
	}
	case DMS_NIC_REG_PTP_TIME_HI:
		*val = ptp_latch_hi_;
		return true;
	case DMS_NIC_REG_PTP_SET_LO:
		*val = lo32(ptp_stage_);
		return true;
	case DMS_NIC_REG_PTP_SET_HI:
		*val = hi32(ptp_stage_);
		return true;
	case DMS_NIC_REG_PTP_CMD:
		*val = 0;
		return true;
	case DMS_NIC_REG_PTP_ADJ_FINE:
		*val = static_cast<uint32_t>(ptp_.fine());
		return true;
	case DMS_NIC_REG_PTP_RX_STAMPS:
		*val = static_cast<uint32_t>(c_.ptp_rx_stamps);
		return true;
	case DMS_NIC_REG_PTP_TX_STAMPS:
		*val = static_cast<uint32_t>(c_.ptp_tx_stamps);
		return true;
	default:
		return false;
	}
}

bool Nic::ptp_write(uint32_t off, uint32_t val)
{
	const uint64_t raw = sim::device_ns();
	switch (off) {
	case DMS_NIC_REG_PTP_CTRL:
		ptp_ctrl_ = val & DMS_NIC_PTP_RX_ALL;
		return true;
	case DMS_NIC_REG_PTP_SET_LO:
		set_lo(ptp_stage_, val);
		return true;
	case DMS_NIC_REG_PTP_SET_HI:
		set_hi(ptp_stage_, val);
		return true;
	case DMS_NIC_REG_PTP_CMD:
		if (val == DMS_NIC_PTP_CMD_SET)
			ptp_.set(raw, ptp_stage_);
		else if (val == DMS_NIC_PTP_CMD_ADJ)
			ptp_.adjust(raw, static_cast<int64_t>(ptp_stage_));
		trace_("ptp command %u: clock %llu", val, (unsigned long long)ptp_.at(raw));
		return true;
	case DMS_NIC_REG_PTP_ADJ_FINE:
		ptp_.set_fine(raw, static_cast<int32_t>(val));
		return true;
	default:
		return false;
	}
}

// Function reset: the clock keeps counting, at the nominal rate.
void Nic::ptp_reset()
{
	ptp_.set_fine(sim::device_ns(), 0);
	ptp_ctrl_ = 0;
	ptp_stage_ = 0;
	tx_stamp_ = TxStamp{};
}

} // namespace devmemsim
