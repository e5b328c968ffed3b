#pragma once
// Small text and JSON helpers shared by the config validator, the results writer and the
// table renderer: nearest-name suggestions, one-line messages, number formatting, dotted
// paths into a results run, and a minimal RFC 4180 CSV reader/writer.
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "algorithms/core/text.hpp"

namespace gpudm::experiments {

using ojson = nlohmann::ordered_json;

using ::gpudm::levenshtein;  // algorithms/core/text.hpp

// " (did you mean 'x'?)" for the candidate nearest to `word` when it is close enough to be a
// plausible typo, otherwise " (valid: a, b, c)" listing the candidates; "" without candidates.
std::string suggest(std::string_view word, const std::vector<std::string>& candidates);

using ::gpudm::one_line;  // algorithms/core/text.hpp

// Formats `v` with a Python-like spec: ".2f", ".3g", ".1e", "d" (rounded integer), ".1%"
// (times 100 with a percent sign), "," prefix for thousands separators (",d", ",.0f").
// Empty spec means ".3g". Throws gpudm::Error on a spec it does not understand.
std::string format_number(double v, std::string_view spec);
// True when `spec` is accepted by format_number.
bool valid_format(std::string_view spec);

// Value at a dotted path ("params.threads", "dataset.name"); nullptr when absent.
const ojson* find_path(const ojson& j, std::string_view dotted);

// Loose equality used to match config values against results and paper cells: numbers
// compare numerically, a number and a numeric string compare numerically, else exact.
bool loose_equal(const ojson& a, const ojson& b);

// Text of a scalar JSON value as a table cell ("iris", "10", "0.5", "true").
std::string scalar_text(const ojson& v);

// RFC 4180 CSV: quoted fields, doubled quotes, line breaks inside quotes, CRLF tolerated; blank
// lines skipped. Lines are split by the datasets' tokenizer (datasets/fields.hpp).
std::vector<std::vector<std::string>> parse_csv(std::string_view text, const std::string& source);
std::string csv_field(std::string_view s);

// The largest results, paper-table or journal file the runner reads (a results JSON of a large
// sweep is tens of MB).
constexpr std::size_t kMaxTextFileBytes = std::size_t{1} << 30;
// A whole file through core/files.hpp's capped reader; errors name the file.
std::string read_text_file(const std::string& path);

}  // namespace gpudm::experiments
