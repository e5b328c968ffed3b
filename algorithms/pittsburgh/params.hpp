#pragma once
// The pittsburgh family's params, declared once (algorithms/core/params.hpp): the runner
// validates configs with params_table().specs(), the family and the --evaluate command read
// the typed CaseParams with params_table().read(). Defaults are the initialisers below and those
// of the nested structs (RandomRuleSpec, EvaluatorOptions, GaParams).
#include <string>
#include <utility>
#include <vector>

#include "algorithms/core/params.hpp"
#include "algorithms/pittsburgh/evaluator.hpp"
#include "algorithms/pittsburgh/ga.hpp"
#include "algorithms/pittsburgh/population.hpp"

namespace gpudm::pittsburgh {

enum class Mode { evaluate, learn };

struct CaseParams {
  Mode mode = Mode::evaluate;
  int population = 10;
  RandomRuleSpec rules;      // rules_per_individual, max_conditions_cap, p_or, p_not, p_interval
  EvaluatorOptions backend;  // path, threads, devices, features
  // Host backends' estimate of an evaluation above estimate_above_gpops GPops (0 = measure every
  // one): estimate_pieces runs of consecutive individuals spread over the population, together
  // estimate_sample_fraction of its individuals, timed and the whole evaluation's time estimated
  // from their seconds per GPop (algorithms/core/replay_estimate.hpp). Few large pieces: a piece is
  // one evaluation call, whose fixed cost (OpenMP's fork and join, the decision list's pass) must
  // stay small beside its work (pieces of one individual overstated OpenMP 16's time up to 50x).
  double estimate_above_gpops = 4e9;
  double estimate_sample_fraction = 0.4;
  int estimate_pieces = 2;
  double validate_gpops_budget = 5e8;
  bool measure_power = false;
  double cpu_tdp_watts = 0.0;
  int cpu_cores = 0;
  GaParams ga;  // learn: generations, length_penalty (population, init and seed are set per run)
  double test_fraction = 0.3;
};

const ParamTable<CaseParams>& params_table();

}  // namespace gpudm::pittsburgh
