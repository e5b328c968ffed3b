#pragma once
// The gmt family's params, declared once (algorithms/core/params.hpp): the runner validates
// configs with params_table().specs(), the family and the learner CLI read the typed GmtCase
// with read_case(). Defaults are the initialisers below and those of GmtParams (the
// EA, ea.hpp) and EvalOptions (the evaluators' numerical policy and how the OpenMP and CUDA
// backends run, evaluator.hpp).
#include <cstddef>
#include <string>

#include "algorithms/core/params.hpp"
#include "algorithms/gmt/ea.hpp"
#include "algorithms/gmt/evaluator.hpp"

namespace gpudm::gmt {

// The config's "fitness": a FitnessKind, or chosen by the training set's size.
enum class FitnessChoice { bic, weighted, by_rows };

struct GmtCase {
  GmtParams ea;  // fitness.kind is resolved from `fitness` by ea_params()
  FitnessChoice fitness = FitnessChoice::by_rows;
  EvalOptions eval;
  // Hold-out and estimates of the family's runs (and of the CLI: test_fraction).
  double test_fraction = 0.0;
  // Bounded predictions (PredictionBounds, train.hpp): margin of the clamp, < 0 = off.
  double clamp_margin = 0.1;
  // M5's smoothing constant k (NodeModels / smoothed(), train.hpp), 0 = off. 15 (M5's own) with
  // clamp_margin 0.1: the generalisation study's choice (results/h200/gmt_generalisation.md).
  double smoothing = 15.0;
  int extrapolate_iterations = 0;
  long long estimate_above_rows = 0;
  int estimate_iterations = 1000;
  // Recorded batches and their replay on slower backends (family_gmt.cpp, batch_sample.hpp).
  int batch_sample_every = 0;
  std::string batch_sample_file = ".cache/gmt_batches/{experiment}_{dataset}_s{seed}.bin";
  std::string replay_from;
  long long replay_max_evaluations = 0;
  long long replay_batch_trees = 0;
  double replay_max_seconds = 0.0;
};

const ParamTable<GmtCase>& params_table();

// "auto" fitness: BIC below this many training rows, the weighted form Eq. (2) from here on.
inline constexpr std::size_t kWeightedFitnessRows = 1000000;
FitnessKind resolve_fitness(FitnessChoice c, std::size_t rows);

// params_table().read(params) plus what one param's range cannot say: every group of operator
// weights needs a positive sum, fast_pivot_guard < 1. Throws Error naming the param.
GmtCase read_case(const nlohmann::json& params);

// The EA's params for a training set of `rows` rows (fitness resolved; seed left at its default).
GmtParams ea_params(const GmtCase& c, std::size_t rows);

}  // namespace gpudm::gmt
