#pragma once
// Shared by the fuzz targets: a private scratch folder, writing the input to a file there (the
// entry points under test read files, as run_experiment does), a one-dataset provider, the
// GMT targets' dataset.
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "algorithms/core/family.hpp"

namespace gpudm::fuzz {

inline const std::string& scratch_dir() {
  static const std::string dir = [] {
    std::string t = "/tmp/gpudm-fuzz-XXXXXX";
    if (!mkdtemp(t.data())) std::abort();
    return t;
  }();
  return dir;
}

inline std::string write_input(const std::string& name, const std::uint8_t* data, std::size_t size) {
  const std::string path = scratch_dir() + "/" + name;
  std::FILE* f = std::fopen(path.c_str(), "wb");
  if (!f) std::abort();
  if (size > 0 && std::fwrite(data, 1, size, f) != size) std::abort();
  std::fclose(f);
  return path;
}

// The entry points print tables and JSON; the fuzzer's own output stays readable without them.
inline void silence_stdout() {
  static const bool done = [] { return std::freopen("/dev/null", "w", stdout) != nullptr; }();
  (void)done;
}

// Serves one dataset, whatever the name (the entry points under test ask for "--dataset fuzz").
class OneDataset : public DatasetProvider {
 public:
  explicit OneDataset(std::shared_ptr<const Dataset> d) : data_(std::move(d)) {}
  std::shared_ptr<const Dataset> get(const std::string&, const nlohmann::json&) override { return data_; }

 private:
  std::shared_ptr<const Dataset> data_;
};

// The GMT targets' data: 3 numeric attributes named a, b, c (a model file must name them), 40
// rows of a regression target, one missing value.
inline std::shared_ptr<const Dataset> gmt_dataset() {
  // "c" holds categories, so a model file's category names are matched (algorithms/core/schema.hpp).
  std::vector<Attribute> attrs{{"a", AttributeKind::numeric, {}}, {"b", AttributeKind::numeric, {}},
                               {"c", AttributeKind::nominal, {"lo", "mid", "hi"}}};
  auto d = std::make_shared<Dataset>("fuzz", Task::regression, 40, attrs);
  for (std::size_t i = 0; i < 40; ++i) {
    for (std::size_t c = 0; c < 2; ++c) d->at(i, c) = static_cast<float>((i * (c + 3)) % 11) - 5.0f;
    d->at(i, 2) = static_cast<float>(i % 3);
    d->set_target(i, static_cast<float>(i % 9));
  }
  d->set_missing(3, 2);
  return d;
}

}  // namespace gpudm::fuzz
