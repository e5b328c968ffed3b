// The dataset loaders (datasets/loaders.cpp, datasets/user_file.cpp), one binary per format
// (GPUDM_FUZZ_FORMAT). The first input byte picks loader options (header, label column, task,
// nominal handling, missing rows); the rest is the file. The same bytes also go through the
// user-file path (`--dataset f.<ext>`: format, header, target and task detection). Every outcome
// is a Dataset that validates or a gpudm::Error.
#include <cstdint>
#include <string>
#include <string_view>

#include "algorithms/core/error.hpp"
#include "datasets/loaders.hpp"
#include "datasets/user_file.hpp"
#include "tests/fuzz/fuzz_util.hpp"

using namespace gpudm;
using namespace gpudm::datasets;

namespace {

const std::string kFormat = GPUDM_FUZZ_FORMAT;

LoadOptions options_from(std::uint8_t b) {
  LoadOptions o;
  o.dataset = "fuzz";
  o.format = kFormat == "uci" ? "csv" : kFormat;
  o.header = (b & 1) != 0 && kFormat != "uci";
  o.label_column = (b & 2) ? 0 : -1;
  o.task = (b & 4) ? Task::regression : Task::classification;
  o.all_nominal = (b & 8) != 0;
  o.drop_missing_target = (b & 16) != 0;
  o.drop_incomplete = (b & 32) != 0;
  if (b & 64) o.max_rows = 3;
  if (kFormat == "uci") {  // the UCI .data options the catalog uses
    o.drop_columns = (b & 128) ? std::vector<int>{1} : std::vector<int>{};
    o.nominal_columns = {0};
    o.missing = {"?", ""};
  } else if (b & 128) {
    o.expected_columns = 3;
    o.expected_classes = 2;
  }
  return o;
}

const char* extension() {
  if (kFormat == "csv") return ".csv";
  if (kFormat == "tsv") return ".tsv";
  if (kFormat == "arff") return ".arff";
  if (kFormat == "keel") return ".dat";
  return ".data";
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 1) return 0;
  const std::string_view text(reinterpret_cast<const char*>(data) + 1, size - 1);
  try {
    Dataset d = load_text(text, "fuzz.txt", options_from(data[0]));
    d.validate();
  } catch (const Error&) {
  }
  const std::string path = fuzz::write_input(std::string("in") + extension(), data + 1, size - 1);
  nlohmann::json opt = nlohmann::json::object();
  if (data[0] & 1) opt["task"] = (data[0] & 4) ? "regression" : "classification";
  if (data[0] & 2) opt["target"] = 1;
  if (data[0] & 8) opt["target"] = "y";
  if (data[0] & 64) opt["rows"] = 2;
  try {
    (void)load_user_file(path, opt);
  } catch (const Error&) {
  }
  return 0;
}
