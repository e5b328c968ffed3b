#pragma once
// What a gp_rules run reports, shared by the family's runs and the --train CLI.
#include <string>

#include <nlohmann/json.hpp>

#include "algorithms/gp_rules/classifier.hpp"
#include "algorithms/gp_rules/ga.hpp"

namespace gpudm::gp_rules {

// The run's counters and rates: evaluations, GPops (kGpopsDefinition), GPops/s over the
// evaluation phases, the evaluation share of the run, the engine's own phases.
nlohmann::ordered_json run_metrics(const RunStats& s);
// FNV-1a over the classifier (tokens, consequents, default class) and the fitness trace: equal
// across backends for the same seed.
std::string run_checksum(const Classifier& c, const RunStats& s);

// A classifier fitted the one way the --train CLI and the Python estimator (python/) fit it: the
// algorithm of `gp` on `data` with `engine` (prepared here on `data`), its score on the training
// data and the model file's JSON (model_json; info: backend, seed, `params` as given, training
// accuracy, checksum).
struct FittedModel {
  Classifier model;
  RunStats stats;
  double seconds = 0.0;
  Score train;
  nlohmann::ordered_json file;
};
FittedModel fit_model(const Dataset& data, const GpParams& gp, std::uint64_t seed, rules::RuleEvaluator& engine,
                      const std::string& backend, const nlohmann::json& params);

}  // namespace gpudm::gp_rules
