#pragma once
// The shared classification datasets of the paper (Table 2) through the catalog, for the
// equivalence tests; row caps keep the sequential oracle to seconds.
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "datasets/catalog.hpp"

namespace pitt_test {

struct SharedCase {
  std::string name;
  long long rows = 0;  // 0 = all
};

inline std::vector<SharedCase> shared_cases() {
  return {{"iris"},         {"new_thyroid"}, {"ecoli"},         {"contraceptive"},  {"thyroid"},
          {"penbased"},     {"shuttle"},     {"connect4"},      {"kddcup", 60000}, {"poker"},
          {"poker_full", 60000}};
}

// "" when the data directory is usable, else why not (the caller skips with it).
inline std::string ensure_data_dir() {
  if (const char* d = std::getenv("GPUDM_DATA_DIR"); d && *d) return "";
#ifdef GPUDM_SOURCE_DIR
  const std::filesystem::path shared = std::filesystem::path(GPUDM_SOURCE_DIR) / ".." / "shared" / "datasets";
  if (std::filesystem::exists(shared / "STATS.tsv")) {
    setenv("GPUDM_DATA_DIR", shared.string().c_str(), 0);
    return "";
  }
#endif
  return "GPUDM_DATA_DIR is not set and ../shared/datasets is absent";
}

inline std::shared_ptr<const gpudm::Dataset> load_shared(gpudm::DatasetProvider& p, const SharedCase& c) {
  nlohmann::json o = nlohmann::json::object();
  if (c.rows > 0) o["rows"] = c.rows;
  return p.get(c.name, o);
}

}  // namespace pitt_test
