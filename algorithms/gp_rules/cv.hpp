#pragma once
// K-fold cross-validation of a GP classification algorithm, shared by the family's runs, the
// --train CLI and the scikit-learn peer (gp_rules_export writes the same folds).
#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include "algorithms/gp_rules/ga.hpp"

namespace gpudm::gp_rules {

// Fold of every row: a seeded shuffle (Rng(seed ^ kCvSalt)), row at shuffled position i goes to
// fold i % k.
std::vector<int> cv_folds(std::size_t rows, int k, std::uint64_t seed);

struct FoldResult {
  Score train, test;
  std::size_t rules = 0;
  double seconds = 0.0;
};
struct CvResult {
  std::vector<FoldResult> folds;
  std::uint64_t test_rows = 0, test_correct = 0;
  double test_accuracy() const { return test_rows ? static_cast<double>(test_correct) / static_cast<double>(test_rows) : 0.0; }
  double mean_train_accuracy() const;
  double mean_rules() const;
};

// Trains on k - 1 folds and scores the held-out fold, k times (fold f's run uses seed + f).
// `make_engine` returns a fresh, configured engine (one is prepared on the training part, one
// on the held-out part). Stats of every fold's run are merged into `stats`.
CvResult cross_validate(const Dataset& data, const GpParams& p, std::uint64_t seed, int k,
                        const std::function<std::unique_ptr<rules::RuleEvaluator>()>& make_engine, RunStats& stats);

}  // namespace gpudm::gp_rules
