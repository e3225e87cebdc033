// SPDX-License-Identifier: MIT
// The [topology] part of the node configuration: read from and written to
// TOML (config.cc calls these; the schema is in configs/node/default.toml).
#pragma once

#include <ostream>
#include <string>

#define TOML_EXCEPTIONS 1
#include <toml++/toml.h>

#include "config.h"

namespace devmemsim
{

// Reading TOML values (config.cc): errors are "where: key: what".
namespace toml_value
{
[[noreturn]] void fail(const std::string &where, const std::string &key, const std::string &what);
int64_t get_int(const toml::node &n, const std::string &where, const std::string &key, int64_t lo,
		int64_t hi);
// A byte count: an integer, or a string with a binary suffix ("256M").
uint64_t get_size(const toml::node &n, const std::string &where, const std::string &key);
} // namespace toml_value

// The [topology] table t of file `where`, checked and resolved against
// cfg's other keys (links default to [pcie], sockets to [host] and
// pcie.root_complex_gbps, switches to pcie.switch_gbps). Throws
// ConfigError, one line: "where: topology.KEY: problem".
Topology parse_topology(const toml::table &t, const NodeConfig &cfg, const std::string &where);

// A resolved topology as the [topology] tables parse_topology reads back;
// values equal to cfg's defaults are left out.
void write_topology(std::ostream &o, const Topology &topo, const NodeConfig &cfg);

} // namespace devmemsim
