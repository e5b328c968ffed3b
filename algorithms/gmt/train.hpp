#pragma once
// Training and scoring helpers shared by the family driver and the learner CLI.
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "algorithms/core/dataset.hpp"
#include "algorithms/core/family.hpp"
#include "algorithms/core/phase_timer.hpp"
#include "algorithms/core/registry.hpp"
#include "algorithms/gmt/ea.hpp"
#include "algorithms/gmt/tree.hpp"

namespace gpudm {
namespace gmt {

struct Scores {
  std::int64_t rows = 0;
  double rmse = 0.0, mae = 0.0;
  // rows whose |error| exceeds the gross_threshold given to score() (0: not counted), and the RMSE
  // of the other rows: on a target with jumps (Armchair) a test row that falls between a split
  // threshold and the true boundary is predicted by the wrong leaf model.
  std::int64_t gross = 0;
  double rmse_without_gross = 0.0;
};
Scores score(const Tree& tree, const Dataset& d, double gross_threshold = 0.0);

struct TrainResult {
  Individual best;
  RunSummary summary;
  PhaseTimer timer;
  double seconds = 0.0;
  FitnessKind fitness_kind = FitnessKind::bic;
  int thresholds_centered = 0;  // center_thresholds() on the best tree (training partition unchanged)
};

// Host-clock phase of a backend's prepare(): "transfers" on the host backends (their only copy of
// the data), "prepare" on device backends, whose "transfers" phase is on the device clock.
inline const char* prepare_phase(const ModelTreeEvaluator& e) { return e.capabilities().device() ? "prepare" : "transfers"; }

// Trains GMT on `train` with the given backend evaluator.
TrainResult train(const Dataset& train, const GmtParams& p, ModelTreeEvaluator& eval, bool progress);

// Model file: {"format": "gpudm-gmt-model", "version": 2, "attributes": [{name, kind, values
// (nominal: category names)}], "tree": {...}, ...}. Version 1 listed the attribute names only.
inline constexpr const char* kModelFormat = "gpudm-gmt-model";
inline constexpr int kModelVersion = 2;
nlohmann::ordered_json model_json(const Tree& root, const Dataset& train, const nlohmann::ordered_json& info,
                                  const std::vector<double>& impute = {});
// The imputation values stored in a model file (empty when the training data had none missing).
std::vector<double> model_imputation(const nlohmann::json& j);
// Reads the tree for scoring `d`, re-coding `d` to the model by name first
// (algorithms/core/schema.hpp). A version 1 model scores only data without nominal attributes.
Tree model_from_json(const nlohmann::json& j, Dataset& d, const std::string& path);

// Missing attribute values (NaN) are replaced by a per-column value before training and
// prediction: the training mean (Weka's ReplaceMissingValues does the same for M5P/REPTree).
// Returns the values used; pass them back for test data (nullptr = compute from d).
std::vector<double> impute_missing(Dataset& d, const std::vector<double>* values);

// Per-row split of a dataset into train/test by a seeded shuffle (test_fraction in (0, 1)).
void holdout_split(const Dataset& d, double test_fraction, std::uint64_t seed, Dataset* train, Dataset* test);

}  // namespace gmt
}  // namespace gpudm
