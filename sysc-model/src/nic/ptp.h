// SPDX-License-Identifier: MIT
// Two small pieces of NIC hardware that run on time: the PTP clock (a
// nanosecond counter with a trimmed rate) and the TX engine's token
// buckets (rate limits). Both are plain values, stepped by the times the
// NIC gives them, so they test without a simulation.
#pragma once

#include <cstdint>

#include "devmemsim/nic_regs.h"

namespace devmemsim
{

// A frame's PTP clock value, if it was stamped.
struct PtpStamp {
	bool valid = false;
	uint64_t ns = 0;
};

// The PTP clock: value(raw) = the value last set + the raw device time
// since, scaled by 1 + fine / (2^16 * 10^6). Every change rebases it at
// the raw time of the change, so a rate change never steps the value.
class PtpClock
{
public:
	uint64_t at(uint64_t raw) const;
	void set(uint64_t raw, uint64_t value);
	void adjust(uint64_t raw, int64_t delta);
	// Rate offset in 2^-16 ppm, clamped to +-DMS_NIC_PTP_ADJ_FINE_MAX.
	void set_fine(uint64_t raw, int32_t scaled_ppm);
	int32_t fine() const { return fine_; }
	// Power-on: the raw device time, at the nominal rate.
	void reset(uint64_t raw);

private:
	uint64_t base_raw_ = 0, base_value_ = 0;
	int32_t fine_ = 0;
};

// A token bucket in bytes: filled at rate_kbps * 1000 bit/s up to burst
// bytes; a frame may go while the bucket is not negative and takes its
// bytes (the bucket may go negative by that much).
class TokenBucket
{
public:
	TokenBucket() { reset(); }
	// rate 0: unlimited. Writing the rate refills the bucket.
	void set_rate(uint32_t kbps, uint64_t now_ps);
	void set_burst(uint32_t bytes);
	uint32_t rate() const { return kbps_; }
	uint32_t burst() const { return burst_; }
	// Whether a frame may go at now_ps; if not, *due_ps says when it may.
	bool ready(uint64_t now_ps, uint64_t *due_ps);
	void take(uint64_t now_ps, uint64_t bytes);
	void reset();

private:
	void refill(uint64_t now_ps);

	uint32_t kbps_ = 0, burst_ = DMS_NIC_TX_BURST_MIN;
	// Tokens in units of 1/(8 * 10^9) byte: at rate_kbps, one picosecond
	// adds rate_kbps units (1000 bit/s for 1 ps is 10^-9 bit), so refills
	// are exact integers.
	__int128 tokens_ = 0;
	uint64_t last_ps_ = 0;
};

} // namespace devmemsim
