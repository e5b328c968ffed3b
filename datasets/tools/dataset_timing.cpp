// gpudm_dataset_timing NAME[=OPTIONS_JSON]...: loads or generates catalog datasets and prints how
// long each took (wall clock, this host) with its shape, source and feature megabytes. Used by
// scripts/device/datasets.sh to show the setup cost of the GPU experiments' inputs.
#include <chrono>
#include <cstdio>
#include <string>

#include "algorithms/core/error.hpp"
#include "datasets/catalog.hpp"

int main(int argc, char** argv) {
  using namespace gpudm::datasets;
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s NAME[=OPTIONS_JSON]...   e.g. higgs 'armchair={\"rows\":100000}'\n", argv[0]);
    return 2;
  }
  int status = 0;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    const auto eq = arg.find('=');
    const std::string name = arg.substr(0, eq);
    try {
      const nlohmann::json options = eq == std::string::npos ? nlohmann::json::object() : nlohmann::json::parse(arg.substr(eq + 1));
      const auto t0 = std::chrono::steady_clock::now();
      const gpudm::Dataset d = load_dataset(Catalog::builtin(), name, options, default_data_dirs());
      const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      std::printf("%-20s %10zu x %-3zu %-10s %8.1f MB  %7.3f s  %s\n", name.c_str(), d.rows(), d.cols(),
                  d.source.c_str(), static_cast<double>(d.feature_bytes()) / 1e6, s,
                  d.surrogate ? "surrogate" : "");
    } catch (const std::exception& e) {
      std::printf("%-20s error: %s\n", name.c_str(), e.what());
      status = 1;
    }
  }
  return status;
}
