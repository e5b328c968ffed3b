#pragma once
// Text helpers shared by every layer (one home).
#include <cstddef>
#include <string>
#include <string_view>

namespace gpudm {

// Edit distance (insertions, deletions, substitutions of one character each).
std::size_t levenshtein(std::string_view a, std::string_view b);

inline constexpr std::string_view kSpaces = " \t\n\r\v\f";
// `s` without leading and trailing characters of `chars` (by default every isspace character).
std::string_view trim(std::string_view s, std::string_view chars = kSpaces);
// Collapses newlines and runs of whitespace so a message prints on one line.
std::string one_line(std::string_view s);
// ASCII lower case.
std::string lower(std::string_view s);
// Whether `s` ends with `suffix`, ignoring ASCII case.
bool ends_with_ci(std::string_view s, std::string_view suffix);

// Offset of the first byte of `s` that is not part of well-formed UTF-8 (overlong forms and
// surrogates count as ill-formed), or std::string_view::npos. JSON output needs UTF-8: nlohmann
// throws a type error on anything else, after the run.
std::size_t utf8_error_at(std::string_view s);
// `s` with every ill-formed byte written as \xNN (well-formed text unchanged).
std::string utf8_escaped(std::string_view s);

}  // namespace gpudm
