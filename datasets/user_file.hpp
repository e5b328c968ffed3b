#pragma once
// A user's own data file, named by path instead of a catalog name: `--dataset path/to/f.csv`
// on the command line, {"path": ..., "target": ..., "task": ...} in a config's datasets.
//
// Format from the extension (a trailing .gz is decompressed whatever the name says):
//   .csv, .data (UCI) -> csv;  .tsv, .tab -> tsv;  .arff -> arff;
//   .dat -> KEEL when the file starts with '@', else whitespace-separated;  .txt -> whitespace.
// Options (all optional):
//   target  the target column: a name (CSV header, ARFF/KEEL attribute) or a 1-based column
//           number; default the last column (KEEL: @outputs)
//   task    "classification" | "regression"; default: from the ARFF/KEEL declaration (nominal ->
//           classification), for delimited text classification when a target value is not a
//           number, else an error asking for it (the file cannot say)
//   header  CSV/TSV: the first line names the columns (default: detected: a word above a column
//           of numbers, or a line with no number above one with a number; a lone line with a
//           word is a header, and then "no data rows" is an error)
// Missing values: user_file_missing_spellings(), in feature and target columns alike. A column is
// numeric unless it holds a word that is none of these; a non-finite number ("inf", "1e309") in a
// numeric column is an error naming the line and column; a column read as categories although
// most of its values are numbers is said on stderr.
//   rows    read only the first N data rows
//   format  csv | tsv | whitespace | arff | keel (overrides the extension)
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "algorithms/core/dataset.hpp"

namespace gpudm::datasets {

// The cells that mean "missing" in a user file: the empty cell, '?', '<null>' and pandas' default
// spellings (NA, N/A, NaN, NULL, None, #N/A, ...), matched exactly after trimming blanks.
const std::vector<std::string>& user_file_missing_spellings();

// The option keys a user file accepts (config validation uses them too).
const std::vector<std::string>& user_file_option_keys();

// True when `name` names a file rather than a catalog entry: it contains '/', or it is not a
// catalog name (`in_catalog` false) and something of that name exists or it ends in a data
// file's extension (.csv .data .tsv .tab .arff .txt .dat, optionally .gz).
bool is_user_file(const std::string& name, bool in_catalog);

// Checks the options (keys and value types); throws gpudm::Error naming `who`.
void check_user_file_options(const nlohmann::json& options, const std::string& who);

// Loads the file; the dataset is named `path`. Throws gpudm::Error with the file, line, column.
Dataset load_user_file(const std::string& path, const nlohmann::json& options);

}  // namespace gpudm::datasets
