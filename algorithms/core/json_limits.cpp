#include "algorithms/core/json_limits.hpp"

#include "algorithms/core/dataset.hpp"

#include <sys/stat.h>

#include <cerrno>
#include <cstdio>
#include <cstdint>
#include <cstring>
#include <memory>

#include <nlohmann/json.hpp>

#include "algorithms/core/error.hpp"
#include "algorithms/core/text.hpp"

namespace gpudm {

std::string json_depth_error(std::string_view text, const std::string& source, std::size_t max_depth) {
  std::size_t depth = 0, line = 1, col = 0;
  bool in_string = false, escaped = false;
  for (const char c : text) {
    ++col;
    if (c == '\n') {
      ++line;
      col = 0;
    }
    if (in_string) {
      if (escaped) escaped = false;
      else if (c == '\\') escaped = true;
      else if (c == '"') in_string = false;
      continue;
    }
    if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      if (++depth > max_depth)
        return source + ":" + std::to_string(line) + ":" + std::to_string(col) + ": JSON nested deeper than " +
               std::to_string(max_depth) + " levels";
    } else if ((c == ']' || c == '}') && depth > 0) {
      --depth;
    }
  }
  return "";
}

std::string json_text_error(std::string_view text, const std::string& source, std::size_t available,
                            std::size_t max_depth) {
  // Parsed values take several times their text (16-byte values, map nodes, string copies); a
  // parse that runs out of memory may throw std::bad_alloc inside nlohmann's noexcept destructors
  // and abort, so a text the machine cannot hold parsed is refused before parsing.
  const double need = static_cast<double>(text.size()) * static_cast<double>(kJsonMemoryPerByte);
  if (std::string why = Dataset::memory_shortfall(need, available, "parse it"); !why.empty())
    return source + ": " + std::to_string(text.size()) + " bytes of JSON: " + why;
  return json_depth_error(text, source, max_depth);
}

void require_json_depth(std::string_view text, const std::string& source, std::size_t max_depth) {
  if (std::string why = json_text_error(text, source, Dataset::available_host_memory(), max_depth); !why.empty())
    throw Error(why);
}

std::string json_parse_error_text(std::string_view text, std::size_t byte, std::string_view what) {
  std::size_t line = 1, col = 1;
  for (std::size_t i = 0; i + 1 < byte && i < text.size(); ++i) {
    if (text[i] == '\n') {
      ++line;
      col = 1;
    } else {
      ++col;
    }
  }
  return std::to_string(line) + ":" + std::to_string(col) + ": " + json_error_reason(what);
}

std::string json_error_reason(std::string_view what) {
  if (what.rfind("[json.exception.", 0) == 0)
    if (const std::size_t b = what.find("] "); b != std::string_view::npos) what = what.substr(b + 2);
  if (what.rfind("parse error", 0) == 0)
    if (const std::size_t at = what.find(": "); at != std::string_view::npos) what = what.substr(at + 2);
  return one_line(what);
}

nlohmann::json read_json_file(const std::string& path, const std::string& what) {
  const std::string text = read_capped_file(path, kMaxModelBytes, what);
  require_json_depth(text, what + " " + path);
  try {
    return nlohmann::json::parse(text);
  } catch (const nlohmann::json::parse_error& e) {
    throw Error(what + " " + path + ":" + json_parse_error_text(text, e.byte, e.what()));
  } catch (const nlohmann::json::exception& e) {
    // A number beyond the double range ("1e999": out_of_range.406) carries no position.
    throw Error(what + " " + path + ": " + json_error_reason(e.what()));
  }
}

nlohmann::json cli_json_value(const std::string& text, const std::string& source) {
  require_json_depth(text, source);
  nlohmann::json v = nlohmann::json::parse(text, nullptr, false);
  return v.is_discarded() ? nlohmann::json(text) : v;
}

long long json_int_in(const nlohmann::json& v, long long lo, long long hi, const std::string& what) {
  bool ok = false;
  if (v.is_number_unsigned()) {  // every non-negative integer of a parsed text; may exceed LLONG_MAX
    const std::uint64_t u = v.get<std::uint64_t>();
    ok = hi >= 0 && u <= static_cast<std::uint64_t>(hi) && (lo <= 0 || u >= static_cast<std::uint64_t>(lo));
  } else if (v.is_number_integer()) {
    ok = v.get<long long>() >= lo && v.get<long long>() <= hi;
  }
  if (!ok) throw Error(what + " must be an integer in [" + std::to_string(lo) + ", " + std::to_string(hi) + "], got " + v.dump());
  return v.get<long long>();
}

}  // namespace gpudm
