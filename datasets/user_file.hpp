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
//   header  CSV/TSV: the first line names the columns (default: detected; a line with no number
//           followed by one with a number is a header)
//   rows    read only the first N data rows
//   format  csv | tsv | whitespace | arff | keel (overrides the extension)
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "algorithms/core/dataset.hpp"

namespace gpudm::datasets {

// The option keys a user file accepts (config validation uses them too).
const std::vector<std::string>& user_file_option_keys();

// True when `name` names a file rather than a catalog entry: it contains '/', or it is not a
// catalog name (`in_catalog` false) and a regular file of that name exists.
bool is_user_file(const std::string& name, bool in_catalog);

// Checks the options (keys and value types); throws gpudm::Error naming `who`.
void check_user_file_options(const nlohmann::json& options, const std::string& who);

// Loads the file; the dataset is named `path`. Throws gpudm::Error with the file, line, column.
Dataset load_user_file(const std::string& path, const nlohmann::json& options);

}  // namespace gpudm::datasets
