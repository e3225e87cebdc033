// SPDX-License-Identifier: MIT
// dms-sim: the standalone timed simulator. Two or more nodes of the model
// (each K NIC/GPU pairs on its PCIe fabric) in one process, joined by
// Ethernet wires or an ideal switch, with a host memory, a driver model
// per NIC and TCP-like bulk streams or request/response messages between
// the GPUs (docs/architecture.md, "dms-sim").
//
//   dms-sim [--config NODE.toml] [--workload W.toml] [--set KEY=VALUE]...
//           [--json FILE] [--trace FILE] [--check]
//
// Prints a one-screen summary; --json writes the full report (stdout with
// "-", the summary then on stderr); --trace writes the model's trace lines
// (docs/tracing.md) with the simulated time in ns and the node; --check
// builds the simulation and stops there (what sweeps validate their points
// with). Exit status: 0 every flow
// completed and verified, 1 one did not, 2 a usage or configuration error (one line on stderr).
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iostream>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "config.h"
#include "report.h"
#include "sim.h"

namespace
{

struct Args {
	std::string config, workload, json, trace;
	std::vector<std::string> node_sets, workload_sets;
	bool check = false;
};

int usage(const std::string &msg)
{
	std::cerr << "dms-sim: " << msg
		  << " (usage: dms-sim [--config NODE.toml] [--workload W.toml] "
		     "[--set KEY=VALUE]... [--json FILE] [--trace FILE] [--check])\n";
	return 2;
}

// Returns "" or the usage problem.
std::string parse_args(int argc, char **argv, Args *a)
{
	for (int i = 1; i < argc; i++) {
		const std::string arg = argv[i];
		if (arg == "--check") {
			a->check = true;
			continue;
		}
		const bool takes = arg == "--config" || arg == "--workload" || arg == "--set" ||
				   arg == "--json" || arg == "--trace";
		if (!takes)
			return "unknown argument " + arg;
		if (i + 1 >= argc)
			return arg + " needs a value";
		const std::string v = argv[++i];
		if (arg == "--config")
			a->config = v;
		else if (arg == "--workload")
			a->workload = v;
		else if (arg == "--json")
			a->json = v;
		else if (arg == "--trace")
			a->trace = v;
		else if (v.find('=') == std::string::npos)
			return "--set " + v + ": expected KEY=VALUE";
		else if (dms_sim::is_workload_key(v.substr(0, v.find('='))))
			a->workload_sets.push_back(v);
		else
			a->node_sets.push_back(v);
	}
	return "";
}

// The node configuration as the model will read it, timed unless the
// overrides say otherwise, written to a private file per node.
std::string node_config_file(const Args &a, unsigned index)
{
	std::vector<std::string> sets = {"node.mode=timed"};
	sets.insert(sets.end(), a.node_sets.begin(), a.node_sets.end());
	sets.push_back("node.index=" + std::to_string(index));
	const std::string text = devmemsim::to_toml(devmemsim::load_config(a.config, sets));
	char path[] = "/tmp/dms-sim-node-XXXXXX";
	const int fd = mkstemp(path);
	if (fd < 0)
		throw std::runtime_error("cannot create a temporary file");
	close(fd);
	std::ofstream(path) << text;
	return path;
}

} // namespace

int main(int argc, char **argv)
{
	Args a;
	if (std::string err = parse_args(argc, argv, &a); !err.empty())
		return usage(err);
	// Opened before the simulation is built, closed after it is gone: the
	// model traces until its nodes are freed.
	std::unique_ptr<std::FILE, int (*)(std::FILE *)> trace(nullptr, std::fclose);
	if (!a.trace.empty()) {
		trace.reset(std::fopen(a.trace.c_str(), "w"));
		if (!trace)
			return usage("cannot write " + a.trace + ": " + std::strerror(errno));
	}
	std::unique_ptr<dms_sim::Simulation> sim;
	try {
		const dms_sim::Workload w = dms_sim::load_workload(a.workload, a.workload_sets);
		const devmemsim::NodeConfig cfg = devmemsim::load_config(a.config, a.node_sets);
		std::vector<std::string> files;
		for (unsigned i = 0; i < w.net.nodes; i++)
			files.push_back(node_config_file(a, i));
		sim = std::make_unique<dms_sim::Simulation>(files, cfg.nic_line_rate_gbps, w);
		for (const std::string &f : files)
			std::remove(f.c_str());
	} catch (const std::exception &e) {
		std::cerr << "dms-sim: " << e.what() << "\n";
		return 2;
	}
	if (a.check)
		return 0;
	if (trace)
		sim->set_trace(trace.get());
	const auto t0 = std::chrono::steady_clock::now();
	const bool ok = sim->run();
	const double wall =
		std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
	const std::string json = dms_sim::report_json(*sim, wall);
	// With the JSON on stdout, the summary goes to stderr.
	(a.json == "-" ? std::cerr : std::cout) << dms_sim::report_summary(*sim, wall);
	if (a.json == "-") {
		std::cout << json;
	} else if (!a.json.empty()) {
		std::ofstream out(a.json);
		out << json;
		if (!out) {
			std::cerr << "dms-sim: cannot write " << a.json << ": "
				  << std::strerror(errno) << "\n";
			return 2;
		}
	}
	return ok ? 0 : 1;
}
