#pragma once
// `run_experiment --evaluate pittsburgh --population P.json --dataset NAME [--backend B]
//  [--path faithful|fast] [--devices N] [--threads N]`: evaluates a population file on a dataset
// and prints, as JSON on stdout, every rule's confusion matrix (tp, tn, fp, fn) and fitness and
// every individual's accuracy. The pittsburgh family registers it (Family::commands()).
#include <iosfwd>
#include <string>
#include <vector>

#include "algorithms/core/family.hpp"
#include "algorithms/pittsburgh/evaluator.hpp"

namespace gpudm::pittsburgh {

// Builds the JSON (also used by tests).
ojson evaluation_to_json(const Population& p, const EvaluationResult& r, const Dataset& d, const std::string& backend);

// `args` are the arguments after "--evaluate pittsburgh". Returns the exit status: 0, 1 for a
// bad population or dataset (one line on `err`), 2 for bad arguments.
int evaluate_command(const std::vector<std::string>& args, const CommandEnv& env, std::ostream& out, std::ostream& err);

}  // namespace gpudm::pittsburgh
