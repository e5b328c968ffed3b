// run_experiment: the product binary. It wires the product's families (generated list), the
// backend registry (register_all) and the dataset catalog into the CLI, and holds the table of
// modes. A family adds a mode (e.g. --evaluate, --train, --predict) with one entry in
// `family_modes()` below: a CliMode whose `add` declares its trigger option and its own options
// and whose `run` does the work (shared options such as --dataset and --backend are in CliArgs).
#include <filesystem>
#include <memory>
#include <optional>

#include "backends/register.hpp"
#include "datasets/catalog.hpp"
#include "experiments/cli.hpp"
#include "experiments/text.hpp"
#include "gpudm/build_info.hpp"

namespace {

using namespace gpudm;
using namespace gpudm::experiments;

// Family-provided modes. Example:
//   auto population = std::make_shared<std::string>();
//   auto family = std::make_shared<std::string>();
//   modes.push_back(CliMode{"evaluate",
//       [=](CLI::App& app, CliArgs&) {
//         app.add_option("--population", *population, "Population JSON (--evaluate)");
//         return app.add_option("--evaluate", *family, "Evaluate a population with FAMILY's backend");
//       },
//       [=](const CliArgs& a, CliServices& s) {
//         return pittsburgh::evaluate_cli(*population, a.dataset, a.backends.empty() ? "sequential" : a.backends[0], s.datasets());
//       }});
std::vector<CliMode> family_modes() {
  std::vector<CliMode> modes;
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
