#pragma once
// Hand-written loaders for the tabular formats the papers' data come in. Each returns a
// gpudm::Dataset or throws gpudm::Error naming the dataset, the file, the line (1-based, physical
// line of the decompressed text), the column (1-based, as in the file) and what was expected:
//   dataset 'poker': data/poker.data:17: 9 columns, expected 11
//
// Formats
//   csv / tsv / whitespace   delimited text, optional header row, CRLF or LF, blank lines skipped
//                            (UCI .data files: label in any column, string labels, trailing blank
//                            lines; the header-less KEEL variant "0.49, 0.29, ..., cp  " too —
//                            fields are trimmed of spaces and tabs, so trailing spaces in labels
//                            do not create new classes); a field in ' or " quotes is unwrapped, a
//                            doubled quote inside it stands for one (datasets/fields.hpp)
//   arff                     @relation/@attribute/@data, numeric|real|integer|{nominal values},
//                            quoted names, '%' comments, '?' missing
//   keel                     KEEL .dat: @attribute name real [lo, hi] | integer [..] | {values},
//                            @inputs/@outputs choose the label, '?' / '<null>' missing
// gzip is detected by the magic bytes 1f 8b, whatever the file is called.
//
// Class labels
//   Declared nominal classes (ARFF/KEEL headers) keep their declared order. Otherwise the distinct
//   label strings are sorted "numeric-aware" (label_less): strings that parse completely as numbers
//   come first, ordered by value ("2" < "10"); the others follow in byte order. Class i is the
//   i-th label in that order; Dataset::class_names() keeps the strings. Text categories of nominal
//   feature columns are ordered the same way.
#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "algorithms/core/dataset.hpp"

namespace gpudm::datasets {

struct LoadOptions {
  std::string dataset;                 // name used in error messages ("dataset '<name>': ...")
  std::string format = "csv";          // csv | tsv | whitespace | arff | keel
  char delimiter = 0;                  // overrides the format's delimiter (csv ',', tsv '\t')
  bool header = false;                 // csv/tsv/whitespace: first data line holds column names
  int skip_lines = 0;                  // physical lines skipped before anything else
  int label_column = -1;               // file column of the label/target; negative counts from the end
  std::string label_name;              // the label/target column by name (header row or @attribute); overrides label_column
  bool task_from_header = false;       // ARFF/KEEL: the label's declaration sets the task (nominal: classification)
  std::vector<int> drop_columns;       // file columns not used as features (ids, dates)
  std::vector<std::string> missing = {"?"};  // tokens meaning "missing" in feature columns
  bool drop_missing_target = false;    // skip rows whose label/target is missing (else an error)
  bool drop_incomplete = false;        // skip rows with any missing feature value
  bool all_nominal = false;            // every feature column holds text categories
  std::vector<int> nominal_columns;    // file columns holding text categories
  Task task = Task::classification;
  int expected_classes = 0;            // > 0: error when the file holds another number of classes
  int expected_columns = 0;            // > 0: error when the file has another number of columns
  std::size_t max_rows = 0;            // > 0: read only the first max_rows data rows
};

// What a load saw beyond the dataset itself.
struct LoadInfo {
  std::size_t file_columns = 0;   // columns per row in the file, label and dropped columns included
  std::size_t rows_dropped = 0;   // rows skipped (missing target, or incomplete with drop_incomplete)
  std::size_t lines = 0;          // physical lines read
  bool gzip = false;
};

// Loads a file: reads the bytes, computes their sha256, inflates gzip, parses by options.format
// and sets Dataset::source = "file", path, sha256. The dataset is named options.dataset.
Dataset load_file(const std::string& path, const LoadOptions& options, LoadInfo* info = nullptr);

// The same with the format fixed (options.format is overridden).
Dataset load_csv(const std::string& path, LoadOptions options, LoadInfo* info = nullptr);         // also UCI .data
// A plain CSV regression file (the GMT learner's and the Weka study's format,
// algorithms/gmt/csv.hpp): a header row, the target in the last column, "?" or an empty cell
// missing; named by the file's stem.
Dataset load_regression_csv(const std::string& path);
Dataset load_tsv(const std::string& path, LoadOptions options, LoadInfo* info = nullptr);
Dataset load_whitespace(const std::string& path, LoadOptions options, LoadInfo* info = nullptr);  // space separated
Dataset load_arff(const std::string& path, LoadOptions options, LoadInfo* info = nullptr);
Dataset load_keel(const std::string& path, LoadOptions options, LoadInfo* info = nullptr);

// Parses already-read text; `file_label` names the file in messages.
Dataset load_text(std::string_view text, const std::string& file_label, const LoadOptions& options,
                  LoadInfo* info = nullptr);

// The catalog's "loader" object -> LoadOptions (unknown keys are an error naming `where`).
LoadOptions load_options_from_json(const nlohmann::json& loader, const std::string& where);

// Numeric-aware ordering of label strings (see above).
bool label_less(std::string_view a, std::string_view b);

// True when `s` (trimmed) parses completely as a finite number.
bool is_number_text(std::string_view s);

}  // namespace gpudm::datasets
