#pragma once
// The gp_rules family's params, declared once (ParamTable): the algorithm's (GpParams), the
// engine's (rules::EngineOptions, backend-only) and the case's (folds, CPU estimate).
#include <string>

#include "algorithms/core/params.hpp"
#include "algorithms/gp_rules/ga.hpp"
#include "algorithms/rules/evaluator.hpp"

namespace gpudm::gp_rules {

struct GpCase {
  GpParams gp;
  rules::EngineOptions engine;
  int folds = 0;                  // 0: train on every row; k >= 2: k-fold cross-validation
  // The replay estimate (pop_sample.hpp): the recording run keeps every k-th engine
  // call's population; a host backend replays them instead of running the algorithm.
  int record_every = 0;           // 0: off
  std::string record_file = ".cache/gp_pops/{experiment}_{dataset}_{algorithm}_p{population}_g{generations}_s{seed}.bin";
  std::string replay_from;        // "" | "sample" (= record_file) | a path
  double replay_max_seconds = 0;  // replay: stop adding sampled calls once the first pass took this long
  double replay_above_gpops = 0;  // replay only a recorded run of more GPops; smaller ones run in full
};

const ParamTable<GpCase>& case_params();

}  // namespace gpudm::gp_rules
