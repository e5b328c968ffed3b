#include "algorithms/core/dataset.hpp"

#include <cmath>

namespace gpudm {

void Dataset::validate() const {
  const std::string who = "dataset '" + name_ + "'";
  if (rows_ == 0) throw Error(who + ": no rows");
  if (attributes_.empty()) throw Error(who + ": no attributes");
  for (std::size_t c = 0; c < cols(); ++c) {
    const float* col = column(c);
    const Attribute& a = attributes_[c];
    for (std::size_t r = 0; r < rows_; ++r) {
      if (is_missing(r, c)) continue;
      const float v = col[r];
      if (!std::isfinite(v))
        throw Error(who + ": row " + std::to_string(r + 1) + ", attribute '" + a.name + "' is not finite");
      if (a.is_nominal() && (v < 0 || v >= static_cast<float>(a.values.size()) || v != std::floor(v)))
        throw Error(who + ": row " + std::to_string(r + 1) + ", nominal attribute '" + a.name +
                    "' has value index " + std::to_string(v) + " outside its " + std::to_string(a.values.size()) +
                    " values");
    }
  }
  if (task_ == Task::classification) {
    if (class_names_.empty()) throw Error(who + ": classification dataset without class names");
    for (std::size_t r = 0; r < rows_; ++r)
      if (labels_[r] < 0 || labels_[r] >= num_classes())
        throw Error(who + ": row " + std::to_string(r + 1) + " has class " + std::to_string(labels_[r]) +
                    ", expected 0.." + std::to_string(num_classes() - 1));
  } else {
    for (std::size_t r = 0; r < rows_; ++r)
      if (!std::isfinite(targets_[r]))
        throw Error(who + ": row " + std::to_string(r + 1) + " has a non-finite target");
  }
}

Dataset Dataset::select(const std::vector<std::size_t>& rows) const {
  Dataset d(name_, task_, rows.size(), attributes_, class_names_);
  d.source = source;
  d.path = path;
  d.sha256 = sha256;
  d.seed = seed;
  d.surrogate = surrogate;
  for (std::size_t c = 0; c < cols(); ++c)
    for (std::size_t i = 0; i < rows.size(); ++i) {
      d.at(i, c) = at(rows[i], c);
      if (is_missing(rows[i], c)) d.set_missing(i, c);
    }
  for (std::size_t i = 0; i < rows.size(); ++i) {
    if (task_ == Task::classification) d.labels_[i] = labels_[rows[i]];
    else d.targets_[i] = targets_[rows[i]];
  }
  return d;
}

Dataset Dataset::slice(std::size_t begin, std::size_t end) const {
  if (begin > end || end > rows_) throw Error("dataset '" + name_ + "': slice out of range");
  std::vector<std::size_t> idx(end - begin);
  for (std::size_t i = 0; i < idx.size(); ++i) idx[i] = begin + i;
  return select(idx);
}

}  // namespace gpudm
