// run_experiment: the product binary. It wires the product's families (generated list), the
// backend registry (register_all) and the dataset catalog into the CLI. Families add their
// command-line modes (--train, --evaluate, --predict) through Family::commands().
#include <filesystem>
#include <memory>
#include <optional>

#include <CLI/CLI.hpp>

#include "algorithms/core/comm.hpp"
#include "algorithms/core/sample_profiler.hpp"
#include "backends/register.hpp"
#include "datasets/catalog.hpp"
#include "experiments/cli.hpp"
#include "experiments/config.hpp"
#include "experiments/text.hpp"
#include "gpudm/build_info.hpp"

using namespace gpudm;
using namespace gpudm::experiments;

int main(int argc, char** argv) {
  // Under mpirun / srun: the ranks of the run (algorithms/core/comm.hpp); a plain start: one process.
  MpiSession mpi(&argc, &argv);
  // GPUDM_PROFILE_OUT=FILE: a sampling profile of the whole run (algorithms/core/sample_profiler.hpp).
  ProfileFromEnv profile;
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
    if (name.find('/') != std::string::npos)
      return "'" + name + "' is not a catalog name; a data file is given as {\"path\": \"" + name +
             "\", \"target\": COLUMN, \"task\": \"classification\"|\"regression\"}";
    return "unknown dataset '" + name + "'" + suggest(name, catalog.names()) + " (run_experiment --datasets lists the catalog)";
  };
  s.datasets_report = [] { return datasets::render_catalog_report(datasets::catalog_report()); };
  s.paper_tables_dir = (std::filesystem::path(build_info::kSourceDir) / "experiments" / "paper_tables").string();

  std::vector<CliMode> modes = builtin_modes();
  for (auto& m : family_command_modes(s.families())) modes.push_back(std::move(m));
  return run_cli(argc, argv, s, modes);
}
