#include "algorithms/core/text.hpp"
#include "datasets/user_file.hpp"

#include <sys/stat.h>

#include <algorithm>
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

std::string format_of(const std::string& path, std::string_view text, const std::string& who) {
  const std::string ext = extension_of(path);
  if (ext == ".csv" || ext == ".data") return "csv";
  if (ext == ".tsv" || ext == ".tab") return "tsv";
  if (ext == ".arff") return "arff";
  if (ext == ".txt") return "whitespace";
  if (ext == ".dat") {
    const auto lines = first_lines(text, 1);
    const std::string_view first = lines.empty() ? std::string_view() : lines[0];
    const std::size_t at = first.find_first_not_of(" \t");
    if (at != std::string_view::npos && first[at] == '@') return "keel";
    return first.find(',') != std::string_view::npos ? "csv" : "whitespace";
  }
  throw Error(who + ": cannot tell the format from the extension '" + ext +
              "' (.csv, .tsv, .arff, .dat, .data, .txt, each optionally .gz); set the option format");
}

// Columns of delimited text holding a value that is no number (and not missing): categories.
std::vector<int> text_columns(std::string_view text, char delim, bool header, std::size_t max_rows) {
  std::vector<bool> is_text;
  std::vector<std::string_view> f;
  std::string scratch;
  std::size_t pos = 0, rows = 0;
  bool first = true;
  while (pos < text.size() && (max_rows == 0 || rows < max_rows)) {
    std::size_t nl = text.find('\n', pos);
    if (nl == std::string_view::npos) nl = text.size();
    const std::string_view line = text.substr(pos, nl - pos);
    pos = nl + 1;
    if (line.find_first_not_of(" \t\r") == std::string_view::npos) continue;
    if (first && header) {
      first = false;
      continue;
    }
    first = false;
    ++rows;
    split_fields(line, FieldSyntax::data(delim), f, scratch);
    if (f.size() > is_text.size()) is_text.resize(f.size(), false);
    for (std::size_t c = 0; c < f.size(); ++c)
      if (!is_text[c] && !f[c].empty() && f[c] != "?" && !is_number_text(f[c])) is_text[c] = true;
  }
  std::vector<int> out;
  for (std::size_t c = 0; c < is_text.size(); ++c)
    if (is_text[c]) out.push_back(static_cast<int>(c));
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
  struct stat st {};
  return ::stat(name.c_str(), &st) == 0 && S_ISREG(st.st_mode);
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
  const FileBytes fb = read_file_bytes(path, who);
  LoadOptions lo;
  lo.dataset = path;
  lo.missing = {"?", ""};  // exported spreadsheets leave missing cells empty
  lo.format = options.contains("format") ? options["format"].get<std::string>() : format_of(path, fb.text, who);
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
    // A header row: said by the option, else a first line without a number above one with a number.
    const char delim = lo.format == "csv" ? ',' : lo.format == "tsv" ? '\t' : 0;
    const auto lines = first_lines(fb.text, 2);
    std::vector<std::string_view> first, second;
    std::string scratch_first, scratch_second;  // each line's unquoted fields live in its own
    if (!lines.empty()) split_fields(lines[0], FieldSyntax::data(delim), first, scratch_first);
    if (lines.size() > 1) split_fields(lines[1], FieldSyntax::data(delim), second, scratch_second);
    if (options.contains("header")) {
      lo.header = options["header"].get<bool>();
    } else {
      const bool first_has_number = std::any_of(first.begin(), first.end(), is_number_text);
      const bool second_has_number = std::any_of(second.begin(), second.end(), is_number_text);
      lo.header = !first.empty() && !first_has_number && second_has_number;
      // A target named by a field of the first line makes it a header whatever the values are.
      if (!target_name.empty() && std::find(first.begin(), first.end(), target_name) != first.end()) lo.header = true;
    }
    if (!target_name.empty() && !lo.header) {
      // "3" names column 3 in a file without a header.
      if (is_number_text(target_name) && target_name.find_first_not_of("0123456789") == std::string::npos)
        target_number = std::stoll(target_name.substr(0, 9));
      else
        throw Error(who + ": no column named '" + target_name + "' (the file has no header row; give a column number)");
      target_name.clear();
    }
  }
  if (delimited) {
    // Columns of words are categories (nominal features); the loader then keeps their names.
    const char delim = lo.format == "csv" ? ',' : lo.format == "tsv" ? '\t' : 0;
    lo.nominal_columns = text_columns(fb.text, delim, lo.header, lo.max_rows);
    // A row with extra fields is the loader's to report, with its line number.
    std::vector<std::string_view> f;
    std::string scratch;
    const auto lines = first_lines(fb.text, 1);
    if (!lines.empty()) split_fields(lines[0], FieldSyntax::data(delim), f, scratch);
    std::erase_if(lo.nominal_columns, [&](int c) { return static_cast<std::size_t>(c) >= f.size(); });
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
  d.path = path;
  d.sha256 = fb.sha256;
  d.validate();
  return d;
}

}  // namespace gpudm::datasets
