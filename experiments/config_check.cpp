#include "experiments/config_check.hpp"

#include <algorithm>

#include "experiments/text.hpp"

namespace gpudm::experiments::config_detail {

std::string type_name(const ojson& v) {
  switch (v.type()) {
    case ojson::value_t::null: return "null";
    case ojson::value_t::boolean: return "bool";
    case ojson::value_t::number_integer:
    case ojson::value_t::number_unsigned: return "int";
    case ojson::value_t::number_float: return "number";
    case ojson::value_t::string: return "string";
    case ojson::value_t::array: return "array";
    case ojson::value_t::object: return "object";
    default: return "value";
  }
}

std::string shown(const ojson& v) {
  std::string s = v.dump();
  if (s.size() > 40) s = s.substr(0, 37) + "...";
  return s;
}

std::string join_path(const std::string& base, const std::string& key) { return base.empty() ? key : base + "." + key; }
std::string index_path(const std::string& base, std::size_t i) { return base + "[" + std::to_string(i) + "]"; }

void Checker::fail(const std::string& path, const std::string& msg) const {
  throw ConfigError(file_ + ": " + (path.empty() ? "" : path + ": ") + msg);
}

void Checker::keys(const ojson& obj, const std::vector<std::string>& allowed, const std::string& path) const {
  for (auto it = obj.begin(); it != obj.end(); ++it) {
    if (std::find(allowed.begin(), allowed.end(), it.key()) == allowed.end())
      fail(path, "unknown key '" + it.key() + "'" + suggest(it.key(), allowed));
  }
}

void Checker::expect(const ojson& v, ojson::value_t t, const std::string& path) const {
  const bool ok = v.type() == t || (t == ojson::value_t::number_float && v.is_number()) ||
                  (t == ojson::value_t::number_integer && v.is_number_integer());
  if (!ok) fail(path, "expected " + type_name(ojson(t)) + ", got " + type_name(v) + " " + shown(v));
}

std::string Checker::string(const ojson& v, const std::string& path) const {
  if (!v.is_string()) fail(path, "expected string, got " + type_name(v) + " " + shown(v));
  return v.get<std::string>();
}

void Checker::object(const ojson& v, const std::string& path) const {
  if (!v.is_object()) fail(path, "expected object, got " + type_name(v) + " " + shown(v));
}

void Checker::array(const ojson& v, const std::string& path, bool non_empty) const {
  if (!v.is_array()) fail(path, "expected array, got " + type_name(v) + " " + shown(v));
  if (non_empty && v.empty()) fail(path, "expected a non-empty array");
}

long long Checker::integer(const ojson& v, const std::string& path, long long min, long long max) const {
  if (!v.is_number_integer()) fail(path, "expected int, got " + type_name(v) + " " + shown(v));
  const bool too_big = v.is_number_unsigned() && v.get<std::uint64_t>() > static_cast<std::uint64_t>(max);
  if (too_big || v.get<long long>() < min || v.get<long long>() > max) {
    const std::string range = max == LLONG_MAX ? ">= " + std::to_string(min)
                                               : "in [" + std::to_string(min) + ", " + std::to_string(max) + "]";
    fail(path, "expected an int " + range + ", got " + v.dump());
  }
  return v.get<long long>();
}

}  // namespace gpudm::experiments::config_detail
