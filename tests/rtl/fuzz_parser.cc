// SPDX-License-Identifier: MIT
// libFuzzer target over the behavioural parser (build with clang,
// -fsanitize=fuzzer,address,undefined): parse_frame() must never read
// beyond the frame (ASan sees the exact-size input buffer), must be
// deterministic, and its result must hold together; the checksum helpers
// must stay inside the frame for any result it gives.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "fuzz_mutator.h"
#include "gen.h"
#include "nic/csum.h"
#include "nic/parser.h"

using namespace devmemsim;

namespace
{

[[noreturn]] void fail(const char *what, const uint8_t *d, size_t n, const Parsed &p)
{
	std::fprintf(stderr, "fuzz-parser: %s\n%s  result: %s\n", what,
		     gen::dump(std::vector<uint8_t>(d, d + n)).c_str(), gen::show(p).c_str());
	std::abort();
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *d, size_t n)
{
	const Parsed p = parse_frame(d, n);
	if (!gen::same(p, parse_frame(d, n)))
		fail("two parses differ", d, n, p);
	if (p.vlans > 2)
		fail("more than two VLAN tags", d, n, p);
	if (p.l3 != L3::None) {
		if (p.l3_off != 14 + 4 * p.vlans || p.l3_end > n || p.l3_end <= p.l3_off)
			fail("L3 offsets out of the frame", d, n, p);
	} else if (p.l4 != L4::None || p.l3_end || p.proto || p.fragment || !p.ipv4_csum_ok) {
		fail("L3 fields without L3", d, n, p);
	}
	if (p.l4 != L4::None) {
		if (!p.split_off || p.l4_off <= p.l3_off || p.split_off <= p.l4_off ||
		    p.split_off > p.l3_end || p.fragment)
			fail("L4 offsets inconsistent", d, n, p);
		// Checksums read [l4_off, l3_end) and write inside it.
		(void)l4_csum_ok(d, p);
		std::vector<uint8_t> copy(d, d + n);
		l4_csum_fill(copy.data(), p);
		if (!l4_csum_ok(copy.data(), p) && p.ipv4_csum_ok)
			fail("a filled checksum does not verify", d, n, p);
	} else if (p.split_off || p.sport || p.dport) {
		fail("split or ports without L4", d, n, p);
	}
	return 0;
}
