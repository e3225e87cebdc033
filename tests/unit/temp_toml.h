// SPDX-License-Identifier: MIT
// A TOML file holding the given text for as long as the object lives: what
// the configuration tests hand to load_config().
#ifndef DEVMEMSIM_TESTS_TEMP_TOML_H
#define DEVMEMSIM_TESTS_TEMP_TOML_H

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <string>

class TempToml
{
public:
	explicit TempToml(const std::string &text)
	{
		char tmpl[] = "/tmp/dms-config-XXXXXX";
		int fd = mkstemp(tmpl);
		EXPECT_GE(fd, 0);
		close(fd);
		path_ = tmpl;
		std::ofstream(path_) << text;
	}
	~TempToml() { std::remove(path_.c_str()); }
	const std::string &path() const { return path_; }

private:
	std::string path_;
};

#endif
