// gmt_learner: the GMT learner CLI on CSV files, without the experiment runner (used by the
// Weka study in scripts/peers/). `gmt_learner train ARGS` = `run_experiment --train gmt ARGS`,
// `gmt_learner predict MODEL.json ARGS` = `run_experiment --predict MODEL.json ARGS`.
#include <cstdio>
#include <string>
#include <vector>

#include "algorithms/core/registry.hpp"
#include "algorithms/gmt/cli.hpp"
#include "datasets/csv_files.hpp"

namespace gpudm {
void register_gmt(Registry&);
}

int main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  if (args.empty() || (args[0] != "train" && args[0] != "predict")) {
    std::fprintf(stderr, "gmt_learner train|predict ...\n%s", gpudm::gmt::cli_usage().c_str());
    return 2;
  }
  gpudm::Registry reg;
  gpudm::register_gmt(reg);
  gpudm::datasets::RegressionCsvFiles files;  // CSV files named by path
  gpudm::gmt::CliEnv env{&reg, &files};
  const std::string cmd = args[0];
  args.erase(args.begin());
  return cmd == "train" ? gpudm::gmt::train_cli(args, env) : gpudm::gmt::predict_cli(args, env);
}
