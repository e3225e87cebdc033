// SPDX-License-Identifier: MIT
#include "nic/rtl_parser.h"

#include <algorithm>
#include <cstdlib>
#include <stdexcept>

#ifndef DEVMEMSIM_HAVE_RTL
#define DEVMEMSIM_HAVE_RTL 0
#endif
#if DEVMEMSIM_HAVE_RTL
#include "Vhsplit_parser.h"
#include "nic/rtl_parser_sc.h"
#endif

namespace devmemsim
{

bool RtlParser::built_in()
{
	return DEVMEMSIM_HAVE_RTL != 0;
}

RtlParser::RtlParser(sc_core::sc_module_name name, const Options &opt, PinsFactory pins)
    : sc_core::sc_module(name), opt_(opt), busy_("busy")
{
	if (pins) {
		pins_ = pins();
	} else {
#if DEVMEMSIM_HAVE_RTL
		pins_ = std::make_unique<HsplitPinsT<Vhsplit_parser>>(DEVMEMSIM_RTL_DATA_BYTES);
#else
		throw std::runtime_error("nic.parser = \"rtl\": this build has no verilated parser "
					 "(Verilator was not found when it was configured)");
#endif
	}
	if (opt_.vcd.empty())
		if (const char *e = std::getenv("DEVMEMSIM_RTL_VCD"))
			opt_.vcd = e;
	if (opt_.timed) {
		h1_ = sc_core::sc_time::from_value(opt_.period.value() / 2);
		h2_ = opt_.period - h1_;
	}
}

RtlParser::~RtlParser() = default;

unsigned RtlParser::data_bytes() const
{
	return pins_->data_bytes();
}

// Let the clock half pass: its time when timed; else two delta cycles, one
// for the model's evaluation and one for its outputs to update.
void RtlParser::settle(const sc_core::sc_time &t)
{
	if (t > sc_core::SC_ZERO_TIME) {
		sc_core::wait(t);
	} else {
		sc_core::wait(sc_core::SC_ZERO_TIME);
		sc_core::wait(sc_core::SC_ZERO_TIME);
	}
}

// One clock cycle with the inputs as driven: falling edge, then the rising
// edge that samples them. Outputs read afterwards are those of that edge.
void RtlParser::cycle()
{
	const uint64_t period_ps = static_cast<uint64_t>(opt_.period.to_seconds() * 1e12 + 0.5);
	pins_->clk(false);
	if (h1_ == sc_core::SC_ZERO_TIME || in_reset_) {
		// Nothing to read after the falling edge: one delta cycle lets the
		// clock's 0 be seen before it rises (two when the VCD samples it).
		sc_core::wait(sc_core::SC_ZERO_TIME);
		if (tracing_)
			sc_core::wait(sc_core::SC_ZERO_TIME);
	} else {
		settle(h1_);
	}
	if (tracing_)
		pins_->trace_dump(trace_t_ + period_ps / 2);
	pins_->clk(true);
	settle(in_reset_ ? sc_core::SC_ZERO_TIME : h2_);
	trace_t_ += period_ps;
	if (tracing_)
		pins_->trace_dump(trace_t_);
	cycles_++;
}

void RtlParser::reset_once()
{
	if (reset_done_)
		return;
	reset_done_ = true;
	if (!opt_.vcd.empty()) {
		pins_->trace_open(opt_.vcd);
		tracing_ = true;
	}
	// Two cycles of reset, in delta cycles: no simulated time.
	in_reset_ = true;
	pins_->idle();
	pins_->rst(true);
	cycle();
	cycle();
	pins_->rst(false);
	in_reset_ = false;
}

// Drive the beat of frame starting at off; returns its byte count.
unsigned RtlParser::drive_beat(const uint8_t *frame, size_t len, size_t off)
{
	const unsigned db = pins_->data_bytes();
	const unsigned n = static_cast<unsigned>(std::min<size_t>(db, len - off));
	pins_->beat(frame + off, n, off + n >= len);
	return n;
}

Parsed RtlParser::parse(const uint8_t *frame, size_t len, RtlParseFlags *flags)
{
	busy_.lock();
	reset_once();
	const uint64_t start = cycles_;
	size_t off = 0;
	do {
		off += drive_beat(frame, len, off);
		cycle();
	} while (off < len);
	pins_->idle();
	unsigned waited = 0;
	do {
		cycle();
		if (++waited > kLatency + 1) {
			busy_.unlock();
			throw std::logic_error("hsplit_parser: no result " +
					       std::to_string(waited) +
					       " cycles after the last beat");
		}
	} while (!pins_->out_valid());
	Parsed r;
	pins_->result(&r, flags);
	last_cycles_ = cycles_ - start;
	frames_++;
	busy_.unlock();
	return r;
}

std::vector<Parsed> RtlParser::parse_stream(const std::vector<std::vector<uint8_t>> &frames,
					    std::vector<RtlParseFlags> *flags)
{
	busy_.lock();
	reset_once();
	std::vector<Parsed> out;
	out.reserve(frames.size());
	if (flags)
		flags->clear();
	size_t fi = 0, off = 0;
	unsigned idle = 0;
	while (out.size() < frames.size()) {
		if (fi < frames.size()) {
			const std::vector<uint8_t> &f = frames[fi];
			off += drive_beat(f.data(), f.size(), off);
			if (off >= f.size()) {
				fi++;
				off = 0;
			}
		} else {
			pins_->idle();
			if (++idle > kLatency + 1) {
				busy_.unlock();
				throw std::logic_error("hsplit_parser: results missing after the "
						       "last frame");
			}
		}
		cycle();
		if (pins_->out_valid()) {
			out.emplace_back();
			RtlParseFlags fl;
			pins_->result(&out.back(), &fl);
			if (flags)
				flags->push_back(fl);
		}
	}
	pins_->idle();
	frames_ += frames.size();
	busy_.unlock();
	return out;
}

} // namespace devmemsim
