#pragma once
// The gp_rules learner on the command line, wired into run_experiment (Family::commands):
//   run_experiment --train gp_rules --algorithm falco|tan|bojarczuk --dataset NAME
//                  [--test NAME | --cv K] [--backend B] [--seed S] [--model-out M.json]
//                  [--param key=value]... [--metrics-out X.json] [--quiet]
//   run_experiment --predict M.json --dataset NAME [--backend B]
// NAME is a catalog dataset. --train prints the rules readably with train (and test or CV)
// accuracy and writes the model (format gpudm.gp_rules.model/1); --predict scores a model.
#include <vector>

#include "algorithms/core/family.hpp"

namespace gpudm::gp_rules {

std::vector<FamilyCommand> commands();

}  // namespace gpudm::gp_rules
