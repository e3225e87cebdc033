// SPDX-License-Identifier: MIT
// dms-pcie: the model's PCIe link arithmetic (pcie/link.cc) for one link,
// as JSON, so that documents comparing it with published figures
// (docs/fidelity.md) quote the model's own numbers.
//
//   dms-pcie --gen G --width W --mps M [--len BYTES]
//
// Prints {"gen", "width", "mps", "rcb", "len", "raw_gbps", "tlp_gbps",
// "write_gbps", "completion_gbps"}: the raw rate of one direction after line
// encoding, what is left for TLPs after the Ack/UpdateFC DLLPs and SKPs, the
// payload rate of a stream of aligned len-byte writes (default 1 MiB), and
// that of the completions answering aligned len-byte reads (split at the
// read completion boundary, as a root complex returns host memory). Exit
// status: 0, or 2 with one line on stderr.
#include <cstdint>
#include <cstdio>
#include <iostream>
#include <stdexcept>
#include <string>

#include "pcie/link.h"

namespace
{

int usage(const std::string &msg)
{
	std::cerr << "dms-pcie: " << msg
		  << " (usage: dms-pcie --gen G --width W --mps M [--len BYTES])\n";
	return 2;
}

} // namespace

int main(int argc, char **argv)
{
	using namespace devmemsim::pcie;
	LinkParams p;
	uint64_t len = 1 << 20;
	for (int i = 1; i < argc; i += 2) {
		const std::string arg = argv[i];
		if (i + 1 >= argc)
			return usage(arg + " needs a value");
		unsigned long long v;
		try {
			size_t end;
			v = std::stoull(argv[i + 1], &end);
			if (argv[i + 1][end])
				throw std::invalid_argument(argv[i + 1]);
		} catch (const std::exception &) {
			return usage(arg + " " + argv[i + 1] + ": not a number");
		}
		if (arg == "--gen")
			p.gen = static_cast<unsigned>(v);
		else if (arg == "--width")
			p.width = static_cast<unsigned>(v);
		else if (arg == "--mps")
			p.mps = static_cast<unsigned>(v);
		else if (arg == "--len" && v > 0)
			len = v;
		else
			return usage("unexpected " + arg + " " + argv[i + 1]);
	}
	if (const char *why = check(p))
		return usage(why);
	const double raw = raw_bytes_per_second(p) * 8 / 1e9;
	const double tlp = raw * (1.0 - dllp_share(p));
	const Cost cpl = completion_cost(p, 0, len);
	std::printf("{\"gen\": %u, \"width\": %u, \"mps\": %u, \"rcb\": %u, \"len\": %llu, "
		    "\"raw_gbps\": %.6f, \"tlp_gbps\": %.6f, \"write_gbps\": %.6f, "
		    "\"completion_gbps\": %.6f}\n",
		    p.gen, p.width, p.mps, p.rcb, static_cast<unsigned long long>(len), raw, tlp,
		    effective_write_bandwidth(p, len) * 8 / 1e9,
		    tlp * static_cast<double>(len) / static_cast<double>(cpl.wire_bytes));
	return 0;
}
