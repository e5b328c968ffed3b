#include "algorithms/core/text.hpp"

#include <cstdio>
#include <new>

#include "algorithms/core/error.hpp"

#include <algorithm>
#include <cctype>
#include <vector>

namespace gpudm {

std::size_t levenshtein(std::string_view a, std::string_view b) {
  std::vector<std::size_t> prev(b.size() + 1), cur(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) prev[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    cur[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t sub = prev[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1);
      cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, sub});
    }
    std::swap(prev, cur);
  }
  return prev[b.size()];
}

std::string_view trim(std::string_view s, std::string_view chars) {
  const std::size_t b = s.find_first_not_of(chars);
  if (b == std::string_view::npos) return s.substr(s.size());
  const std::size_t e = s.find_last_not_of(chars);
  return s.substr(b, e - b + 1);
}

std::string lower(std::string_view s) {
  std::string r(s);
  for (char& c : r) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return r;
}

bool ends_with_ci(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && lower(s.substr(s.size() - suffix.size())) == lower(suffix);
}

std::size_t utf8_error_at(std::string_view s) {
  std::size_t i = 0;
  const auto byte = [&](std::size_t k) { return static_cast<unsigned char>(s[k]); };
  while (i < s.size()) {
    const unsigned char c = byte(i);
    if (c < 0x80) {
      ++i;
      continue;
    }
    std::size_t n;
    unsigned lo = 0x80, hi = 0xBF;  // the allowed range of the second byte
    if (c >= 0xC2 && c <= 0xDF) n = 1;
    else if (c == 0xE0) n = 2, lo = 0xA0;
    else if (c >= 0xE1 && c <= 0xEC) n = 2;
    else if (c == 0xED) n = 2, hi = 0x9F;  // no surrogates
    else if (c >= 0xEE && c <= 0xEF) n = 2;
    else if (c == 0xF0) n = 3, lo = 0x90;
    else if (c >= 0xF1 && c <= 0xF3) n = 3;
    else if (c == 0xF4) n = 3, hi = 0x8F;
    else return i;
    if (i + n >= s.size()) return i;  // cut short
    for (std::size_t k = 1; k <= n; ++k) {
      const unsigned char b = byte(i + k);
      if (k == 1 ? (b < lo || b > hi) : (b < 0x80 || b > 0xBF)) return i;
    }
    i += n + 1;
  }
  return std::string_view::npos;
}

std::string utf8_escaped(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  while (!s.empty()) {
    const std::size_t bad = utf8_error_at(s);
    if (bad == std::string_view::npos) {
      out.append(s);
      break;
    }
    out.append(s.substr(0, bad));
    static const char* hex = "0123456789ABCDEF";
    const unsigned char b = static_cast<unsigned char>(s[bad]);
    out += "\\x";
    out += hex[b >> 4];
    out += hex[b & 15];
    s.remove_prefix(bad + 1);
  }
  return out;
}

std::string one_line(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  bool space = false;
  for (char c : s) {
    if (c == '\n' || c == '\r' || c == '\t' || c == ' ') {
      space = true;
      continue;
    }
    if (space && !out.empty()) out += ' ';
    space = false;
    out += c;
  }
  return out;
}

std::string cli_error_line(const std::exception& e) {
  if (dynamic_cast<const std::bad_alloc*>(&e)) return "run_experiment: error: out of host memory";
  const bool ours = dynamic_cast<const Error*>(&e) != nullptr;
  return "run_experiment: error: " + std::string(ours ? "" : "internal error: ") + one_line(e.what());
}

int cli_exit_status(const std::exception& e) { return dynamic_cast<const UsageError*>(&e) ? 2 : 1; }

int report_cli_error(const std::exception& e) {
  std::fprintf(stderr, "%s\n", cli_error_line(e).c_str());
  std::fflush(stderr);
  return cli_exit_status(e);
}

}  // namespace gpudm
