#pragma once
// Limits on the JSON the tool reads (configs, results files and journals on --resume, population
// and model files, the dataset catalog). nlohmann's parser is iterative, but copying, comparing
// and dumping a value recurse once per nesting level, so a hostile file nested 100,000 levels
// deep overflows the stack long after it was parsed. Every reader checks the text first: nesting
// deeper than kMaxJsonDepth, or a file larger than its cap, is a one-line error naming the file
// and the place, and no deeper value ever exists in memory.
#include <cstddef>
#include <string>
#include <string_view>

#include <nlohmann/json_fwd.hpp>

#include "algorithms/core/files.hpp"

namespace gpudm {

// Deepest nesting of arrays/objects accepted anywhere (the deepest file we write, a GMT model
// tree of 24 levels, needs about 50).
inline constexpr std::size_t kMaxJsonDepth = 256;

// Size caps (bytes) of the files a user hands the tool.
inline constexpr std::size_t kMaxConfigBytes = std::size_t{16} << 20;  // a config and each include
inline constexpr std::size_t kMaxModelBytes = std::size_t{1} << 30;    // population / model files

// "" when no array/object in `text` is nested deeper than `max_depth`, else
// "<source>:L:C: JSON nested deeper than N levels" (L:C where the limit is crossed). Linear,
// no recursion, string-aware; it does not validate the JSON (the parser does).
std::string json_depth_error(std::string_view text, const std::string& source, std::size_t max_depth = kMaxJsonDepth);
// Host memory a parsed JSON value takes per byte of its text, at most (numbers-heavy files: a
// 16-byte value for "0.5,"; objects: map nodes of ~100 bytes per key).
inline constexpr std::size_t kJsonMemoryPerByte = 12;
// json_depth_error, or when the text needs more host memory to parse (kJsonMemoryPerByte per
// byte) than `available` bytes (0: unknown), "<source>: N bytes of JSON: needs about ... MiB ...".
std::string json_text_error(std::string_view text, const std::string& source, std::size_t available,
                            std::size_t max_depth = kMaxJsonDepth);
// Throws gpudm::Error with json_text_error's message, against the host memory available now.
void require_json_depth(std::string_view text, const std::string& source, std::size_t max_depth = kMaxJsonDepth);

// read_capped_file: algorithms/core/files.hpp (included here for its callers).

// nlohmann's exception message without its prefix ("[json.exception.out_of_range.406] ", and
// "parse error at line L, column C: " for a parse error), on one line.
std::string json_error_reason(std::string_view what);
// "L:C: reason" for a parse error of `text` that nlohmann reported at 1-based `byte` with message
// `what`: the line and column of that byte, and json_error_reason(what).
std::string json_parse_error_text(std::string_view text, std::size_t byte, std::string_view what);

// A JSON file the user gave (a model, a population, a results file): read through
// read_capped_file (kMaxModelBytes), checked by require_json_depth, parsed; a syntax error is
// "<what> <path>:L:C: <reason>" like a config's. Throws gpudm::Error (exit 1).
nlohmann::json read_json_file(const std::string& path, const std::string& what);

// An integer field of a file the user gave, in [lo, hi], checked before it is narrowed (nlohmann's
// get<int>() wraps 4294967296 to 0); throws gpudm::Error "<what> must be an integer in [lo, hi],
// got <value>".
// A command-line value (--param key=VALUE): VALUE as JSON when it parses (depth-checked: argv
// allows ~100,000 brackets), else VALUE as a string.
nlohmann::json cli_json_value(const std::string& text, const std::string& source);

long long json_int_in(const nlohmann::json& v, long long lo, long long hi, const std::string& what);

}  // namespace gpudm
