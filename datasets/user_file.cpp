#include "algorithms/core/text.hpp"
#include "datasets/user_file.hpp"

#include <sys/stat.h>

#include <algorithm>
#include <iterator>
#include <utility>
#include <charconv>
#include <iostream>
#include <string_view>

#include "algorithms/core/error.hpp"
#include "datasets/fields.hpp"
#include "datasets/file_bytes.hpp"
#include "datasets/loaders.hpp"

namespace gpudm::datasets {
namespace {

// The extension (lower case, ".gz" stripped): "iris.CSV.gz" -> ".csv".
std::string extension_of(std::string path) {
  if (ends_with_ci(path, ".gz")) path.resize(path.size() - 3);
  const std::size_t slash = path.find_last_of('/');
  const std::size_t dot = path.find_last_of('.');
  if (dot == std::string::npos || (slash != std::string::npos && dot < slash)) return "";
  std::string e = path.substr(dot);
  for (char& c : e) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return e;
}

// First non-blank lines of the text (at most `n`).
std::vector<std::string_view> first_lines(std::string_view text, std::size_t n) {
  std::vector<std::string_view> out;
  std::size_t pos = 0;
  while (pos < text.size() && out.size() < n) {
    std::size_t nl = text.find('\n', pos);
    if (nl == std::string_view::npos) nl = text.size();
    std::string_view line = text.substr(pos, nl - pos);
    pos = nl + 1;
    if (line.find_first_not_of(" \t\r") != std::string_view::npos) out.push_back(line);
  }
  return out;
}

// The format from the file name alone, checked before the file is read; "" for ".dat" (KEEL or
// delimited, told by its first line: format_of_dat).
constexpr std::pair<const char*, const char*> kDataExtensions[] = {
    {".csv", "csv"}, {".data", "csv"}, {".tsv", "tsv"}, {".tab", "tsv"}, {".arff", "arff"}, {".txt", "whitespace"}, {".dat", ""}};

bool has_data_extension(const std::string& path) {
  const std::string ext = extension_of(path);
  return std::any_of(std::begin(kDataExtensions), std::end(kDataExtensions), [&](const auto& e) { return ext == e.first; });
}

std::string format_from_extension(const std::string& path, const std::string& who) {
  const std::string ext = extension_of(path);
  for (const auto& [e, format] : kDataExtensions)
    if (ext == e) return format;
  throw Error(who + ": cannot tell the format from the extension '" + ext +
              "' (.csv, .tsv, .arff, .dat, .data, .txt, each optionally .gz); set the option format");
}

std::string format_of_dat(std::string_view text) {
  const auto lines = first_lines(text, 1);
  const std::string_view first = lines.empty() ? std::string_view() : lines[0];
  const std::size_t at = first.find_first_not_of(" \t");
  if (at != std::string_view::npos && first[at] == '@') return "keel";
  return first.find(',') != std::string_view::npos ? "csv" : "whitespace";
}

// A cell any number parser would read: finite or not ("inf", "1e309"), so that the loader names a
// non-finite value as an error instead of the column silently becoming categories.
bool reads_as_number(std::string_view s) {
  s = trim(s);
  if (!s.empty() && s.front() == '+') s.remove_prefix(1);
  if (s.empty()) return false;
  double x;
  const char* end = s.data() + s.size();
  const auto [p, ec] = std::from_chars(s.data(), end, x);
  return p == end && (ec == std::errc() || ec == std::errc::result_out_of_range);
}

bool is_missing_spelling(std::string_view s) {
  s = trim(s);
  const auto& m = user_file_missing_spellings();
  return std::find(m.begin(), m.end(), s) != m.end();
}

enum class Cell { missing, number, word };

Cell cell_kind(std::string_view s) {
  if (is_missing_spelling(s)) return Cell::missing;
  return reads_as_number(s) ? Cell::number : Cell::word;
}

// What the data rows of one delimited column hold.
struct ColumnScan {
  std::size_t numbers = 0, words = 0;
  std::size_t first_word_line = 0;  // physical line, 1-based
  std::string first_word;
  void add(std::string_view cell, std::size_t line) {
    switch (cell_kind(cell)) {
      case Cell::missing:
        break;
      case Cell::number:
        ++numbers;
        break;
      case Cell::word:
        if (words++ == 0) {
          first_word = std::string(cell.substr(0, 40));
          first_word_line = line;
        }
        break;
    }
  }
};

// The first non-blank line (its fields and physical line number) and what the lines after it hold,
// column by column (at most `max_rows` of them when > 0).
struct DelimitedScan {
  std::vector<std::string> first;
  std::size_t first_line = 0;
  std::vector<ColumnScan> rest;
  std::size_t rest_rows = 0;
};

DelimitedScan scan_delimited(std::string_view text, char delim, std::size_t max_rows) {
  DelimitedScan out;
  std::vector<std::string_view> f;
  std::string scratch;
  std::size_t pos = 0, line_no = 0;
  bool first = true;
  while (pos < text.size() && (max_rows == 0 || out.rest_rows < max_rows)) {
    std::size_t nl = text.find('\n', pos);
    if (nl == std::string_view::npos) nl = text.size();
    const std::string_view line = text.substr(pos, nl - pos);
    pos = nl + 1;
    ++line_no;
    if (line.find_first_not_of(" \t\r") == std::string_view::npos) continue;
    split_fields(line, FieldSyntax::data(delim), f, scratch);
    if (first) {
      first = false;
      out.first.assign(f.begin(), f.end());
      out.first_line = line_no;
      continue;
    }
    ++out.rest_rows;
    if (f.size() > out.rest.size()) out.rest.resize(f.size());
    for (std::size_t c = 0; c < f.size(); ++c) out.rest[c].add(f[c], line_no);
  }
  return out;
}

// A first line is a header when one of its cells is a word above a column of numbers
// ("x1,2020,class" over numbers), or, for files whose columns are all words, when it has no
// number and the next line has one. A lone line with a word in it is a header (and then the
// file has no data rows).
bool looks_like_header(const DelimitedScan& s) {
  if (s.first.empty()) return false;
  if (s.rest_rows == 0)
    return std::any_of(s.first.begin(), s.first.end(), [](const std::string& c) { return cell_kind(c) == Cell::word; });
  for (std::size_t c = 0; c < s.first.size() && c < s.rest.size(); ++c)
    if (s.rest[c].numbers > 0 && s.rest[c].words == 0 && cell_kind(s.first[c]) == Cell::word) return true;
  const bool first_has_number =
      std::any_of(s.first.begin(), s.first.end(), [](const std::string& c) { return cell_kind(c) == Cell::number; });
  const bool rest_has_number =
      std::any_of(s.rest.begin(), s.rest.end(), [](const ColumnScan& c) { return c.numbers > 0; });
  return !first_has_number && rest_has_number;
}

}  // namespace

const std::vector<std::string>& user_file_missing_spellings() {
  // Weka's '?' first (messages suggest it), the empty cell, KEEL's '<null>', pandas' default na_values.
  static const std::vector<std::string> m = {"?",    "",     "<null>", "NA",   "N/A",  "n/a",     "NaN",     "nan",
                                             "-NaN", "-nan", "NULL",   "null", "None", "<NA>",    "#N/A",    "#N/A N/A",
                                             "#NA",  "1.#IND", "-1.#IND", "1.#QNAN", "-1.#QNAN"};
  return m;
}

namespace {

// Columns holding a word (not a number, not a missing value) are categories. A column that holds
// more numbers than words is said on stderr: its few words are likely a missing-value spelling or
// a typo, and categories computed as codes would silently change every model.
std::vector<int> nominal_columns_of(DelimitedScan& s, bool header, const std::string& who) {
  if (!header) {  // the first line is data
    if (s.first.size() > s.rest.size()) s.rest.resize(s.first.size());
    for (std::size_t c = 0; c < s.first.size(); ++c) {
      ColumnScan one;
      one.add(s.first[c], s.first_line);
      ColumnScan& r = s.rest[c];
      if (one.words > 0 && (r.words == 0 || s.first_line < r.first_word_line)) {
        r.first_word = one.first_word;
        r.first_word_line = one.first_word_line;
      }
      r.numbers += one.numbers;
      r.words += one.words;
    }
  }
  std::vector<int> out;
  for (std::size_t c = 0; c < s.rest.size(); ++c) {
    const ColumnScan& r = s.rest[c];
    if (r.words == 0) continue;
    out.push_back(static_cast<int>(c));
    if (r.numbers > r.words) {
      const std::string name = header && c < s.first.size() ? "'" + s.first[c] + "'" : std::to_string(c + 1);
      std::cerr << who << ": warning: column " << name << " is read as categories because " << r.words << " of its "
                << r.words + r.numbers << " values are not numbers (first '" << r.first_word << "', line "
                << r.first_word_line << "); if they mean missing values, write them as ?, NA or an empty cell\n";
    }
  }
  return out;
}
}  // namespace

const std::vector<std::string>& user_file_option_keys() {
  static const std::vector<std::string> keys = {"target", "task", "header", "rows", "format"};
  return keys;
}

bool is_user_file(const std::string& name, bool in_catalog) {
  if (name.find('/') != std::string::npos) return true;
  if (in_catalog || name.empty()) return false;
  // Anything of that name (a FIFO or a folder is then refused as such, not "not in the catalog"),
  // or a name with a data file's extension (an absent "houses.csv" is a missing file).
  struct stat st {};
  return ::stat(name.c_str(), &st) == 0 || has_data_extension(name);
}

void check_user_file_options(const nlohmann::json& o, const std::string& who) {
  if (o.is_null()) return;
  if (!o.is_object()) throw Error(who + ": options must be a JSON object");
  const auto& keys = user_file_option_keys();
  for (auto it = o.begin(); it != o.end(); ++it) {
    const std::string& k = it.key();
    const auto& v = it.value();
    if (std::find(keys.begin(), keys.end(), k) == keys.end())
      throw Error(who + ": unknown option '" + k + "' for a data file (known: target, task, header, rows, format)");
    if (k == "target" && !(v.is_string() && !v.get<std::string>().empty()) &&
        !(v.is_number_integer() && v.get<long long>() >= 1 && v.get<long long>() <= (1 << 24)))
      throw Error(who + ": target must be a column name or a column number >= 1, got " + v.dump());
    if (k == "task" && v != "classification" && v != "regression")
      throw Error(who + ": task must be \"classification\" or \"regression\", got " + v.dump());
    if (k == "header" && !v.is_boolean()) throw Error(who + ": header must be true or false, got " + v.dump());
    if (k == "rows" && !(v.is_number_integer() && v.get<long long>() >= 1))
      throw Error(who + ": rows must be an int >= 1, got " + v.dump());
    if (k == "format" && v != "csv" && v != "tsv" && v != "whitespace" && v != "arff" && v != "keel")
      throw Error(who + ": format must be one of csv, tsv, whitespace, arff, keel, got " + v.dump());
  }
}

Dataset load_user_file(const std::string& path, const nlohmann::json& options_in) {
  const nlohmann::json options = options_in.is_null() ? nlohmann::json::object() : options_in;
  const std::string who = "dataset '" + path + "'";
  check_user_file_options(options, who);
  LoadOptions lo;
  lo.format = options.contains("format") ? options["format"].get<std::string>() : format_from_extension(path, who);
  const FileBytes fb = read_file_bytes(path, who);
  if (lo.format.empty()) lo.format = format_of_dat(fb.text);
  lo.dataset = path;
  lo.missing = user_file_missing_spellings();
  if (options.contains("rows")) lo.max_rows = options["rows"].get<std::size_t>();
  const bool delimited = lo.format != "arff" && lo.format != "keel";
  const bool task_given = options.contains("task");
  if (task_given) lo.task = options["task"] == "regression" ? Task::regression : Task::classification;
  else lo.task_from_header = !delimited;

  std::string target_name;
  long long target_number = 0;  // 1-based
  if (options.contains("target")) {
    if (options["target"].is_string()) target_name = options["target"].get<std::string>();
    else target_number = options["target"].get<long long>();
  }
  if (delimited) {
    const char delim = lo.format == "csv" ? ',' : lo.format == "tsv" ? '\t' : 0;
    DelimitedScan scan = scan_delimited(fb.text, delim, lo.max_rows);
    if (options.contains("header")) {
      lo.header = options["header"].get<bool>();
    } else {
      lo.header = looks_like_header(scan);
      // A target named by a field of the first line makes it a header whatever the values are.
      if (!target_name.empty() && std::find(scan.first.begin(), scan.first.end(), target_name) != scan.first.end())
        lo.header = true;
    }
    if (scan.first.empty() || (lo.header && scan.rest_rows == 0))
      throw Error(who + ": no data rows" + (scan.first.empty() ? "" : " (only a header line, line " +
                                                                        std::to_string(scan.first_line) + ")"));
    if (!target_name.empty() && !lo.header) {
      // "3" names column 3 in a file without a header.
      if (is_number_text(target_name) && target_name.find_first_not_of("0123456789") == std::string::npos)
        target_number = std::stoll(target_name.substr(0, 9));
      else
        throw Error(who + ": no column named '" + target_name + "' (the file has no header row; give a column number)");
      target_name.clear();
    }
    // Columns of words are categories (nominal features); the loader then keeps their names. A
    // row with extra fields is the loader's to report, with its line number.
    const std::size_t width = scan.first.size();
    lo.nominal_columns = nominal_columns_of(scan, lo.header, who);
    std::erase_if(lo.nominal_columns, [&](int c) { return static_cast<std::size_t>(c) >= width; });
  }
  if (!target_name.empty()) lo.label_name = target_name;
  else if (target_number > 0) lo.label_column = static_cast<int>(target_number - 1);

  Dataset d = load_text(fb.text, path, lo);
  if (!task_given && delimited && d.task() == Task::classification) {
    // Text cannot say whether numbers are classes or values.
    const auto& names = d.class_names();
    if (std::all_of(names.begin(), names.end(), [](const std::string& n) { return is_number_text(n); }))
      throw Error(who + ": the target column holds numbers (" + std::to_string(names.size()) +
                  " distinct values): say whether they are classes or values with --task classification|regression "
                  "(in a config: \"task\")");
  }
  d.source = "file";
  // A file name in another encoding than UTF-8 is kept readable in results (JSON) by escaping.
  d.path = utf8_escaped(path);
  d.set_name(d.path);
  d.sha256 = fb.sha256;
  d.validate();
  return d;
}

}  // namespace gpudm::datasets
