#include "datasets/catalog.hpp"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "algorithms/core/error.hpp"
#include "algorithms/core/json_limits.hpp"
#include "algorithms/core/text.hpp"
#include "datasets/generators.hpp"
#include "datasets/loaders.hpp"
#include "datasets/user_file.hpp"

#ifndef GPUDM_CATALOG_PATH
#define GPUDM_CATALOG_PATH "datasets/catalog.json"
#endif
#ifndef GPUDM_SOURCE_DIR
#define GPUDM_SOURCE_DIR "."
#endif

namespace gpudm::datasets {
namespace {

std::string join(const std::vector<std::string>& v, const std::string& sep = ", ") {
  std::string s;
  for (const auto& x : v) s += (s.empty() ? "" : sep) + x;
  return s;
}

Task task_of(const ojson& e) { return e.at("task").get<std::string>() == "regression" ? Task::regression : Task::classification; }

const ojson& pick_variant(const ojson& entry, const std::string& name, const std::string& variant) {
  const ojson& files = entry.at("files");
  if (variant.empty()) return files.at(0);
  std::vector<std::string> known;
  for (const auto& f : files) {
    if (f.at("variant").get<std::string>() == variant) return f;
    known.push_back(f.at("variant").get<std::string>());
  }
  throw Error("dataset '" + name + "': unknown variant '" + variant + "' (known: " + join(known) + ")");
}

std::string not_found_message(const std::string& name, const std::string& rel, const std::vector<std::string>& dirs) {
  return "dataset '" + name + "': file " + rel + " not found in " + (dirs.empty() ? std::string("(no data folders)") : join(dirs, ", ")) +
         "; set GPUDM_DATA_DIR to a folder laid out like shared/datasets, or copy the file under datasets/cache/";
}

void validate_entry(const ojson& e, const std::string& where) {
  const std::string who = where + ": dataset '" + e.value("name", std::string("?")) + "'";
  for (const char* k : {"name", "task", "rows", "attributes", "source"})
    if (!e.contains(k)) throw Error(who + ": missing key '" + k + "'");
  const std::string task = e.at("task").get<std::string>();
  if (task != "classification" && task != "regression") throw Error(who + ": task must be classification or regression");
  if (task == "classification" && !e.contains("classes")) throw Error(who + ": missing key 'classes'");
  const std::string src = e.at("source").get<std::string>();
  if (src == "file") {
    if (!e.contains("files") || !e.at("files").is_array() || e.at("files").empty())
      throw Error(who + ": a file dataset needs a non-empty 'files' array");
    for (const auto& f : e.at("files")) {
      for (const char* k : {"variant", "path", "sha256", "cols", "loader"})
        if (!f.contains(k)) throw Error(who + ": a file entry lacks '" + k + "'");
      (void)load_options_from_json(f.at("loader"), who + ": variant '" + f.at("variant").get<std::string>() + "'");
    }
  } else if (src == "generator") {
    if (!e.contains("generator") || !e.at("generator").contains("name"))
      throw Error(who + ": a generated dataset needs 'generator': {\"name\": ..., \"params\": {...}}");
    const auto names = generator_names();
    const std::string g = e.at("generator").at("name").get<std::string>();
    if (std::find(names.begin(), names.end(), g) == names.end())
      throw Error(who + ": unknown generator '" + g + "' (known: " + join(names) + ")");
  } else {
    throw Error(who + ": source must be 'file' or 'generator'");
  }
}

}  // namespace

std::vector<std::string> default_data_dirs() {
  std::vector<std::string> dirs;
  if (const char* env = std::getenv("GPUDM_DATA_DIR")) {
    std::string s = env;
    std::size_t start = 0;
    while (start <= s.size()) {
      const std::size_t end = std::min(s.find(':', start), s.size());
      if (end > start) dirs.push_back(s.substr(start, end - start));
      start = end + 1;
    }
  }
  dirs.push_back(std::string(GPUDM_SOURCE_DIR) + "/datasets/cache");
  return dirs;
}

std::optional<std::string> find_data_file(const std::string& rel, const std::vector<std::string>& dirs) {
  std::error_code ec;
  for (const auto& d : dirs) {
    const std::filesystem::path p = std::filesystem::path(d) / rel;
    if (std::filesystem::is_regular_file(p, ec)) return p.string();
  }
  return std::nullopt;
}

// ---- Catalog -------------------------------------------------------------------------------

namespace detail {
extern const char* const kEmbeddedCatalog;
}

const Catalog& Catalog::builtin() {
  // GPUDM_CATALOG, else the source tree's datasets/catalog.json, else the copy compiled in.
  static const Catalog c = []() -> Catalog {
    const char* env = std::getenv("GPUDM_CATALOG");
    if (env && *env) return from_file(env);
    std::error_code ec;
    if (std::filesystem::is_regular_file(GPUDM_CATALOG_PATH, ec)) return from_file(GPUDM_CATALOG_PATH);
    try {
      return from_json(ojson::parse(detail::kEmbeddedCatalog), "built-in copy of datasets/catalog.json");
    } catch (const nlohmann::json::parse_error& e) {
      throw Error(std::string("built-in dataset catalog: ") + e.what());
    }
  }();
  return c;
}

Catalog Catalog::from_file(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw Error("dataset catalog " + path + ": cannot open (set GPUDM_CATALOG to datasets/catalog.json)");
  ojson j;
  try {
    const std::string text = read_capped_file(path, kMaxConfigBytes, "dataset catalog");
    require_json_depth(text, "dataset catalog " + path);
    j = ojson::parse(text);
  } catch (const nlohmann::json::exception& e) {
    throw Error("dataset catalog " + path + ": " + e.what());
  }
  return from_json(std::move(j), path);
}

Catalog Catalog::from_json(ojson j, const std::string& where) {
  Catalog c;
  c.where_ = where;
  if (!j.is_object() || !j.contains("datasets") || !j.at("datasets").is_array())
    throw Error("dataset catalog " + where + ": expected an object with a 'datasets' array");
  try {
    const ojson& list = j.at("datasets");
    for (std::size_t i = 0; i < list.size(); ++i) {
      validate_entry(list[i], "dataset catalog " + where);
      const std::string name = list[i].at("name").get<std::string>();
      if (!c.index_.emplace(name, i).second)
        throw Error("dataset catalog " + where + ": dataset '" + name + "' is listed twice");
    }
  } catch (const nlohmann::json::exception& e) {
    throw Error("dataset catalog " + where + ": " + e.what());
  }
  c.json_ = std::move(j);
  return c;
}

bool Catalog::contains(const std::string& name) const { return index_.count(name) > 0; }

const ojson& Catalog::entry(const std::string& name) const {
  auto it = index_.find(name);
  if (it != index_.end()) return json_.at("datasets").at(it->second);
  std::string best;
  std::size_t best_d = ~std::size_t{0};
  for (const auto& [n, i] : index_) {
    const std::size_t d = levenshtein(name, n);
    if (d < best_d) {
      best_d = d;
      best = n;
    }
  }
  throw Error("dataset '" + name + "' is not in the catalog" + (best.empty() ? "" : " (did you mean '" + best + "'?)") +
              "; run_experiment --datasets lists them");
}

std::vector<std::string> Catalog::names() const {
  std::vector<std::string> v;
  for (const auto& e : json_.at("datasets")) v.push_back(e.at("name").get<std::string>());
  return v;
}

// ---- loading ---------------------------------------------------------------------------------

Dataset load_dataset(const Catalog& catalog, const std::string& name, const nlohmann::json& options_in,
                     const std::vector<std::string>& dirs) {
  // A name that is a path (or an existing file that is no catalog name) is the user's own file.
  if (is_user_file(name, catalog.contains(name))) return load_user_file(name, options_in);
  const ojson& e = catalog.entry(name);
  const nlohmann::json options = options_in.is_null() ? nlohmann::json::object() : options_in;
  if (!options.is_object()) throw Error("dataset '" + name + "': options must be a JSON object");
  const bool surrogate = e.value("surrogate", false);
  if (e.at("source").get<std::string>() == "generator") {
    const ojson& g = e.at("generator");
    nlohmann::json params = g.contains("params") ? nlohmann::json::parse(g.at("params").dump()) : nlohmann::json::object();
    for (auto it = options.begin(); it != options.end(); ++it) params[it.key()] = it.value();
    Dataset d = generate(g.at("name").get<std::string>(), params, name);
    d.set_name(name);
    d.surrogate = d.surrogate || surrogate;
    return d;
  }
  static const std::vector<std::string> file_keys = {"rows", "seed", "variant", "verify_sha256", "replicate"};
  for (auto it = options.begin(); it != options.end(); ++it)
    if (std::find(file_keys.begin(), file_keys.end(), it.key()) == file_keys.end())
      throw Error("dataset '" + name + "': unknown option '" + it.key() + "' for a file dataset (known: " + join(file_keys) + ")");
  std::string variant;
  bool verify = true;
  std::size_t max_rows = 0;
  std::uint64_t seed = 0;
  long long replicate = 1;
  try {
    variant = options.value("variant", std::string());
    if (options.contains("replicate") && !options.at("replicate").is_number_integer())
      throw Error("dataset '" + name + "': option replicate must be a whole number");
    replicate = options.value("replicate", 1LL);
    if (replicate < 1 || replicate > 1000) throw Error("dataset '" + name + "': option replicate must be in [1, 1000]");
    verify = options.value("verify_sha256", true);
    if (options.contains("rows")) {
      const long long r = options.at("rows").get<long long>();
      if (r <= 0) throw Error("dataset '" + name + "': option rows must be positive");
      max_rows = static_cast<std::size_t>(r);
    }
    seed = options.value("seed", std::uint64_t{0});
  } catch (const nlohmann::json::exception& ex) {
    throw Error("dataset '" + name + "': bad option value: " + ex.what());
  }
  const ojson& f = pick_variant(e, name, variant);
  const std::string rel = f.at("path").get<std::string>();
  const auto path = find_data_file(rel, dirs);
  if (!path) throw Error(not_found_message(name, rel, dirs));
  LoadOptions lo = load_options_from_json(f.at("loader"), "dataset '" + name + "'");
  lo.dataset = name;
  lo.task = task_of(e);
  lo.expected_columns = f.at("cols").get<int>();
  if (lo.task == Task::classification && f.contains("classes")) lo.expected_classes = f.at("classes").get<int>();
  lo.max_rows = max_rows;
  if (max_rows > 0) lo.expected_classes = 0;  // a prefix may not hold every class
  Dataset d = load_file(*path, lo);
  const std::string want = f.at("sha256").get<std::string>();
  if (verify && d.sha256 != want)
    throw Error("dataset '" + name + "': " + *path + ": sha256 " + d.sha256 + " differs from the catalog's " + want +
                " (another version of the file?); option verify_sha256=false uses it anyway");
  d.validate();
  if (replicate > 1) {  // the rows (after `rows`) `replicate` times over, in order: more work of the same data
    std::vector<std::size_t> order;
    order.reserve(d.rows() * static_cast<std::size_t>(replicate));
    for (long long k = 0; k < replicate; ++k)
      for (std::size_t r = 0; r < d.rows(); ++r) order.push_back(r);
    Dataset big = d.select(order);
    big.set_name(d.name());
    big.sha256 = d.sha256;
    big.path = d.path;
    d = std::move(big);
  }
  d.seed = seed;
  d.surrogate = surrogate;
  return d;
}

CatalogProvider::CatalogProvider() : CatalogProvider(Catalog::builtin(), default_data_dirs()) {}

CatalogProvider::CatalogProvider(const Catalog& catalog, std::vector<std::string> dirs)
    : catalog_(catalog), dirs_(std::move(dirs)) {}

std::shared_ptr<const Dataset> CatalogProvider::get(const std::string& name, const nlohmann::json& options) {
  const std::string key = name + "|" + (options.is_null() ? std::string("{}") : options.dump());
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = cache_.find(key);
  if (it != cache_.end()) return it->second;
  auto d = std::make_shared<const Dataset>(load_dataset(catalog_, name, options, dirs_));
  cache_.emplace(key, d);
  return d;
}

void CatalogProvider::clear() {
  std::lock_guard<std::mutex> lock(mutex_);
  cache_.clear();
}

std::size_t CatalogProvider::cached() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return cache_.size();
}

