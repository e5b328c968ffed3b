#pragma once
// The config's "tables" and "peers" (docs/config-format.md): each table spec checked against the
// paper tables it names (experiments/paper_tables/*.csv) and the peers it joins; peers' results
// files loaded. Used by the loader (config.cpp).
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "experiments/config_check.hpp"

namespace gpudm::experiments::config_detail {

// Headers of the paper tables, each read once per load.
class PaperCsvCache {
 public:
  explicit PaperCsvCache(std::string dir) : dir_(std::move(dir)) {}
  // nullptr when there is no such table.
  const std::vector<std::string>* header(const std::string& name);
  std::vector<std::string> list() const;  // the folder's tables, sorted
  const std::string& dir() const { return dir_; }

 private:
  std::string dir_;
  std::map<std::string, std::vector<std::string>> headers_;
};

// The config's "peers": [{"name", "file" (relative to the config), "rows" (dotted path to the
// file's array of rows; default "runs"; "" = the file is the array), "match" {peer key: run path}}].
std::vector<PeerResults> load_peers(const Checker& c, const ojson& spec, const std::filesystem::path& config_dir);

// One entry of "tables" at `path`.
void check_table(const Checker& c, const ojson& t, const std::string& path, PaperCsvCache& papers,
                 const std::vector<PeerResults>& peers);

}  // namespace gpudm::experiments::config_detail
