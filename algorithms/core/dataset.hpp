#pragma once
// Dataset: features column-major float32, each column padded to a multiple of kRowPad rows
// (the papers' transposed, coalesced layout: thread i of a warp reads row i of a column).
// Padding rows hold 0 and are never counted. Nominal values are stored as their index (0..k-1)
// in float. Missing values are flagged in `missing` (same layout) and stored as NaN in features.
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "algorithms/core/error.hpp"

namespace gpudm {

enum class AttributeKind { numeric, nominal };
enum class Task { classification, regression };

inline const char* to_string(Task t) { return t == Task::classification ? "classification" : "regression"; }

struct Attribute {
  std::string name;
  AttributeKind kind = AttributeKind::numeric;
  std::vector<std::string> values;  // nominal value names; index = stored value
  bool is_nominal() const { return kind == AttributeKind::nominal; }
};

class Dataset {
 public:
  static constexpr std::size_t kRowPad = 32;
  static std::size_t padded(std::size_t rows) { return (rows + kRowPad - 1) / kRowPad * kRowPad; }

  Dataset() = default;
  // Allocates rows x attributes.size() features (zeroed) and the label/target vector.
  Dataset(std::string name, Task task, std::size_t rows, std::vector<Attribute> attributes,
          std::vector<std::string> class_names = {})
      : name_(std::move(name)), task_(task), rows_(rows), padded_rows_(padded_checked(name_, rows, attributes.size())),
        attributes_(std::move(attributes)), class_names_(std::move(class_names)),
        features_(padded_rows_ * attributes_.size(), 0.0f) {
    if (task_ == Task::classification) labels_.assign(rows_, 0);
    else targets_.assign(rows_, 0.0f);
  }

  // ---- shape and metadata ----
  const std::string& name() const { return name_; }
  void set_name(std::string n) { name_ = std::move(n); }
  Task task() const { return task_; }
  std::size_t rows() const { return rows_; }
  std::size_t padded_rows() const { return padded_rows_; }
  std::size_t cols() const { return attributes_.size(); }  // features only, target excluded
  const std::vector<Attribute>& attributes() const { return attributes_; }
  const Attribute& attribute(std::size_t c) const { return attributes_.at(c); }
  int num_classes() const { return static_cast<int>(class_names_.size()); }
  const std::vector<std::string>& class_names() const { return class_names_; }

  // Provenance: file path + sha256, or generator + parameters + seed.
  std::string source;    // "file" | "generator"
  std::string path;      // file path or generator name
  std::string sha256;    // of the file bytes, when loaded from a file
  std::uint64_t seed = 0;
  bool surrogate = false;  // shape-matched stand-in for a dataset we do not have

  // ---- features ----
  float& at(std::size_t row, std::size_t col) { return features_[col * padded_rows_ + row]; }
  float at(std::size_t row, std::size_t col) const { return features_[col * padded_rows_ + row]; }
  const float* column(std::size_t col) const { return features_.data() + col * padded_rows_; }
  float* column(std::size_t col) { return features_.data() + col * padded_rows_; }
  const std::vector<float>& features() const { return features_; }  // padded column-major

  bool has_missing() const { return !missing_.empty(); }
  bool is_missing(std::size_t row, std::size_t col) const {
    return !missing_.empty() && missing_[col * padded_rows_ + row] != 0;
  }
  void set_missing(std::size_t row, std::size_t col) {
    if (missing_.empty()) missing_.assign(features_.size(), 0);
    missing_[col * padded_rows_ + row] = 1;
    at(row, col) = std::nanf("");
  }
  const std::vector<std::uint8_t>& missing_mask() const { return missing_; }

  // ---- target ----
  int label(std::size_t row) const { return labels_[row]; }
  void set_label(std::size_t row, int y) { labels_[row] = y; }
  const std::vector<std::int32_t>& labels() const { return labels_; }
  float target(std::size_t row) const { return targets_[row]; }
  void set_target(std::size_t row, float y) { targets_[row] = y; }
  const std::vector<float>& targets() const { return targets_; }

  void set_class_names(std::vector<std::string> names) { class_names_ = std::move(names); }

  // Throws gpudm::Error naming the dataset, row and column of the first violation:
  // labels in [0, classes), no NaN/inf outside missing cells, finite regression targets.
  void validate() const;

  // Rows [begin, end) as a new dataset (streams, train/test splits).
  Dataset slice(std::size_t begin, std::size_t end) const;
  // Rows in the given order (shuffles, CV folds).
  Dataset select(const std::vector<std::size_t>& rows) const;

  // padded(rows), after checking that rows x cols fit in the host memory available now: a
  // request beyond it throws gpudm::Error saying what was asked and what the machine has,
  // instead of std::bad_alloc.
  static std::size_t padded_checked(const std::string& name, std::size_t rows, std::size_t cols);
  // Host memory available to this process now (MemAvailable, within a cgroup limit); 0 if unknown.
  static std::size_t available_host_memory();
  // "" when `need` bytes fit in `available` (0: unknown, taken as fitting), else "needs about
  // N MiB of host memory to <doing>; M MiB are available". The one wording of the checks made
  // before reading (file reads, gzip inflation, JSON parses, data parses); a dataset's own
  // allocation says its rows x attributes (padded_checked).
  static std::string memory_shortfall(double need, std::size_t available, const std::string& doing);

  // Bytes of feature data that one pass over all rows reads (unpadded, float32).
  std::size_t feature_bytes() const { return rows_ * cols() * sizeof(float); }

 private:
  std::string name_;
  Task task_ = Task::classification;
  std::size_t rows_ = 0, padded_rows_ = 0;
  std::vector<Attribute> attributes_;
  std::vector<std::string> class_names_;
  std::vector<float> features_;
  std::vector<std::uint8_t> missing_;
  std::vector<std::int32_t> labels_;
  std::vector<float> targets_;
};

}  // namespace gpudm
