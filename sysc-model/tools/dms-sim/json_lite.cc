// SPDX-License-Identifier: MIT
#include "json_lite.h"

#include <cstdlib>
#include <stdexcept>

namespace dms_sim::json
{

namespace
{

struct Parser {
	const std::string &s;
	size_t i = 0;

	void ws()
	{
		while (i < s.size() &&
		       (s[i] == ' ' || s[i] == '\n' || s[i] == '\t' || s[i] == '\r'))
			i++;
	}
	[[noreturn]] void fail() const
	{
		throw std::runtime_error("malformed JSON at offset " + std::to_string(i));
	}
	void expect(char c)
	{
		ws();
		if (i >= s.size() || s[i] != c)
			fail();
		i++;
	}
	std::string string()
	{
		expect('"');
		std::string out;
		while (i < s.size() && s[i] != '"') {
			if (s[i] == '\\' && ++i >= s.size())
				fail();
			out += s[i++];
		}
		expect('"');
		return out;
	}
	Value value();
	Value object()
	{
		Value v;
		v.kind = Value::Kind::Object;
		expect('{');
		ws();
		if (i < s.size() && s[i] == '}')
			return i++, v;
		do {
			std::string k = string();
			expect(':');
			v.obj[k] = value();
			ws();
		} while (i < s.size() && s[i] == ',' && ++i);
		expect('}');
		return v;
	}
	Value array()
	{
		Value v;
		v.kind = Value::Kind::Array;
		expect('[');
		ws();
		if (i < s.size() && s[i] == ']')
			return i++, v;
		do {
			v.arr.push_back(value());
			ws();
		} while (i < s.size() && s[i] == ',' && ++i);
		expect(']');
		return v;
	}
};

Value Parser::value()
{
	ws();
	if (i >= s.size())
		fail();
	Value v;
	if (s[i] == '{')
		return object();
	if (s[i] == '[')
		return array();
	if (s[i] == '"') {
		v.kind = Value::Kind::String;
		v.str = string();
		return v;
	}
	for (const char *word : {"true", "false", "null"}) {
		if (s.compare(i, std::char_traits<char>::length(word), word) == 0) {
			i += std::char_traits<char>::length(word);
			v.kind = word[0] == 'n' ? Value::Kind::Null : Value::Kind::Bool;
			v.num = word[0] == 't';
			return v;
		}
	}
	char *end = nullptr;
	v.num = std::strtod(s.c_str() + i, &end);
	if (end == s.c_str() + i)
		fail();
	i = size_t(end - s.c_str());
	v.kind = Value::Kind::Number;
	return v;
}

} // namespace

const Value &Value::operator[](const std::string &key) const
{
	static const Value null;
	auto it = obj.find(key);
	return it == obj.end() ? null : it->second;
}

Value parse(const std::string &text)
{
	Parser p{text};
	return p.value();
}

} // namespace dms_sim::json
