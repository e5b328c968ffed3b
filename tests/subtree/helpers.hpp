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
#include "tests/rules/engine_helpers.hpp"

namespace gpudm {
void register_subtree(Registry& r);
std::unique_ptr<Family> make_subtree_family();
}  // namespace gpudm

namespace gpudm::subtree::test {

// rows x cols: every third attribute nominal (4 values), values drawn from a small set so that
// ties with thresholds occur, a fraction `missing` of missing values (NaN), a few +-inf and -0.0
// (the rule engine's test data, fp16-exact), labels alternating no / yes.
inline Dataset random_dataset(std::size_t rows, std::size_t cols, std::uint64_t seed, double missing = 0.02) {
  Dataset d = rules::test::random_dataset(rows, cols, 2, seed, missing, /*half_exact=*/true);
  d.set_class_names({"no", "yes"});
  for (std::size_t r = 0; r < rows; ++r) d.set_label(r, static_cast<int>(r % 2));
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
