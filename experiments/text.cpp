#include "experiments/text.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>

#include "algorithms/core/error.hpp"
#include "algorithms/core/files.hpp"
#include "datasets/fields.hpp"

namespace gpudm::experiments {

std::string suggest(std::string_view word, const std::vector<std::string>& candidates) {
  if (candidates.empty()) return "";
  std::size_t best = static_cast<std::size_t>(-1);
  const std::string* best_name = nullptr;
  for (const auto& c : candidates) {
    const std::size_t d = levenshtein(word, c);
    if (d < best) {
      best = d;
      best_name = &c;
    }
  }
  // A typo or abbreviation: at most half of the longer name edited (2 edits for short names).
  const std::size_t limit = std::max<std::size_t>(2, std::max(word.size(), best_name->size()) / 2);
  if (best <= limit) return " (did you mean '" + *best_name + "'?)";
  if (candidates.size() > 16) return "";
  std::string s = " (valid:";
  for (std::size_t i = 0; i < candidates.size(); ++i) s += (i ? ", " : " ") + candidates[i];
  return s + ")";
}


namespace {
struct Spec {
  bool thousands = false;
  int precision = -1;
  char type = 'g';
};

bool parse_spec(std::string_view spec, Spec& out) {
  if (spec.empty()) {
    out = Spec{false, 3, 'g'};
    return true;
  }
  std::size_t i = 0;
  if (spec[i] == ',') {
    out.thousands = true;
    ++i;
  }
  if (i < spec.size() && spec[i] == '.') {
    ++i;
    const std::size_t start = i;
    while (i < spec.size() && std::isdigit(static_cast<unsigned char>(spec[i]))) ++i;
    if (i == start || i - start > 2) return false;
    out.precision = std::atoi(std::string(spec.substr(start, i - start)).c_str());
  }
  if (i + 1 != spec.size()) return false;
  const char t = spec[i];
  if (t != 'f' && t != 'e' && t != 'g' && t != 'd' && t != '%') return false;
  if (t == 'd' && out.precision >= 0) return false;
  out.type = t;
  if (out.precision < 0) out.precision = t == 'd' ? 0 : (t == 'g' ? 3 : 2);
  return true;
}

std::string group_thousands(const std::string& s) {
  // s is "-1234567.89" or "1234"; group the integer digits.
  std::size_t start = (!s.empty() && (s[0] == '-' || s[0] == '+')) ? 1 : 0;
  std::size_t end = s.find_first_of(".eE", start);
  if (end == std::string::npos) end = s.size();
  std::string digits = s.substr(start, end - start);
  std::string grouped;
  for (std::size_t k = 0; k < digits.size(); ++k) {
    if (k && (digits.size() - k) % 3 == 0) grouped += ',';
    grouped += digits[k];
  }
  return s.substr(0, start) + grouped + s.substr(end);
}
}  // namespace

bool valid_format(std::string_view spec) {
  Spec s;
  return parse_spec(spec, s);
}

std::string format_number(double v, std::string_view spec) {
  Spec s;
  if (!parse_spec(spec, s)) throw Error("unknown number format '" + std::string(spec) + "' (use e.g. .2f, .3g, .1e, d, .1%)");
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  char buf[64];
  switch (s.type) {
    case 'f': std::snprintf(buf, sizeof buf, "%.*f", s.precision, v); break;
    case 'e': std::snprintf(buf, sizeof buf, "%.*e", s.precision, v); break;
    case 'g': std::snprintf(buf, sizeof buf, "%.*g", std::max(1, s.precision), v); break;
    case 'd': std::snprintf(buf, sizeof buf, "%.0f", std::round(v)); break;
    case '%': std::snprintf(buf, sizeof buf, "%.*f", s.precision, v * 100.0); break;
    default: buf[0] = 0;
  }
  std::string out = buf;
  if (out == "-0" || out.rfind("-0.", 0) == 0) {
    // "-0.00" from a tiny negative value reads as a sign error; print it unsigned.
    bool all_zero = out.find_first_not_of("-0.") == std::string::npos;
    if (all_zero) out = out.substr(1);
  }
  if (s.thousands && s.type != 'e' && s.type != 'g') out = group_thousands(out);
  if (s.type == '%') out += '%';
  return out;
}

const ojson* find_path(const ojson& j, std::string_view dotted) {
  const ojson* cur = &j;
  std::size_t pos = 0;
  while (pos <= dotted.size()) {
    std::size_t dot = dotted.find('.', pos);
    if (dot == std::string_view::npos) dot = dotted.size();
    const std::string key(dotted.substr(pos, dot - pos));
    if (!cur->is_object()) return nullptr;
    auto it = cur->find(key);
    if (it == cur->end()) return nullptr;
    cur = &*it;
    pos = dot + 1;
    if (dot == dotted.size()) break;
  }
  return cur;
}

namespace {
bool as_number(const ojson& v, double& out) {
  if (v.is_number()) {
    out = v.get<double>();
    return true;
  }
  if (v.is_string()) {
    const std::string& s = v.get_ref<const std::string&>();
    if (s.empty()) return false;
    char* end = nullptr;
    out = std::strtod(s.c_str(), &end);
    return end && *end == 0;
  }
  return false;
}
}  // namespace

bool loose_equal(const ojson& a, const ojson& b) {
  double x, y;
  if ((a.is_number() || b.is_number()) && as_number(a, x) && as_number(b, y)) return x == y;
  if (a.is_string() && b.is_string()) return a.get_ref<const std::string&>() == b.get_ref<const std::string&>();
  return a == b;
}

std::string scalar_text(const ojson& v) {
  if (v.is_string()) return v.get<std::string>();
  if (v.is_null()) return "";
  if (v.is_number_float()) {
    const double d = v.get<double>();
    if (std::floor(d) == d && std::fabs(d) < 1e15) return std::to_string(static_cast<long long>(d));
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.6g", d);
    return buf;
  }
  return v.dump();
}

std::vector<std::vector<std::string>> parse_csv(std::string_view text, const std::string& source) {
  std::vector<std::vector<std::string>> rows;
  std::vector<std::string_view> fields;
  std::string scratch, record;  // record: the lines of a quoted field with line breaks, joined
  const datasets::FieldSyntax syntax = datasets::FieldSyntax::rfc4180();
  std::size_t line_no = 0, pos = 0;
  bool open = false;  // `record` holds a record whose quoted field goes on on the next line
  while (pos < text.size()) {
    std::size_t nl = text.find('\n', pos);
    if (nl == std::string_view::npos) nl = text.size();
    std::string_view line = text.substr(pos, nl - pos);
    pos = nl + 1;
    ++line_no;
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (open) {
      record += '\n';
      record += line;
      line = record;
    } else if (line.empty()) {
      continue;  // blank line
    }
    const datasets::FieldsStatus st = datasets::split_fields(line, syntax, fields, scratch);
    if (st == datasets::FieldsStatus::open_quote) {
      if (!open) record.assign(line);
      open = true;
      continue;
    }
    if (st == datasets::FieldsStatus::stray_quote)
      throw Error(source + ":" + std::to_string(line_no) + ": quote inside an unquoted field");
    rows.emplace_back(fields.begin(), fields.end());
    open = false;
  }
  if (open) throw Error(source + ":" + std::to_string(line_no) + ": unterminated quoted field");
  return rows;
}

std::string csv_field(std::string_view s) {
  if (s.find_first_of(",\"\n\r") == std::string_view::npos) return std::string(s);
  std::string out = "\"";
  for (char c : s) {
    if (c == '"') out += '"';
    out += c;
  }
  return out + "\"";
}

std::string read_text_file(const std::string& path) {
  return read_capped_file(path, kMaxTextFileBytes, "file");  // (core/files.hpp: the one capped reader)
}

}  // namespace gpudm::experiments
