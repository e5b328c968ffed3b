// run_experiment: the product binary. It wires the product's families (generated list), the
// backend registry (register_all) and the dataset catalog into the CLI, and holds the table of
// modes. A family adds a mode with one entry in `family_modes()` below: a CliMode whose `add`
// declares its trigger option and its own options and whose `run` does the work (shared options
// such as --dataset and --backend are in CliArgs), or a raw mode that parses its own flags.
#include <filesystem>
#include <memory>
#include <optional>

#include <CLI/CLI.hpp>

#include "algorithms/gmt/cli.hpp"
#include "algorithms/pittsburgh/evaluate_cli.hpp"
#include "backends/register.hpp"
#include "datasets/catalog.hpp"
#include "experiments/cli.hpp"
#include "experiments/config.hpp"
#include "experiments/text.hpp"
#include "gpudm/build_info.hpp"

namespace {

using namespace gpudm;
using namespace gpudm::experiments;

// Family-provided modes. A mode that fits the shared options is a CliMode with `add`/`run`
// (--evaluate below); one that parses its own flags is a raw mode (--train, --predict).
std::vector<CliMode> family_modes() {
  std::vector<CliMode> modes;

  // run_experiment --evaluate pittsburgh --population P.json --dataset NAME [--backend B]
  auto evaluate_family = std::make_shared<std::string>();
  auto population = std::make_shared<std::string>();
  CliMode evaluate;
  evaluate.name = "evaluate";
  evaluate.add = [=](CLI::App& app, CliArgs&) {
    app.add_option("--population", *population, "Population JSON for --evaluate");
    return app.add_option("--evaluate", *evaluate_family,
                          "Evaluate a population file on --dataset with FAMILY's --backend and print JSON "
                          "(families: pittsburgh)");
  };
  evaluate.run = [=](const CliArgs& a, CliServices& s) -> int {
    if (*evaluate_family != "pittsburgh")
      throw ConfigError("--evaluate " + *evaluate_family + ": only the pittsburgh family evaluates population files");
    if (population->empty()) throw ConfigError("--evaluate pittsburgh needs --population P.json");
    if (a.dataset.empty()) throw ConfigError("--evaluate pittsburgh needs --dataset NAME");
    if (a.backends.size() > 1) throw ConfigError("--evaluate takes one --backend");
    return pittsburgh::evaluate_cli(*population, a.dataset, a.backends.empty() ? "sequential" : a.backends[0],
                                    s.datasets(), s.registry(), pittsburgh::EvaluatorOptions{});
  };
  modes.push_back(std::move(evaluate));

  // run_experiment --train gmt --dataset NAME [--test NAME | --cv K] [options]
  CliMode train;
  train.name = "train";
  train.raw_trigger = "--train";
  train.raw_help = "--train gmt --dataset NAME [--test NAME | --cv K] [...]   induce a model tree (--train gmt --help)";
  train.run_raw = [](const std::vector<std::string>& rest, CliServices& s) -> int {
    if (rest.empty() || rest[0] != "gmt")
      throw ConfigError("--train " + (rest.empty() ? std::string() : rest[0]) + ": only 'gmt' trains (--train gmt ...)");
    gmt::CliEnv env{&s.registry(), &s.datasets()};
    return gmt::train_cli(std::vector<std::string>(rest.begin() + 1, rest.end()), env);
  };
  modes.push_back(std::move(train));

  // run_experiment --predict MODEL.json --dataset NAME
  CliMode predict;
  predict.name = "predict";
  predict.raw_trigger = "--predict";
  predict.raw_help = "--predict MODEL.json --dataset NAME                       score a GMT model tree";
  predict.run_raw = [](const std::vector<std::string>& rest, CliServices& s) -> int {
    gmt::CliEnv env{&s.registry(), &s.datasets()};
    return gmt::predict_cli(rest, env);
  };
  modes.push_back(std::move(predict));
  return modes;
}

}  // namespace

int main(int argc, char** argv) {
  std::optional<FamilySet> families;
  std::optional<Registry> registry;
  std::unique_ptr<datasets::CatalogProvider> provider;

  CliServices s;
  s.families = [&]() -> FamilySet& {
    if (!families) families = product_families();
    return *families;
  };
  s.registry = [&]() -> Registry& {
    if (!registry) {
      registry.emplace();
      register_all(*registry);
    }
    return *registry;
  };
  s.datasets = [&]() -> DatasetProvider& {
    if (!provider) provider = std::make_unique<datasets::CatalogProvider>();
    return *provider;
  };
  s.check_dataset = [](const std::string& name) -> std::string {
    const auto& catalog = datasets::Catalog::builtin();
    if (catalog.contains(name)) return "";
    return "unknown dataset '" + name + "'" + suggest(name, catalog.names()) + " (run_experiment --datasets lists the catalog)";
  };
  s.datasets_report = [] { return datasets::render_catalog_report(datasets::catalog_report()); };
  s.paper_tables_dir = (std::filesystem::path(build_info::kSourceDir) / "experiments" / "paper_tables").string();

  std::vector<CliMode> modes = builtin_modes();
  for (auto& m : family_modes()) modes.push_back(std::move(m));
  return run_cli(argc, argv, s, modes);
}
