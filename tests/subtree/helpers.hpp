#pragma once
// Test helpers: random datasets with numeric and nominal attributes and missing values,
// hand-built trees, a registry with the subtree backends, a DatasetProvider over fixed data.
#include <cmath>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "algorithms/core/dataset.hpp"
#include "algorithms/core/family.hpp"
#include "algorithms/core/registry.hpp"
#include "algorithms/core/rng.hpp"
#include "algorithms/subtree/interpreter.hpp"
#include "algorithms/subtree/tree.hpp"

namespace gpudm {
void register_subtree(Registry& r);
std::unique_ptr<Family> make_subtree_family();
}  // namespace gpudm

namespace gpudm::subtree::test {

// rows x cols: every third attribute nominal (4 values), values drawn from a small set so that
// ties with thresholds occur, a fraction `missing` of missing values (NaN), a few +-inf and -0.0.
inline Dataset random_dataset(std::size_t rows, std::size_t cols, std::uint64_t seed, double missing = 0.02) {
  std::vector<Attribute> attrs(cols);
  for (std::size_t c = 0; c < cols; ++c) {
    attrs[c].name = "a" + std::to_string(c);
    if (c % 3 == 2) {
      attrs[c].kind = AttributeKind::nominal;
      attrs[c].values = {"p", "q", "r", "s"};
    }
  }
  Dataset d("random", Task::classification, rows, attrs, {"no", "yes"});
  Rng rng(seed);
  for (std::size_t c = 0; c < cols; ++c)
    for (std::size_t r = 0; r < rows; ++r) {
      if (missing > 0 && rng.bernoulli(missing)) {
        d.set_missing(r, c);
        continue;
      }
      if (attrs[c].is_nominal()) {
        d.at(r, c) = static_cast<float>(rng.below(4));
      } else {
        const double u = rng.uniform();
        if (u < 0.005) d.at(r, c) = INFINITY;
        else if (u < 0.01) d.at(r, c) = -INFINITY;
        else if (u < 0.02) d.at(r, c) = -0.0f;
        else d.at(r, c) = static_cast<float>(rng.below(21)) * 0.5f - 5.0f;
      }
    }
  for (std::size_t r = 0; r < rows; ++r) d.set_label(r, static_cast<int>(r % 2));
  d.source = "generator";
  d.path = "test";
  return d;
}

inline Node leaf(std::uint32_t op, std::uint32_t attr, float a, float b = 0.0f) {
  Node n;
  n.word = rules::make_word(op, attr);
  n.a = a;
  n.b = b;
  return n;
}
inline Node logical(std::uint32_t op) {
  Node n;
  n.word = rules::make_word(op);
  return n;
}

inline Registry subtree_registry() {
  Registry r;
  register_subtree(r);
  return r;
}

class FixedProvider final : public DatasetProvider {
 public:
  void add(const std::string& name, Dataset d) { sets_[name] = std::make_shared<const Dataset>(std::move(d)); }
  std::shared_ptr<const Dataset> get(const std::string& name, const nlohmann::json&) override {
    auto it = sets_.find(name);
    if (it == sets_.end()) throw Error("no dataset '" + name + "'");
    return it->second;
  }

 private:
  std::map<std::string, std::shared_ptr<const Dataset>> sets_;
};

}  // namespace gpudm::subtree::test
