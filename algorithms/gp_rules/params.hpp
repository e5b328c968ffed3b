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
  double cpu_gpops_budget = 0.0;  // host backends: estimate runs above this many GPops
};

const ParamTable<GpCase>& case_params();

}  // namespace gpudm::gp_rules
