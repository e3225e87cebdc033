// SPDX-License-Identifier: MIT
#include "nic/ptp.h"

#include <algorithm>

#include "devmemsim/nic_regs.h"

namespace devmemsim
{

namespace
{

// 2^16 * 10^6: scaled ppm per unit rate.
constexpr __int128 kFineOne = static_cast<__int128>(65536) * 1000000;
// Token units per byte (see TokenBucket::tokens_).
constexpr __int128 kUnitsPerByte = static_cast<__int128>(8) * 1000000000;

} // namespace

uint64_t PtpClock::at(uint64_t raw) const
{
	// Signed: a stamp may be asked for a raw time just before the base.
	const auto elapsed = static_cast<int64_t>(raw - base_raw_);
	const __int128 trim = static_cast<__int128>(elapsed) * fine_ / kFineOne;
	return base_value_ + static_cast<uint64_t>(elapsed) + static_cast<uint64_t>(trim);
}

void PtpClock::set(uint64_t raw, uint64_t value)
{
	base_raw_ = raw;
	base_value_ = value;
}

void PtpClock::adjust(uint64_t raw, int64_t delta)
{
	set(raw, at(raw) + static_cast<uint64_t>(delta));
}

void PtpClock::set_fine(uint64_t raw, int32_t scaled_ppm)
{
	set(raw, at(raw));
	fine_ = std::clamp<int32_t>(scaled_ppm, -DMS_NIC_PTP_ADJ_FINE_MAX,
				    DMS_NIC_PTP_ADJ_FINE_MAX);
}

void PtpClock::reset(uint64_t raw)
{
	fine_ = 0;
	set(raw, raw);
}

void TokenBucket::refill(uint64_t now_ps)
{
	if (now_ps > last_ps_)
		tokens_ = std::min<__int128>(tokens_ + static_cast<__int128>(kbps_) *
							       (now_ps - last_ps_),
					     burst_ * kUnitsPerByte);
	last_ps_ = std::max(last_ps_, now_ps);
}

void TokenBucket::set_rate(uint32_t kbps, uint64_t now_ps)
{
	kbps_ = kbps;
	last_ps_ = now_ps;
	tokens_ = burst_ * kUnitsPerByte;
}

void TokenBucket::set_burst(uint32_t bytes)
{
	burst_ = std::clamp<uint32_t>(bytes, DMS_NIC_TX_BURST_MIN, DMS_NIC_TX_BURST_MAX);
	tokens_ = std::min<__int128>(tokens_, burst_ * kUnitsPerByte);
}

bool TokenBucket::ready(uint64_t now_ps, uint64_t *due_ps)
{
	if (!kbps_)
		return true;
	refill(now_ps);
	if (tokens_ >= 0)
		return true;
	// Round up: at the due time the bucket is back at 0 or above.
	*due_ps = now_ps + static_cast<uint64_t>((-tokens_ + kbps_ - 1) / kbps_);
	return false;
}

void TokenBucket::take(uint64_t now_ps, uint64_t bytes)
{
	if (!kbps_)
		return;
	refill(now_ps);
	tokens_ -= static_cast<__int128>(bytes) * kUnitsPerByte;
}

void TokenBucket::reset()
{
	kbps_ = 0;
	burst_ = DMS_NIC_TX_BURST_MIN;
	tokens_ = burst_ * kUnitsPerByte;
	last_ps_ = 0;
}

} // namespace devmemsim
