// SPDX-License-Identifier: MIT
// The NIC's header parser as RTL: rtl/hsplit_parser.sv, verilated (--sc)
// and driven pin by pin. It gives the same Parsed as parse_frame() (the
// differential tests in tests/rtl prove it) and says how many clock cycles
// each frame took. Selected by nic.parser = "rtl".
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <systemc>
#include <utility>
#include <vector>

#include "nic/parser.h"

namespace devmemsim
{

// What the RTL reports beyond Parsed (see the .sv for the exact rules).
struct RtlParseFlags {
	bool err_l2 = false; // shorter than 14 bytes, or a VLAN tag cut short
	bool err_l3 = false; // Ethertype IPv4/IPv6 but a bad or cut-short IP header
	bool err_l4 = false; // TCP/UDP (not a fragment) but a bad or cut-short L4 header
};

// Pin-level access to one verilated hsplit_parser (any DATA_BYTES). The
// implementation is a template over the verilated class
// (nic/rtl_parser_sc.h); tests build other widths with it.
class HsplitPins
{
public:
	virtual ~HsplitPins() = default;
	virtual unsigned data_bytes() const = 0;
	virtual void clk(bool v) = 0;
	virtual void rst(bool v) = 0;
	// One beat: `bytes` bytes from p (the rest of the beat reads as 0).
	virtual void beat(const uint8_t *p, unsigned bytes, bool last) = 0;
	virtual void idle() = 0; // in_valid low
	virtual bool out_valid() const = 0;
	virtual void result(Parsed *p, RtlParseFlags *f) const = 0;
	// VCD of every signal of the block; dump() after each clock edge.
	virtual void trace_open(const std::string &path) = 0;
	virtual void trace_dump(uint64_t time_ps) = 0;
	virtual void trace_flush() = 0;
	virtual void trace_close() = 0;
};

class RtlParser : public sc_core::sc_module
{
public:
	struct Options {
		explicit Options(sc_core::sc_time period_ = sc_core::sc_time(2, sc_core::SC_NS),
				 bool timed_ = false, std::string vcd_ = {})
		    : period(period_), timed(timed_), vcd(std::move(vcd_))
		{
		}
		// The parser's clock (nic.parser_clock_mhz).
		sc_core::sc_time period;
		// true: every cycle takes `period` of simulated time (timed mode);
		// false: the clock runs in delta cycles and no time passes.
		bool timed;
		// Non-empty: write a VCD of the block's signals to this file
		// (default: $DEVMEMSIM_RTL_VCD). Its time is the parser's clock
		// time, cycles x period (idle time between frames left out).
		std::string vcd;
	};
	using PinsFactory = std::function<std::unique_ptr<HsplitPins>()>;

	// pins: the verilated block to drive; empty: the one built into the
	// model (DATA_BYTES from rtl/meson.build). Throws std::runtime_error
	// when this build has none (no Verilator).
	RtlParser(sc_core::sc_module_name name, const Options &opt, PinsFactory pins = {});
	~RtlParser() override;

	static bool built_in(); // this build has the verilated parser
	// Rising edges from the one that samples the last beat to the result
	// (LATENCY in rtl/hsplit_parser.sv).
	static constexpr unsigned kLatency = 3;

	unsigned data_bytes() const;

	// Stream one frame in, beat by beat, and wait for its result. Call from
	// an SC_THREAD (it waits on the parser's clock); callers are served one
	// at a time. Same result as parse_frame(frame, len).
	Parsed parse(const uint8_t *frame, size_t len, RtlParseFlags *flags = nullptr);
	// Frames back to back with no idle cycle between them (the block takes
	// one frame per cycle at most); results in order.
	std::vector<Parsed> parse_stream(const std::vector<std::vector<uint8_t>> &frames,
					 std::vector<RtlParseFlags> *flags = nullptr);

	// Clock cycles of the last parse(): first beat to result, i.e.
	// ceil(len / data_bytes) (at least 1) + kLatency.
	uint64_t last_cycles() const { return last_cycles_; }
	uint64_t cycles() const { return cycles_; } // all cycles clocked
	// Write out what the VCD holds so far (it is complete once the parser
	// is destroyed).
	void trace_flush() { pins_->trace_flush(); }
	uint64_t frames() const { return frames_; }
	const Options &options() const { return opt_; }

private:
	void reset_once();
	void cycle();
	void settle(const sc_core::sc_time &t);
	unsigned drive_beat(const uint8_t *frame, size_t len, size_t off);

	Options opt_;
	std::unique_ptr<HsplitPins> pins_;
	sc_core::sc_mutex busy_;
	sc_core::sc_time h1_, h2_; // clock low / high
	bool reset_done_ = false, in_reset_ = false;
	bool tracing_ = false;
	uint64_t trace_t_ = 0;
	uint64_t cycles_ = 0, frames_ = 0, last_cycles_ = 0;
};

} // namespace devmemsim
