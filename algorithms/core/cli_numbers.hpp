#pragma once
// Integers from the command line: the whole text must be a number within the option's range, so
// "--seed -1" or "--cv abc" is a one-line error naming the option, never a wrapped value or
// std::stoi's bare "stoi".
#include <charconv>
#include <cstdint>
#include <string>

#include "algorithms/core/error.hpp"

namespace gpudm {

// An integer in [lo, hi]; throws gpudm::Error "<flag> expects an integer in [lo, hi], got 'text'".
inline long long parse_cli_int(const std::string& flag, const std::string& text, long long lo, long long hi) {
  long long x = 0;
  const char* end = text.data() + text.size();
  const auto [p, ec] = std::from_chars(text.data(), end, x);
  if (text.empty() || ec != std::errc() || p != end || x < lo || x > hi)
    throw Error(flag + " expects an integer in [" + std::to_string(lo) + ", " + std::to_string(hi) + "], got '" + text + "'");
  return x;
}

// A non-negative 64-bit integer (seeds); "-1" is an error, not 2^64 - 1.
inline std::uint64_t parse_cli_uint64(const std::string& flag, const std::string& text) {
  std::uint64_t x = 0;
  const char* end = text.data() + text.size();
  const auto [p, ec] = std::from_chars(text.data(), end, x);
  if (text.empty() || ec != std::errc() || p != end)
    throw Error(flag + " expects an integer in [0, 18446744073709551615], got '" + text + "'");
  return x;
}

}  // namespace gpudm
