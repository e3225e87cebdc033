// SPDX-License-Identifier: MIT
// Node configuration: defaults, files, overrides and every kind of mistake.
#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <string>

#include "config.h"
#include "temp_toml.h"

using devmemsim::ConfigError;
using devmemsim::load_config;
using devmemsim::Mode;
using devmemsim::NicParser;

namespace
{

std::string error_of(const std::string &path, const std::vector<std::string> &sets = {})
{
	try {
		load_config(path, sets);
	} catch (const ConfigError &e) {
		return e.what();
	}
	return "";
}

} // namespace

TEST(Config, DefaultsWithoutFile)
{
	auto c = load_config("");
	EXPECT_EQ(c.mode, Mode::Functional);
	EXPECT_EQ(c.nic_queues, 16u);
	EXPECT_EQ(c.gpu_mem_size, 256ull << 20);
	EXPECT_EQ(c.index, 0u);
}

TEST(Config, ReadsTablesAndDottedKeys)
{
	TempToml f("gpu.mem_size = \"1G\"\n[node]\nmode = \"timed\"\n"
		   "[nic]\nqueues = 8\n");
	auto c = load_config(f.path());
	EXPECT_EQ(c.mode, Mode::Timed);
	EXPECT_EQ(c.nic_queues, 8u);
	EXPECT_EQ(c.gpu_mem_size, 1ull << 30);
}

TEST(Config, UnknownNestedKeyIsNamed)
{
	// "gpu.mem_size" under [nic] is nic.gpu.mem_size.
	TempToml f("[nic]\nqueues = 8\ngpu.mem_size = \"1G\"\n");
	std::string e = error_of(f.path());
	EXPECT_NE(e.find(f.path()), std::string::npos) << e;
	EXPECT_NE(e.find("nic.gpu.mem_size: unknown key"), std::string::npos) << e;
}

TEST(Config, SizesTakeIntegersAndSuffixes)
{
	EXPECT_EQ(load_config("", {"gpu.mem_size=2M"}).gpu_mem_size, 2ull << 20);
	EXPECT_EQ(load_config("", {"gpu.mem_size=\"4MiB\""}).gpu_mem_size, 4ull << 20);
	EXPECT_EQ(load_config("", {"gpu.mem_size=1048576"}).gpu_mem_size, 1ull << 20);
	EXPECT_EQ(load_config("", {"gpu.mem_size=64G"}).gpu_mem_size, 64ull << 30);
}

TEST(Config, OverridesWinOverFile)
{
	TempToml f("[nic]\nqueues = 8\n");
	EXPECT_EQ(load_config(f.path(), {"nic.queues=2"}).nic_queues, 2u);
	EXPECT_EQ(load_config(f.path(), {"node.mode=timed"}).mode, Mode::Timed);
}

TEST(Config, BadValuesSayWhatAndWhere)
{
	EXPECT_NE(error_of("", {"gpu.mem_size=3M"}).find("not a power of two"), std::string::npos);
	EXPECT_NE(error_of("", {"gpu.mem_size=512K"}).find("gpu.mem_size"), std::string::npos);
	EXPECT_NE(error_of("", {"gpu.mem_size=1X"}).find("unknown suffix"), std::string::npos);
	EXPECT_NE(error_of("", {"gpu.mem_size=99999999999999999999G"}).find("too large"),
		  std::string::npos);
	EXPECT_NE(error_of("", {"nic.queues=0"}).find("out of range [1, 64]"), std::string::npos);
	EXPECT_NE(error_of("", {"nic.queues=two"}).find("expected an integer"), std::string::npos);
	EXPECT_NE(error_of("", {"node.mode=fast"}).find("\"functional\" or \"timed\""),
		  std::string::npos);
	EXPECT_NE(error_of("", {"nic.queue=2"}).find("--set nic.queue=2: nic.queue: unknown key"),
		  std::string::npos);
	EXPECT_NE(error_of("", {"noequals"}).find("expected KEY=VALUE"), std::string::npos);
}

TEST(Config, MalformedFileGivesLineAndColumn)
{
	TempToml f("[nic]\nqueues = = 3\n");
	std::string e = error_of(f.path());
	EXPECT_EQ(e.rfind(f.path() + ":2:", 0), 0u) << e;
}

TEST(Config, MissingFileIsNamed)
{
	std::string e = error_of("/nonexistent/node.toml");
	EXPECT_EQ(e.rfind("/nonexistent/node.toml: ", 0), 0u) << e;
}

