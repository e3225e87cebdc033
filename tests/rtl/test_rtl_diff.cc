// SPDX-License-Identifier: MIT
// Behavioural parser (parse_frame) against the verilated RTL
// (rtl/hsplit_parser.sv) on generated, mutated and random frames: every
// field of every result must be equal, and the RTL's error flags must be
// what the behavioural result implies. The RTL runs at the model's width
// (64 bytes a cycle) and at 8 bytes a cycle; frame by frame (parse(), as
// the NIC uses it) and back to back (parse_stream(), one frame a cycle);
// the 8-byte model gets half the random and mutated frames.
//
// One SystemC elaboration: main() builds the parsers, and the whole
// GoogleTest run happens inside one SC_THREAD, since parse() waits on the
// parser's clock. Environment: DMS_RTL_RANDOM (random frames, default
// 100000), DMS_RTL_MUTATIONS (default 200000), DMS_RTL_SEED (default 1).
#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <memory>
#include <random>
#include <string>
#include <systemc>
#include <unistd.h>
#include <vector>

#include "Vhsplit_parser_w8.h"
#include "gen.h"
#include "nic/parser.h"
#include "nic/rtl_parser.h"
#include "nic/rtl_parser_sc.h"

using devmemsim::Parsed;
using devmemsim::RtlParseFlags;
using devmemsim::RtlParser;
using gen::Frame;

namespace
{

RtlParser *g_rtl[2]; // 64 and 8 bytes a cycle
RtlParser *g_timed;  // 64 bytes a cycle, timed, 2 ns clock
RtlParser *g_traced; // VCD to g_vcd_path
std::string g_vcd_path;

unsigned long env(const char *name, unsigned long def)
{
	const char *e = std::getenv(name);
	return e && *e ? std::strtoul(e, nullptr, 0) : def;
}

// Compare frames on one parser; returns the number of divergences and
// prints the first few in full.
struct Diff {
	size_t frames = 0, diverged = 0;
	void check(const Frame &f, const Parsed &rtl, const RtlParseFlags &fl, const char *what)
	{
		frames++;
		const Parsed ref = devmemsim::parse_frame(f.data(), f.size());
		const gen::Flags want = gen::expected_flags(f, ref);
		const gen::Flags got{fl.err_l2, fl.err_l3, fl.err_l4};
		if (gen::same(ref, rtl) && want == got)
			return;
		if (++diverged <= 10)
			ADD_FAILURE() << what << ": behavioural and RTL differ on\n"
				      << gen::dump(f) << "  behavioural: " << gen::show(ref)
				      << "\n  rtl:         " << gen::show(rtl)
				      << "\n  err flags l2/l3/l4: want " << int(want.l2)
				      << int(want.l3) << int(want.l4) << ", rtl " << int(got.l2)
				      << int(got.l3) << int(got.l4);
	}
};

// Every frame through parse() and, in batches, through parse_stream().
size_t compare(RtlParser &rtl, const std::vector<Frame> &frames, const char *what,
	       bool stream = true)
{
	Diff d;
	for (const Frame &f : frames) {
		RtlParseFlags fl;
		const Parsed p = rtl.parse(f.data(), f.size(), &fl);
		d.check(f, p, fl, what);
		EXPECT_EQ(rtl.last_cycles(), std::max<size_t>(1, (f.size() + rtl.data_bytes() - 1) /
									 rtl.data_bytes()) +
						     RtlParser::kLatency);
	}
	if (stream) {
		const size_t batch = 4096;
		for (size_t i = 0; i < frames.size(); i += batch) {
			std::vector<Frame> b(frames.begin() + i,
					     frames.begin() + std::min(frames.size(), i + batch));
			std::vector<RtlParseFlags> fl;
			std::vector<Parsed> r = rtl.parse_stream(b, &fl);
			EXPECT_EQ(r.size(), b.size());
			for (size_t k = 0; k < r.size() && k < b.size(); k++)
				d.check(b[k], r[k], fl[k], what);
		}
	}
	std::printf("[ rtl %2u B ] %-28s %8zu comparisons, %zu divergences\n", rtl.data_bytes(),
		    what, d.frames, d.diverged);
	EXPECT_EQ(d.diverged, 0u) << what;
	return d.diverged;
}

std::vector<Frame> structured()
{
	std::vector<Frame> out;
	for (size_t payload : {0, 1, 100})
		for (Frame &f : gen::combinations(payload))
			out.push_back(std::move(f));
	return out;
}

std::vector<Frame> truncated()
{
	std::vector<Frame> out;
	for (const Frame &f : gen::combinations(2))
		gen::truncations(f, out);
	return out;
}

// Boundary values of every field on every stride-th header combination.
std::vector<Frame> edges(size_t stride)
{
	std::vector<Frame> out;
	const std::vector<Frame> base = gen::combinations(5);
	for (size_t i = 0; i < base.size(); i += stride) {
		auto e = gen::field_edges(base[i]);
		out.insert(out.end(), e.begin(), e.end());
	}
	return out;
}

std::vector<Frame> random_frames(size_t n, uint64_t seed)
{
	std::mt19937_64 rng(seed);
	std::vector<Frame> out;
	out.reserve(n);
	for (size_t i = 0; i < n; i++)
		out.push_back(gen::random_frame(rng));
	return out;
}

std::vector<Frame> mutations(size_t n, uint64_t seed)
{
	std::mt19937_64 rng(seed);
	std::vector<Frame> valid;
	for (size_t payload : {0, 3, 40})
		for (Frame &f : gen::combinations(payload))
			valid.push_back(std::move(f));
	std::vector<Frame> out;
	out.reserve(n);
	for (size_t i = 0; i < n; i++)
		out.push_back(gen::mutate(valid[rng() % valid.size()], rng));
	return out;
}

// Lengths around and beyond what a 16-bit IP length can reach: the RTL's
// 17-bit length counter saturates.
std::vector<Frame> long_frames()
{
	std::vector<Frame> out;
	for (bool v6 : {false, true})
		for (unsigned vlans : {0u, 2u})
			for (size_t len :
			     {65535u + 22 + 40 + 1, 70000u, 131071u, 131072u, 140000u}) {
				frames::Spec s;
				s.ipv6 = v6;
				s.vlans = vlans;
				s.payload = 100;
				Frame f = frames::build(s);
				const size_t l3 = 14 + 4 * vlans;
				f.resize(len, 0x5a);
				for (unsigned total : {65535u, 65534u, 1000u})
					for (unsigned pad : {0u, 1u}) {
						Frame g = f;
						const unsigned ip_len = total - (v6 ? 40 : 1) * pad;
						gen::put16(g, l3 + (v6 ? 4 : 2), ip_len);
						out.push_back(g);
						// Exactly as long as the IP length says, and one
						// short.
						const size_t exact = l3 + (v6 ? 40 : 0) + ip_len;
						Frame h = g;
						h.resize(exact);
						out.push_back(h);
						h.resize(exact - 1);
						out.push_back(h);
					}
			}
	return out;
}

class Rtl : public ::testing::TestWithParam<int>
{
protected:
	RtlParser &rtl() { return *g_rtl[GetParam()]; }
};

} // namespace

