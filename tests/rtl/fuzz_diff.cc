// SPDX-License-Identifier: MIT
// libFuzzer target: behavioural parse_frame() against the verilated RTL
// (build with clang, -fsanitize=fuzzer; the behavioural parser is
// instrumented for coverage, the RTL model is the g++-built one). A
// divergence prints the frame and both results, then aborts.
//
// SystemC: one elaboration in LLVMFuzzerInitialize; each input wakes a
// thread that runs it through the RTL and pauses the kernel again.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <systemc>
#include <vector>

#include "fuzz_mutator.h"
#include "gen.h"
#include "nic/parser.h"
#include "nic/rtl_parser.h"

using namespace devmemsim;

namespace
{

struct Driver : sc_core::sc_module {
	sc_core::sc_event go;
	const uint8_t *data = nullptr;
	size_t size = 0;
	RtlParser rtl;

	SC_HAS_PROCESS(Driver);
	explicit Driver(sc_core::sc_module_name n)
	    : sc_core::sc_module(n), rtl("rtl", RtlParser::Options())
	{
		SC_THREAD(run);
		set_stack_size(1 << 20);
	}
	void run()
	{
		for (;;) {
			sc_core::wait(go);
			check();
			sc_core::sc_pause();
		}
	}
	void check()
	{
		const std::vector<uint8_t> f(data, data + size);
		RtlParseFlags fl;
		const Parsed r = rtl.parse(f.data(), f.size(), &fl);
		const Parsed b = parse_frame(f.data(), f.size());
		const gen::Flags want = gen::expected_flags(f, b);
		const gen::Flags got{fl.err_l2, fl.err_l3, fl.err_l4};
		if (gen::same(b, r) && want == got)
			return;
		std::fprintf(stderr,
			     "fuzz-diff: behavioural and RTL differ on\n%s  behavioural: %s\n"
			     "  rtl:         %s\n  err flags l2/l3/l4: want %d%d%d, rtl %d%d%d\n",
			     gen::dump(f).c_str(), gen::show(b).c_str(), gen::show(r).c_str(),
			     want.l2, want.l3, want.l4, got.l2, got.l3, got.l4);
		std::abort();
	}
};

Driver *g_drv;

} // namespace

// libsystemc.so refers to sc_main; libFuzzer owns main().
extern "C" int sc_main(int, char **)
{
	return 1;
}

extern "C" int LLVMFuzzerInitialize(int *, char ***)
{
	setenv("SYSTEMC_DISABLE_COPYRIGHT_MESSAGE", "1", 0);
	g_drv = new Driver("driver");
	sc_core::sc_start(sc_core::SC_ZERO_TIME); // elaborate; the thread waits
	std::atexit([] {
		std::fprintf(stderr, "fuzz-diff: %llu frames compared, %llu RTL cycles\n",
			     static_cast<unsigned long long>(g_drv->rtl.frames()),
			     static_cast<unsigned long long>(g_drv->rtl.cycles()));
	});
	return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *d, size_t n)
{
	if (n > 20000)
		return 0; // long inputs only count bytes: keep the runs fast
	g_drv->data = d;
	g_drv->size = n;
	g_drv->go.notify(sc_core::SC_ZERO_TIME);
	sc_core::sc_start();
	return 0;
}
