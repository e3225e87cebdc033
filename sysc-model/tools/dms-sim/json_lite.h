// SPDX-License-Identifier: MIT
// The little JSON reading dms-sim needs: the model's counters
// (dms_node_stats_json, docs/stats.md) into a tree of values.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

namespace dms_sim::json
{

struct Value {
	enum class Kind { Null, Bool, Number, String, Array, Object } kind = Kind::Null;
	double num = 0;
	std::string str;
	std::vector<Value> arr;
	std::map<std::string, Value> obj;
	// Member or element lookups that yield a Null value when absent.
	const Value &operator[](const std::string &key) const;
	double number() const { return num; }
};

// Throws std::runtime_error on malformed text.
Value parse(const std::string &text);

} // namespace dms_sim::json