TEST_P(Rtl, HeaderCombinations)
{
	compare(rtl(), structured(), "header combinations");
}

TEST_P(Rtl, TruncationAtEveryHeaderByte)
{
	compare(rtl(), truncated(), "truncations");
}

TEST_P(Rtl, FieldBoundaryValues)
{
	compare(rtl(), edges(GetParam() ? 7 : 2), "field boundary values");
}

TEST_P(Rtl, SeededRandomBytes)
{
	const size_t n = env("DMS_RTL_RANDOM", 100000) / (GetParam() ? 2 : 1);
	compare(rtl(), random_frames(n, env("DMS_RTL_SEED", 1)), "random byte strings");
}

TEST_P(Rtl, MutatedValidFrames)
{
	const size_t n = env("DMS_RTL_MUTATIONS", 200000) / (GetParam() ? 2 : 1);
	compare(rtl(), mutations(n, env("DMS_RTL_SEED", 1) + 1), "mutated valid frames");
}

TEST_P(Rtl, LongFramesSaturateTheLengthCounter)
{
	compare(rtl(), long_frames(), "long frames", false);
}

INSTANTIATE_TEST_SUITE_P(Width, Rtl, ::testing::Values(0, 1),
			 [](const ::testing::TestParamInfo<int> &i) {
				 return std::string(i.param ? "Bytes8" : "Bytes64");
			 });

// A result comes kLatency cycles after the last beat, each cycle costs one
// clock period in timed mode, and the block takes a frame every cycle.
TEST(RtlParser, TimedModeSpendsCyclesOfTheParserClock)
{
	frames::Spec s;
	s.payload = 1000; // 1054 bytes: 17 beats of 64
	const Frame f = frames::build(s);
	const sc_core::sc_time t0 = sc_core::sc_time_stamp();
	const Parsed p = g_timed->parse(f.data(), f.size());
	EXPECT_TRUE(gen::same(p, devmemsim::parse_frame(f.data(), f.size())));
	EXPECT_EQ(g_timed->last_cycles(), 17u + RtlParser::kLatency);
	EXPECT_EQ(sc_core::sc_time_stamp() - t0,
		  sc_core::sc_time(2.0 * (17 + RtlParser::kLatency), sc_core::SC_NS));

	// Functional: no simulated time passes.
	const sc_core::sc_time t1 = sc_core::sc_time_stamp();
	g_rtl[0]->parse(f.data(), f.size());
	EXPECT_EQ(sc_core::sc_time_stamp(), t1);

	// Back to back: 100 one-beat frames in 100 + kLatency cycles.
	frames::Spec s0;
	s0.payload = 0;
	std::vector<Frame> small(100, frames::build(s0));
	const uint64_t c0 = g_timed->cycles();
	auto r = g_timed->parse_stream(small);
	EXPECT_EQ(r.size(), 100u);
	EXPECT_EQ(g_timed->cycles() - c0, 100u + RtlParser::kLatency);
}