// ---- report ------------------------------------------------------------------------------------

ojson catalog_report() { return catalog_report(Catalog::builtin(), default_data_dirs()); }

ojson catalog_report(const Catalog& catalog, const std::vector<std::string>& dirs) {
  ojson rep;
  rep["catalog"] = catalog.where();
  rep["data_dirs"] = dirs;
  ojson rows = ojson::array();
  for (const auto& e : catalog.json().at("datasets")) {
    const std::string name = e.at("name").get<std::string>();
    const bool classification = e.at("task").get<std::string>() == "classification";
    ojson r;
    r["name"] = name;
    r["task"] = e.at("task");
    r["rows"] = e.at("rows");
    r["attributes"] = e.at("attributes");
    if (classification) r["classes"] = e.at("classes");
    r["surrogate"] = e.value("surrogate", false);
    const auto t0 = std::chrono::steady_clock::now();
    std::string detail;
    std::string check = "ok";
    const auto compare = [&](const Dataset& d, bool check_rows) {
      std::vector<std::string> bad;
      if (check_rows && d.rows() != e.at("rows").get<std::size_t>())
        bad.push_back("rows " + std::to_string(d.rows()) + " (catalog " + e.at("rows").dump() + ")");
      if (d.cols() != e.at("attributes").get<std::size_t>())
        bad.push_back("attributes " + std::to_string(d.cols()) + " (catalog " + e.at("attributes").dump() + ")");
      if (classification && d.num_classes() != e.at("classes").get<int>())
        bad.push_back("classes " + std::to_string(d.num_classes()) + " (catalog " + e.at("classes").dump() + ")");
      if (!bad.empty()) {
        check = "mismatch";
        detail = join(bad, "; ");
      }
      r["loaded"] = {{"rows", d.rows()}, {"attributes", d.cols()}};
      if (classification) r["loaded"]["classes"] = d.num_classes();
    };
    if (e.at("source").get<std::string>() == "file") {
      const ojson& f = e.at("files").at(0);
      const std::string rel = f.at("path").get<std::string>();
      const auto path = find_data_file(rel, dirs);
      r["file"] = rel;
      if (!path) {
        r["status"] = "missing";
        check = "-";
      } else {
        r["status"] = "found";
        r["path"] = *path;
        try {
          const Dataset d = load_dataset(catalog, name, nlohmann::json::object(), dirs);
          compare(d, true);
        } catch (const Error& ex) {
          check = "error";
          detail = ex.what();
        }
      }
    } else {
      r["status"] = "generated";
      r["generator"] = e.at("generator").at("name");
      try {
        // Columns and classes from a small sample; the row count from the generator's parameters.
        const ojson& params = e.at("generator").value("params", ojson::object());
        const std::size_t rows = params.value("rows", e.at("rows").get<std::size_t>());
        if (rows != e.at("rows").get<std::size_t>()) {
          check = "mismatch";
          detail = "generator rows " + std::to_string(rows) + " (catalog " + e.at("rows").dump() + ")";
        }
        const Dataset d = load_dataset(catalog, name, {{"rows", std::min<std::size_t>(rows, 2000)}}, dirs);
        if (check == "ok") compare(d, false);
      } catch (const Error& ex) {
        check = "error";
        detail = ex.what();
      }
    }
    r["check"] = check;
    if (!detail.empty()) r["detail"] = detail;
    r["seconds"] = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    rows.push_back(std::move(r));
  }
  rep["datasets"] = std::move(rows);
  return rep;
}

