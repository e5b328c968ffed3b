#include "algorithms/core/params.hpp"

#include <cstdio>

namespace gpudm {

namespace {

bool one_type_ok(const std::string& t, const nlohmann::json& v) {
  if (t == "int") return v.is_number_integer();
  if (t == "number") return v.is_number();
  if (t == "string") return v.is_string();
  if (t == "bool") return v.is_boolean();
  if (t == "array") return v.is_array();
  if (t == "object") return v.is_object();
  return true;  // "any": the family checks it
}

std::string number_text(double x) {
  if (std::fabs(x) < 9007199254740992.0 && x == std::floor(x)) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.0f", x);
    return buf;
  }
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.17g", x);
  return buf;
}

std::string shown(const nlohmann::json& v) {
  std::string s = v.dump();
  if (s.size() > 60) s = s.substr(0, 57) + "...";
  return s;
}

// "" when the number `v` lies in the bounds, else the reason.
std::string check_number(const ParamSpec& s, const nlohmann::json& v, bool integer) {
  if (integer) {
    if (!v.is_number_integer()) return "expects an int, got " + shown(v);
    // nlohmann keeps non-negative integers unsigned; those above 2^63 do not fit a long long.
    const double x = v.is_number_unsigned() ? static_cast<double>(v.get<std::uint64_t>())
                                            : static_cast<double>(v.get<long long>());
    if ((s.minimum && x < *s.minimum) || (s.maximum && x > *s.maximum)) {
      if (s.minimum && s.maximum) return "expects an int in [" + number_text(*s.minimum) + ", " + number_text(*s.maximum) + "], got " + shown(v);
      if (s.minimum) return "expects an int >= " + number_text(*s.minimum) + ", got " + shown(v);
      return "expects an int <= " + number_text(*s.maximum) + ", got " + shown(v);
    }
    return "";
  }
  const double x = v.get<double>();
  if (!std::isfinite(x)) return "expects a finite number, got " + shown(v);
  if ((s.minimum && x < *s.minimum) || (s.maximum && x > *s.maximum)) {
    if (s.minimum && s.maximum) return "expects a number in [" + number_text(*s.minimum) + ", " + number_text(*s.maximum) + "], got " + shown(v);
    if (s.minimum) return "expects a number >= " + number_text(*s.minimum) + ", got " + shown(v);
    return "expects a number <= " + number_text(*s.maximum) + ", got " + shown(v);
  }
  return "";
}

}  // namespace

bool param_type_ok(const std::string& type, const nlohmann::json& v) {
  std::size_t pos = 0;
  while (pos <= type.size()) {
    std::size_t bar = type.find('|', pos);
    if (bar == std::string::npos) bar = type.size();
    if (one_type_ok(type.substr(pos, bar - pos), v)) return true;
    pos = bar + 1;
  }
  return false;
}

std::string ParamSpec::check(const nlohmann::json& v) const {
  if (!param_type_ok(type, v)) {
    std::string got = v.is_number_integer() ? "int" : v.is_number() ? "number" : v.is_string() ? "string"
                      : v.is_boolean() ? "bool" : v.is_array() ? "array" : v.is_object() ? "object" : "null";
    return "expects " + type + ", got " + got + " " + shown(v);
  }
  if (!allowed.empty()) {
    for (const auto& a : allowed)
      if (a == v) return "";
    std::string list;
    for (const auto& a : allowed) list += (list.empty() ? "" : ", ") + a.dump();
    return "expects one of " + list + ", got " + shown(v);
  }
  if (v.is_array() && !items.empty() && items != "any") {
    for (std::size_t i = 0; i < v.size(); ++i) {
      if (!one_type_ok(items, v[i])) return "[" + std::to_string(i) + "] expects " + items + ", got " + shown(v[i]);
      if ((minimum || maximum) && v[i].is_number()) {
        const std::string why = check_number(*this, v[i], items == "int");
        if (!why.empty()) return "[" + std::to_string(i) + "] " + why;
      }
    }
    return "";
  }
  if (v.is_number() && (minimum || maximum)) return check_number(*this, v, type == "int");
  // An "int" declared without a range is read into an int by its family: one beyond 32 bits
  // would wrap (population 4294967298 would run 2 individuals), so the int range is the default.
  const std::string t = "|" + type + "|";
  if (v.is_number_integer() && t.find("|int|") != std::string::npos && t.find("|number|") == std::string::npos) {
    ParamSpec bounded = *this;
    bounded.minimum = -2147483648.0;
    bounded.maximum = 2147483647.0;
    return check_number(bounded, v, true);
  }
  return "";
}

std::string ParamSpec::constraint_text() const {
  if (!allowed.empty()) {
    std::string s;
    for (const auto& a : allowed) s += (s.empty() ? "" : " | ") + (a.is_string() ? a.get<std::string>() : a.dump());
    return " (" + s + ")";
  }
  constexpr double kTypeEdge = 9.0e15;  // bounds that only restate an integer type's range are not shown
  const bool lo = minimum && std::fabs(*minimum) < kTypeEdge && !(type == "int" && *minimum <= -2147483648.0);
  const bool hi = maximum && std::fabs(*maximum) < kTypeEdge && !(type == "int" && *maximum >= 2147483647.0);
  if (lo && hi) return " [" + number_text(*minimum) + ", " + number_text(*maximum) + "]";
  if (lo) return " [>= " + number_text(*minimum) + "]";
  if (hi) return " [<= " + number_text(*maximum) + "]";
  return "";
}

}  // namespace gpudm