TEST(Config, ToTomlRoundTrips)
{
	auto c = load_config(
		"", {"node.mode=timed", "nic.queues=16", "gpu.mem_size=2G", "node.index=3"});
	TempToml f(devmemsim::to_toml(c));
	auto d = load_config(f.path());
	EXPECT_EQ(d.mode, c.mode);
	EXPECT_EQ(d.nic_queues, c.nic_queues);
	EXPECT_EQ(d.gpu_mem_size, c.gpu_mem_size);
	EXPECT_EQ(d.index, c.index);
}

// nic.parser and nic.parser_clock_mhz: defaults, accepted values, clear
// errors, and the round trip through to_toml.
TEST(RtlConfig, BehaviouralByDefault)
{
	auto c = load_config("");
	EXPECT_EQ(c.nic_parser, NicParser::Behavioural);
	EXPECT_EQ(c.nic_parser_clock_mhz, 500u);
}

TEST(RtlConfig, AcceptsBothParsers)
{
	EXPECT_EQ(load_config("", {"nic.parser=rtl"}).nic_parser, NicParser::Rtl);
	EXPECT_EQ(load_config("", {"nic.parser=\"behavioural\""}).nic_parser,
		  NicParser::Behavioural);
	EXPECT_EQ(load_config("", {"nic.parser_clock_mhz=322"}).nic_parser_clock_mhz, 322u);
}

TEST(RtlConfig, OtherValuesAreRefusedClearly)
{
	std::string e = error_of("", {"nic.parser=verilog"});
	EXPECT_NE(e.find("nic.parser: \"verilog\": expected \"behavioural\" or \"rtl\""),
		  std::string::npos)
		<< e;
	e = error_of("", {"nic.parser=behavioral"}); // the American spelling is not a value
	EXPECT_NE(e.find("expected \"behavioural\" or \"rtl\""), std::string::npos) << e;
	e = error_of("", {"nic.parser=3"});
	EXPECT_NE(e.find("nic.parser: expected"), std::string::npos) << e;
	e = error_of("", {"nic.parser_clock_mhz=0"});
	EXPECT_NE(e.find("out of range [1, 5000]"), std::string::npos) << e;
}

TEST(RtlConfig, ToTomlRoundTrips)
{
	auto c = load_config("", {"nic.parser=rtl", "nic.parser_clock_mhz=250"});
	char path[] = "/tmp/dms-rtl-config-XXXXXX";
	int fd = mkstemp(path);
	ASSERT_GE(fd, 0);
	close(fd);
	std::ofstream(path) << devmemsim::to_toml(c);
	auto d = load_config(path);
	std::remove(path);
	EXPECT_EQ(d.nic_parser, NicParser::Rtl);
	EXPECT_EQ(d.nic_parser_clock_mhz, 250u);
}

// The timed fabric's capacities: defaults, a file, errors naming file and
// key in one line, and the round trip through to_toml.
TEST(FabricConfig, CapacitiesReadAndCheck)
{
	auto c = load_config("");
	EXPECT_EQ(c.host_mem_gbps, 1638u);
	EXPECT_EQ(c.switch_gbps, 0u); // a non-blocking switch core
	EXPECT_EQ(c.root_complex_gbps, 1024u);
	TempToml f("[host]\nmem_bandwidth_gbps = 400\n[pcie]\nswitch_gbps = 512\n"
		   "root_complex_gbps = 300\n");
	c = load_config(f.path());
	EXPECT_EQ(c.host_mem_gbps, 400u);
	EXPECT_EQ(c.switch_gbps, 512u);
	EXPECT_EQ(c.root_complex_gbps, 300u);
	TempToml back(devmemsim::to_toml(c));
	auto d = load_config(back.path());
	EXPECT_EQ(d.host_mem_gbps, 400u);
	EXPECT_EQ(d.switch_gbps, 512u);
	EXPECT_EQ(d.root_complex_gbps, 300u);

	TempToml bad("[host]\nmem_bandwidth_gbps = 0\n");
	std::string e = error_of(bad.path());
	EXPECT_EQ(e, bad.path() + ": host.mem_bandwidth_gbps: 0 is out of range [1, 100000]");
	e = error_of("", {"pcie.root_complex_gbps=0"});
	EXPECT_NE(e.find("pcie.root_complex_gbps: 0 is out of range [1, 100000]"),
		  std::string::npos)
		<< e;
	EXPECT_EQ(load_config("", {"pcie.switch_gbps=0"}).switch_gbps, 0u);
	e = error_of("", {"pcie.switch_gbps=fast"});
	EXPECT_EQ(e.find('\n'), std::string::npos) << e;
	EXPECT_NE(e.find("pcie.switch_gbps: expected an integer"), std::string::npos) << e;
	e = error_of("", {"host.mem_bandwidth=1"});
	EXPECT_NE(e.find("host.mem_bandwidth: unknown key"), std::string::npos) << e;
}