std::string render_catalog_report(const ojson& rep) {
  std::ostringstream os;
  os << "Dataset catalog: " << rep.value("catalog", std::string()) << "\n";
  if (rep.contains("data_dirs")) {
    std::vector<std::string> dirs;
    for (const auto& d : rep.at("data_dirs")) dirs.push_back(d.get<std::string>());
    os << "Data folders (in order): " << join(dirs) << "\n";
  }
  os << "\n| name | task | rows x cols (classes) | status | check |\n|---|---|---|---|---|\n";
  int found = 0, generated = 0, missing = 0, bad = 0;
  std::vector<std::string> problems;
  for (const auto& r : rep.at("datasets")) {
    const std::string name = r.at("name").get<std::string>();
    std::string shape = r.at("rows").dump() + " x " + r.at("attributes").dump();
    if (r.contains("classes")) shape += " (" + r.at("classes").dump() + ")";
    const std::string st = r.at("status").get<std::string>();
    std::string status;
    if (st == "found") {
      status = "found (" + r.at("path").get<std::string>() + ")";
      ++found;
    } else if (st == "generated") {
      status = "generated (" + r.at("generator").get<std::string>() + (r.value("surrogate", false) ? ", surrogate" : "") + ")";
      ++generated;
    } else {
      status = "missing (" + r.value("file", std::string()) + ")";
      ++missing;
    }
    const std::string check = r.at("check").get<std::string>();
    if (check == "mismatch" || check == "error") {
      ++bad;
      problems.push_back(name + ": " + check + ": " + r.value("detail", std::string()));
    }
    os << "| " << name << " | " << r.at("task").get<std::string>() << " | " << shape << " | " << status << " | "
       << check << " |\n";
  }
  os << "\n" << rep.at("datasets").size() << " datasets: " << found << " found, " << generated << " generated, "
     << missing << " missing; " << bad << " with a shape mismatch or load error.\n";
  for (const auto& p : problems) os << "- " << p << "\n";
  return os.str();
}

}  // namespace gpudm::datasets
