// SPDX-License-Identifier: MIT
// dms-config: check a node configuration against the model's schema and
// print it merged with overrides, as the model will read it.
//
//   dms-config [--set KEY=VALUE]... [--output FILE] [CONFIG.toml]
//
// Exit status: 0 valid, 2 invalid (one line on stderr naming the problem).
#include <cstring>
#include <fstream>
#include <iostream>
#include <string>
#include <vector>

#include "config.h"

static int usage(const char *msg)
{
	std::cerr << "dms-config: " << msg << "\n"
		  << "usage: dms-config [--set KEY=VALUE]... [--output FILE] "
		     "[CONFIG.toml]\n";
	return 2;
}

int main(int argc, char **argv)
{
	std::vector<std::string> sets;
	std::string path, output;
	for (int i = 1; i < argc; i++) {
		std::string a = argv[i];
		if ((a == "--set" || a == "--output") && i + 1 >= argc)
			return usage((a + " needs a value").c_str());
		if (a == "--set")
			sets.emplace_back(argv[++i]);
		else if (a == "--output")
			output = argv[++i];
		else if (a.rfind("-", 0) == 0)
			return usage(("unknown option " + a).c_str());
		else if (!path.empty())
			return usage("more than one configuration file");
		else
			path = a;
	}
	try {
		std::string text = devmemsim::to_toml(devmemsim::load_config(path, sets));
		if (output.empty()) {
			std::cout << text;
			return 0;
		}
		std::ofstream out(output);
		out << text;
		out.close();
		if (!out) {
			std::cerr << "dms-config: cannot write " << output << ": "
				  << std::strerror(errno) << "\n";
			return 2;
		}
	} catch (const devmemsim::ConfigError &e) {
		std::cerr << e.what() << "\n";
		return 2;
	}
	return 0;
}
