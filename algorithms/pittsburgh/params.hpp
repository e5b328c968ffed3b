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
  double cpu_gpops_budget = 4e9;
  double validate_gpops_budget = 5e8;
  bool measure_power = false;
  double cpu_tdp_watts = 0.0;
  int cpu_cores = 0;
  GaParams ga;  // learn: generations, length_penalty (population, init and seed are set per run)
  double test_fraction = 0.3;
};

const ParamTable<CaseParams>& params_table();

}  // namespace gpudm::pittsburgh
