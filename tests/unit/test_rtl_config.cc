// SPDX-License-Identifier: MIT
// nic.parser and nic.parser_clock_mhz: defaults, accepted values, clear
// errors, and the round trip through to_toml.
#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <string>
#include <unistd.h>

#include "config.h"

using devmemsim::ConfigError;
using devmemsim::load_config;
using devmemsim::NicParser;

namespace
{

std::string error_of(const std::vector<std::string> &sets)
{
	try {
		load_config("", sets);
	} catch (const ConfigError &e) {
		return e.what();
	}
	return "";
}

} // namespace

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
	std::string e = error_of({"nic.parser=verilog"});
	EXPECT_NE(e.find("nic.parser: \"verilog\": expected \"behavioural\" or \"rtl\""),
		  std::string::npos)
		<< e;
	e = error_of({"nic.parser=behavioral"}); // the American spelling is not a value
	EXPECT_NE(e.find("expected \"behavioural\" or \"rtl\""), std::string::npos) << e;
	e = error_of({"nic.parser=3"});
	EXPECT_NE(e.find("nic.parser: expected"), std::string::npos) << e;
	e = error_of({"nic.parser_clock_mhz=0"});
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
