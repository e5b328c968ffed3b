#pragma once
// What a gp_rules run reports, shared by the family's runs and the --train CLI.
#include <string>

#include <nlohmann/json.hpp>

#include "algorithms/gp_rules/ga.hpp"

namespace gpudm::gp_rules {

// The run's counters and rates: evaluations, GPops (kGpopsDefinition), GPops/s over the
// evaluation phases, the evaluation share of the run, the engine's own phases.
nlohmann::ordered_json run_metrics(const RunStats& s);
// FNV-1a over the classifier (tokens, consequents, default class) and the fitness trace: equal
// across backends for the same seed.
std::string run_checksum(const Classifier& c, const RunStats& s);

}  // namespace gpudm::gp_rules
