#pragma once
// The GMT learner CLI, wired into run_experiment:
//   run_experiment --train gmt --dataset NAME [--test NAME | --cv K] [options]
//   run_experiment --predict MODEL.json --dataset NAME
// NAME is a catalog name (resolved by the DatasetProvider) or a path ending in .csv.
// `args` are the arguments after "--train gmt" (resp. after "--predict", starting with the
// model path). Both print to stdout, errors on one line to stderr; return the exit status.
#include <string>
#include <vector>

#include "algorithms/core/family.hpp"
#include "algorithms/core/registry.hpp"

namespace gpudm {
namespace gmt {

struct CliEnv {
  const Registry* registry = nullptr;      // must hold the "gmt" backends
  DatasetProvider* datasets = nullptr;     // the datasets (run_experiment: the catalog; gmt_learner: CSV files)
};

std::string cli_usage();
int train_cli(const std::vector<std::string>& args, const CliEnv& env);
int predict_cli(const std::vector<std::string>& args, const CliEnv& env);

}  // namespace gmt
}  // namespace gpudm
