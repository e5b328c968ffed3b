#pragma once
// `run_experiment --evaluate pittsburgh --population P.json --dataset NAME [--backend B]`:
// evaluates a population file on a catalog dataset and prints, as JSON on stdout, every
// rule's confusion matrix (tp, tn, fp, fn) and fitness and every individual's accuracy.
#include <iosfwd>
#include <string>

#include "algorithms/core/family.hpp"
#include "algorithms/pittsburgh/evaluator.hpp"

namespace gpudm::pittsburgh {

// Builds the JSON (also used by tests).
ojson evaluation_to_json(const Population& p, const EvaluationResult& r, const Dataset& d, const std::string& backend);

// Returns the process exit code; errors (bad population, unknown dataset) go to stderr on one
// line with exit code 1. Defined in backends/register_pittsburgh.cpp (it needs the backends).
int evaluate_cli(const std::string& population, const std::string& dataset, const std::string& backend,
                 DatasetProvider& datasets);
// Same with an explicit registry, options and output stream.
int evaluate_cli(const std::string& population, const std::string& dataset, const std::string& backend,
                 DatasetProvider& datasets, const Registry& registry, const EvaluatorOptions& options);
int evaluate_cli(const std::string& population, const std::string& dataset, const std::string& backend,
                 DatasetProvider& datasets, const Registry& registry, const EvaluatorOptions& options,
                 std::ostream& out, std::ostream& err);

}  // namespace gpudm::pittsburgh