TEST(RtlParser, VcdTrace)
{
	const Frame f = frames::build(frames::Spec{});
	g_traced->parse(f.data(), f.size());
	g_traced->parse(f.data(), 20);
	g_traced->trace_flush();
	std::ifstream in(g_vcd_path);
	std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
	EXPECT_NE(text.find("$timescale"), std::string::npos);
	EXPECT_NE(text.find("out_split_off"), std::string::npos);
	EXPECT_NE(text.find("hdr_q"), std::string::npos); // internal signals too
}

// Frames per wall-clock second, behavioural and RTL, on the same frames.
TEST(RtlParser, Speed)
{
	const std::vector<Frame> frames = mutations(20000, 7);
	size_t bytes = 0;
	for (const Frame &f : frames)
		bytes += f.size();
	using clk = std::chrono::steady_clock;
	auto rate = [&](auto fn) {
		const auto t0 = clk::now();
		fn();
		const double s = std::chrono::duration<double>(clk::now() - t0).count();
		return double(frames.size()) / s;
	};
	volatile size_t sink = 0;
	const double beh =
		rate([&] {
			for (int rep = 0; rep < 20; rep++)
				for (const Frame &f : frames)
					sink = sink +
					       devmemsim::parse_frame(f.data(), f.size()).split_off;
		}) *
		20;
	const double one = rate([&] {
		for (const Frame &f : frames)
			sink = sink + g_rtl[0]->parse(f.data(), f.size()).split_off;
	});
	const double str = rate([&] { sink = sink + g_rtl[0]->parse_stream(frames).size(); });
	const double one8 = rate([&] {
		for (const Frame &f : frames)
			sink = sink + g_rtl[1]->parse(f.data(), f.size()).split_off;
	});
	std::printf("[ speed    ] %zu frames, %.0f bytes on average\n", frames.size(),
		    double(bytes) / double(frames.size()));
	std::printf("[ speed    ] behavioural parse_frame:      %12.0f frames/s\n", beh);
	std::printf("[ speed    ] RTL 64 B/cycle, parse():      %12.0f frames/s (%.0fx slower)\n",
		    one, beh / one);
	std::printf("[ speed    ] RTL 64 B/cycle, parse_stream: %12.0f frames/s (%.0fx slower)\n",
		    str, beh / str);
	std::printf("[ speed    ] RTL 8 B/cycle, parse():       %12.0f frames/s\n", one8);
	RecordProperty("behavioural_fps", std::to_string(long(beh)));
	RecordProperty("rtl_fps", std::to_string(long(one)));
	RecordProperty("rtl_stream_fps", std::to_string(long(str)));
}

namespace
{

struct Driver : sc_core::sc_module {
	int rc = 1;
	SC_HAS_PROCESS(Driver);
	explicit Driver(sc_core::sc_module_name n) : sc_core::sc_module(n)
	{
		SC_THREAD(run);
		set_stack_size(64 << 20); // GoogleTest and the generators run here
	}
	void run()
	{
		rc = RUN_ALL_TESTS();
		sc_core::sc_stop();
	}
};

} // namespace

int main(int argc, char **argv)
{
	::testing::InitGoogleTest(&argc, argv);
	RtlParser::Options o;
	RtlParser p64("rtl64", o);
	RtlParser p8("rtl8", o,
		     [] { return std::make_unique<devmemsim::HsplitPinsT<Vhsplit_parser_w8>>(8); });
	RtlParser::Options t = o;
	t.timed = true;
	RtlParser timed("rtl64_timed", t);
	RtlParser::Options v = o;
	g_vcd_path = v.vcd = "rtl-diff-" + std::to_string(getpid()) + ".vcd";
	RtlParser traced("rtl64_traced", v);
	g_rtl[0] = &p64;
	g_rtl[1] = &p8;
	g_timed = &timed;
	g_traced = &traced;
	Driver d("driver");
	sc_core::sc_start();
	std::remove(g_vcd_path.c_str());
	return d.rc;
}
