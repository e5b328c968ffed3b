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
#include "algorithms/gmt/params.hpp"
#include "algorithms/gmt/tree.hpp"

namespace gpudm {
namespace gmt {

// Bounded predictions (Cubist's rule bounds, Quinlan 1993): a leaf's prediction is clamped to the
// range of the training targets that reached the leaf, widened on each side by `margin` x that
// range, and then to the training targets' whole range widened alike. A leaf model fitted on few
// rows can extrapolate far off them for an unseen row; the bounds keep such a prediction within
// what the leaf (and the data) have seen. margin < 0: no bounds. Applied to predictions only (the
// CLI's --predict, --test, --cv and hold-out, the family's test score), never in the fitness.
struct PredictionBounds {
  double margin = -1.0;
  double lo = 0.0, hi = 0.0;            // training targets' range (not widened)
  std::vector<double> leaf_lo, leaf_hi;  // per node index of the tree; a leaf without rows: +inf, -inf
  bool on() const { return margin >= 0.0; }
  // v clamped for a row that reached node `leaf`; *clamped set when it moved v.
  double clamp(int leaf, double v, bool* clamped = nullptr) const;
};
// The bounds of `tree` from its training data (every row routed to its leaf). The ranges do not
// depend on the margin: a copy with another `margin` is the same tree's bounds at that margin.
PredictionBounds prediction_bounds(const Tree& tree, const Dataset& train, double margin);
// The tree's prediction for a row, clamped by `bounds` when given and on.
double predict(const Tree& tree, const PredictionBounds* bounds, const Dataset& d, std::size_t row, bool* clamped = nullptr);

// M5's smoothing (Quinlan 1992, "Learning with continuous classes"; Wang & Witten 1997): a leaf's
// prediction is passed up to the root and, at each node S on the way, blended with a linear model
// fitted on S's training rows: p <- (n_i p + k M_S) / (n_i + k), n_i the training rows of the
// child the row came from. Leaf models fitted on few rows are pulled toward the models of larger
// subsets. A blend of linear models is linear, so, as Weka's M5P does, the smoothed tree is the
// same tree with each leaf's model replaced by the blend of the models on its path: predictions,
// bounds and the model file need nothing else. Prediction only, never in the fitness.
struct NodeModels {
  std::vector<std::int64_t> count;             // training rows per node
  std::vector<std::vector<int>> attrs;         // per node: the model's attributes (ascending)
  std::vector<std::vector<double>> coef;       // per node: intercept, then per attribute
};
// The internal nodes' models of `tree` (M5: least squares on the node's rows over the attributes
// that the subtree's tests and leaf models use, with the leaves' rank rule and rows_per_param
// limit), and the leaves' own models. Independent of k: one fit serves every smoothing constant.
NodeModels node_models(const Tree& tree, const Dataset& train, double rank_tol, double rows_per_param);
// `tree` with every leaf's model replaced by its smoothed model at constant k (k <= 0: `tree`).
Tree smoothed(const Tree& tree, const NodeModels& m, double k);
// The tree that predicts: `tree` smoothed at k with node models fitted on `train` under the
// evaluator's rank rule and rows_per_param (k <= 0: `tree` itself, no fit).
Tree prediction_tree(const Tree& tree, const Dataset& train, double k, const EvalOptions& opt);

struct Scores {
  std::int64_t rows = 0;
  double rmse = 0.0, mae = 0.0;
  double max_abs_error = 0.0;    // the largest |target - prediction|
  std::int64_t clamped = 0;      // predictions the bounds moved
  // rows whose |error| exceeds the gross_threshold given to score() (0: not counted), and the RMSE
  // of the other rows: on a target with jumps (Armchair) a test row that falls between a split
  // threshold and the true boundary is predicted by the wrong leaf model.
  std::int64_t gross = 0;
  double rmse_without_gross = 0.0;
};
Scores score(const Tree& tree, const Dataset& d, double gross_threshold = 0.0, const PredictionBounds* bounds = nullptr);

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

// A model fitted the one way the learner CLI's train and the Python estimator (python/) fit it:
// the EA on `data` (missing values already imputed with `impute`, empty when none were), then the
// tree that predicts (smoothed at c.smoothing), its bounds at c.clamp_margin, its scores on the
// training data as it predicts, and the model file's JSON (model_json, `backend` in its info; the
// training means for missing values always, `impute` or the column means when training had none).
struct FittedModel {
  TrainResult result;             // the evolved tree (result.best) and the run
  Tree root;                      // the tree that predicts
  PredictionBounds bounds;
  Scores train;
  nlohmann::ordered_json model;
};
FittedModel fit_model(const Dataset& data, const std::vector<double>& impute, const GmtCase& c, std::uint64_t seed,
                      ModelTreeEvaluator& eval, const std::string& backend, bool progress);

// Model file: {"format": "gpudm-gmt-model", "version": 4, "attributes": [{name, kind, values
// (nominal: category names)}], "tree": {...}, "bounds": {"margin", "range": [lo, hi], "leaves":
// [[lo, hi] per leaf in the tree's preorder]}, "smoothing": k, ...}. Version 1 listed the attribute
// names only; versions 1 and 2 have no bounds (their predictions are not clamped); version 4 adds
// "smoothing" (the tree's leaf models are the smoothed ones; absent or 0: not smoothed), which a
// reader needs only to say so: the tree predicts as it is.
inline constexpr const char* kModelFormat = "gpudm-gmt-model";
inline constexpr int kModelVersion = 4;
nlohmann::ordered_json model_json(const Tree& root, const Dataset& train, const nlohmann::ordered_json& info,
                                  const std::vector<double>& impute = {}, const PredictionBounds* bounds = nullptr,
                                  double smoothing = 0.0);
// The bounds a model file stores for `tree` (the tree read from the same file); none: off.
PredictionBounds model_bounds(const nlohmann::json& j, const Tree& tree, const std::string& path);
// The imputation values stored in a model file (empty when the training data had none missing).
std::vector<double> model_imputation(const nlohmann::json& j);
// Reads the tree for scoring `d`, re-coding `d` to the model by name first
// (algorithms/core/schema.hpp). A version 1 model scores only data without nominal attributes.
Tree model_from_json(const nlohmann::json& j, Dataset& d, const std::string& path);

// Missing attribute values (NaN) are replaced by a per-column value before training and
// prediction: the training mean (Weka's ReplaceMissingValues does the same for M5P/REPTree).
// Returns the values used; pass them back for test data (nullptr = compute from d).
std::vector<double> impute_missing(Dataset& d, const std::vector<double>* values);
// Per-column means of the finite values (0 for a column with none): what impute_missing fills in.
std::vector<double> column_means(const Dataset& d);

// Per-row split of a dataset into train/test by a seeded shuffle (test_fraction in (0, 1)).
void holdout_split(const Dataset& d, double test_fraction, std::uint64_t seed, Dataset* train, Dataset* test);

// K-fold cross-validation of `rows` rows: fold k's test rows (ascending), from a seeded shuffle
// dealt round-robin. The learner CLI's --cv and tools/gmt/gmt_study_split --folds use it, so every
// learner of a study sees the same folds.
std::vector<std::vector<std::size_t>> cv_folds(std::size_t rows, int folds, std::uint64_t seed);
// The rows of [0, rows) not in `fold` (ascending `fold`): a fold's training rows.
std::vector<std::size_t> rows_not_in(const std::vector<std::size_t>& fold, std::size_t rows);
// A fingerprint of a row list (FNV-1a over the indices, 16 hex digits), to check that two tools
// used the same fold.
std::string rows_fingerprint(const std::vector<std::size_t>& rows);

}  // namespace gmt
}  // namespace gpudm
