#pragma once
// The dataset catalog (datasets/catalog.json) and the DatasetProvider the runner uses.
//
// Discovery: a catalog file path is looked up in GPUDM_DATA_DIR (':'-separated folders, each laid
// out like shared/datasets), then in <repo>/datasets/cache/. Generated datasets need no files.
//
// Options (a config's dataset "options"):
//   files:      {"rows": N} first N rows, {"variant": "uci"} another file of the entry,
//               {"verify_sha256": false} accept a file whose bytes differ from the catalog's,
//               {"seed": S} accepted and recorded (files are not random)
//   generators: every generator parameter (rows, seed, noise_sd, binary, ...), checked by name.
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "algorithms/core/dataset.hpp"
#include "algorithms/core/family.hpp"

namespace gpudm::datasets {

using ojson = nlohmann::ordered_json;

// GPUDM_DATA_DIR entries (in order), then <source dir>/datasets/cache.
std::vector<std::string> default_data_dirs();

class Catalog {
 public:
  // datasets/catalog.json of this source tree (GPUDM_CATALOG overrides the path). Loaded once.
  static const Catalog& builtin();
  static Catalog from_file(const std::string& path);
  static Catalog from_json(ojson j, const std::string& where);

  bool contains(const std::string& name) const;
  // The entry; unknown names throw gpudm::Error with the nearest known name suggested.
  const ojson& entry(const std::string& name) const;
  std::vector<std::string> names() const;
  const ojson& json() const { return json_; }
  const std::string& where() const { return where_; }

 private:
  ojson json_;
  std::string where_;
  std::map<std::string, std::size_t> index_;
};

// First existing <dir>/<relative_path>, or nullopt.
std::optional<std::string> find_data_file(const std::string& relative_path, const std::vector<std::string>& dirs);

// Resolves one dataset: loads the (variant's) file or runs the generator, applying options. A
// name that is a file path (datasets/user_file.hpp) loads the user's own file.
Dataset load_dataset(const Catalog& catalog, const std::string& name, const nlohmann::json& options,
                     const std::vector<std::string>& dirs);

class CatalogProvider : public gpudm::DatasetProvider {
 public:
  CatalogProvider();  // builtin catalog, default_data_dirs()
  CatalogProvider(const Catalog& catalog, std::vector<std::string> dirs);
  // Cached by (name, options): a second request returns the same object.
  std::shared_ptr<const Dataset> get(const std::string& name, const nlohmann::json& options) override;
  void clear();
  std::size_t cached() const;
  const std::vector<std::string>& dirs() const { return dirs_; }

 private:
  const Catalog& catalog_;
  std::vector<std::string> dirs_;
  mutable std::mutex mutex_;
  std::map<std::string, std::shared_ptr<const Dataset>> cache_;
};

// `run_experiment --datasets`: one row per catalog entry with its status (found with path,
// generated, missing) and a shape check against the catalog (files are loaded in full,
// generators run on a small sample for columns and classes).
ojson catalog_report();
ojson catalog_report(const Catalog& catalog, const std::vector<std::string>& dirs);
// Markdown table of a catalog_report, with a summary line and the problems listed below it.
std::string render_catalog_report(const ojson& report);

}  // namespace gpudm::datasets
