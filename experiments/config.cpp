#include "experiments/config.hpp"

#include <algorithm>
#include <filesystem>
#include <regex>
#include <set>

#include "algorithms/core/json_limits.hpp"
#include "datasets/sha256.hpp"
#include "experiments/config_check.hpp"
#include "experiments/config_sweep.hpp"
#include "experiments/config_tables.hpp"
#include "experiments/text.hpp"

// The loader: a config file, its includes (cycles detected), its meta keys, tables and peers
// (config_tables.cpp) and its runs (config_sweep.cpp); parse_json_text is in config_json.cpp,
// the checker in config_check.cpp.

namespace gpudm::experiments {

namespace fs = std::filesystem;

// ---------------------------------------------------------------------------------------------
// identity

namespace {
nlohmann::json canonical(const ojson& j) { return nlohmann::json::parse(j.dump()); }  // sorted keys
}  // namespace

std::string run_identity(const std::string& family, const std::string& backend, const std::string& dataset,
                         const ojson& dataset_options, const ojson& params, std::uint64_t seed) {
  nlohmann::json id = nlohmann::json::array();
  id.push_back(family);
  id.push_back(backend);
  id.push_back(dataset);
  id.push_back(dataset_options.is_null() ? nlohmann::json::object() : canonical(dataset_options));
  id.push_back(params.is_null() ? nlohmann::json::object() : canonical(params));
  id.push_back(seed);
  return id.dump();
}

std::string run_identity(const RunSpec& r) {
  return run_identity(r.family, r.backend, r.dataset.name, r.dataset.options, r.params, r.seed);
}

std::string run_identity_of_record(const ojson& rec) {
  if (!rec.is_object()) return "";
  const ojson* fam = find_path(rec, "family");
  const ojson* be = find_path(rec, "backend");
  const ojson* name = find_path(rec, "dataset.name");
  const ojson* seed = find_path(rec, "seed");
  if (!fam || !be || !name || !seed || !fam->is_string() || !be->is_string() || !name->is_string() ||
      !seed->is_number_unsigned())
    return "";
  const ojson* opts = find_path(rec, "dataset.options");
  const ojson* params = find_path(rec, "params");
  return run_identity(fam->get<std::string>(), be->get<std::string>(), name->get<std::string>(),
                      opts ? *opts : ojson::object(), params ? *params : ojson::object(), seed->get<std::uint64_t>());
}

std::size_t ExperimentPlan::total_runs() const {
  std::size_t n = runs.size();
  for (const auto& p : included) n += p.total_runs();
  return n;
}

// ---------------------------------------------------------------------------------------------
// the loader

namespace {

using namespace config_detail;

const std::vector<std::string> kTopKeys = {"experiment", "title",    "paper", "comment", "include", "family",
                                           "backends",   "datasets", "params", "sweep", "cases",   "seeds",
                                           "warmup",     "repetitions", "smoke", "tables", "notes", "peers"};
const std::vector<std::string> kMetaKeys = {"experiment", "title", "paper", "comment", "include", "notes", "tables"};
const std::vector<std::string> kSmokeKeys = {"backends", "datasets", "params",      "sweep",
                                             "cases",    "seeds",    "warmup",      "repetitions"};

// The smoke variant of a config: its "smoke" block's keys replace the top level's, except that
// "params" and "sweep" merge key by key.
ojson smoke_config(const ojson& cfg) {
  ojson eff = cfg;
  for (auto it = cfg["smoke"].begin(); it != cfg["smoke"].end(); ++it) {
    if ((it.key() == "params" || it.key() == "sweep") && it.value().is_object() && eff.contains(it.key()) &&
        eff[it.key()].is_object()) {
      for (auto kv = it.value().begin(); kv != it.value().end(); ++kv) eff[it.key()][kv.key()] = kv.value();
    } else {
      eff[it.key()] = it.value();
    }
  }
  return eff;
}

struct Loader {
  const ValidationContext& ctx;
  const PlanOptions& opt;
  PaperCsvCache papers;
  std::vector<fs::path> stack;        // canonical paths of the configs being loaded
  std::vector<std::string> stack_shown;
  std::set<std::string> dataset_names;  // every dataset the configs name (checks --only-dataset)

  ExperimentPlan load(const fs::path& path, const std::string& shown_path);

 private:
  std::string read_text(const fs::path& path, const fs::path& canon, const std::string& shown_path) const;
  void read_meta(const Checker& c, const ojson& cfg, ExperimentPlan& plan) const;
  void load_includes(const Checker& c, const ojson& cfg, const fs::path& path, const std::string& shown_path,
                     ExperimentPlan& plan);
  void read_tables(const Checker& c, const ojson& cfg, const fs::path& path, ExperimentPlan& plan);
  void read_family(const Checker& c, const ojson& cfg, ExperimentPlan& plan) const;
  void expand_family(const Checker& c, const ojson& cfg, ExperimentPlan& plan);
};

// The config's text; an include cycle or a missing file is an error.
std::string Loader::read_text(const fs::path& path, const fs::path& canon, const std::string& shown_path) const {
  for (std::size_t i = 0; i < stack.size(); ++i) {
    if (stack[i] == canon) {
      std::string chain;
      for (std::size_t k = i; k < stack_shown.size(); ++k) chain += stack_shown[k] + " -> ";
      throw ConfigError(stack_shown.back() + ": include cycle: " + chain + shown_path);
    }
  }
  if (const std::string why = file_problem(path.string()); !why.empty()) throw ConfigError(shown_path + ": config file " + why);
  try {
    return read_capped_file(path.string(), kMaxConfigBytes, "config");
  } catch (const Error& e) {
    throw ConfigError(e.what());
  }
}

void Loader::read_meta(const Checker& c, const ojson& cfg, ExperimentPlan& plan) const {
  if (cfg.contains("experiment")) {
    plan.id = c.string(cfg["experiment"], "experiment");
    static const std::regex id_re("[A-Za-z0-9_.-]+");
    if (!std::regex_match(plan.id, id_re)) c.fail("experiment", "an experiment id names files: use letters, digits, '_', '-', '.'");
  }
  if (cfg.contains("title")) plan.title = c.string(cfg["title"], "title");
  if (cfg.contains("paper")) plan.paper = c.string(cfg["paper"], "paper");
  if (cfg.contains("comment") && !cfg["comment"].is_string() && !cfg["comment"].is_array())
    c.fail("comment", "expected string or array of strings");
  if (cfg.contains("notes")) {
    c.array(cfg["notes"], "notes", false);
    for (std::size_t i = 0; i < cfg["notes"].size(); ++i) plan.notes.push_back(c.string(cfg["notes"][i], index_path("notes", i)));
  }
}

void Loader::load_includes(const Checker& c, const ojson& cfg, const fs::path& path, const std::string& shown_path,
                           ExperimentPlan& plan) {
  ojson inc = cfg["include"];
  if (inc.is_string()) inc = ojson::array({inc});
  c.array(inc, "include");
  for (std::size_t i = 0; i < inc.size(); ++i) {
    const std::string rel = c.string(inc[i], index_path("include", i));
    const fs::path target = path.parent_path() / rel;
    const std::string target_shown = (fs::path(shown_path).parent_path() / rel).lexically_normal().string();
    std::error_code ec;
    const fs::path tcanon = fs::weakly_canonical(target, ec);
    bool cyclic = false;
    for (const auto& s : stack) cyclic = cyclic || s == tcanon;
    if (!cyclic)
      if (const std::string why = file_problem(target.string()); !why.empty())
        c.fail(index_path("include", i), "included file " + target_shown + ": " + why);
    plan.included.push_back(load(target, target_shown));
  }
}

void Loader::read_tables(const Checker& c, const ojson& cfg, const fs::path& path, ExperimentPlan& plan) {
  if (cfg.contains("peers")) plan.peers = load_peers(c, cfg["peers"], path.parent_path());
  if (!cfg.contains("tables")) return;
  c.array(cfg["tables"], "tables", false);
  for (std::size_t i = 0; i < cfg["tables"].size(); ++i) {
    check_table(c, cfg["tables"][i], index_path("tables", i), papers, plan.peers);
    plan.tables.push_back(cfg["tables"][i]);
  }
}

void Loader::read_family(const Checker& c, const ojson& cfg, ExperimentPlan& plan) const {
  plan.family = c.string(cfg["family"], "family");
  if (!ctx.families || !ctx.families->find(plan.family)) {
    const auto names = ctx.families ? ctx.families->names() : std::vector<std::string>{};
    c.fail("family", "unknown family '" + plan.family + "'" +
                         (names.empty() ? " (this build has no runnable family)" : suggest(plan.family, names)));
  }
}

ExperimentPlan Loader::load(const fs::path& path, const std::string& shown_path) {
  std::error_code ec;
  const fs::path canon = fs::weakly_canonical(path, ec);
  const std::string text = read_text(path, canon, shown_path);
  ojson cfg = parse_json_text(text, shown_path);
  Checker c(shown_path);
  if (!cfg.is_object()) c.fail("", "a config is a JSON object, got " + type_name(cfg));
  c.keys(cfg, kTopKeys, "");

  ExperimentPlan plan;
  plan.config_path = shown_path;
  plan.config_sha256 = datasets::sha256_hex(text);
  plan.smoke = opt.smoke;
  plan.id = path.stem().string();
  read_meta(c, cfg, plan);

  stack.push_back(canon);
  stack_shown.push_back(shown_path);
  if (cfg.contains("include")) load_includes(c, cfg, path, shown_path, plan);
  stack.pop_back();
  stack_shown.pop_back();

  read_tables(c, cfg, path, plan);
  if (!cfg.contains("family")) {
    for (auto it = cfg.begin(); it != cfg.end(); ++it)
      if (std::find(kMetaKeys.begin(), kMetaKeys.end(), it.key()) == kMetaKeys.end())
        c.fail(it.key(), "'" + it.key() + "' needs 'family' (a config without a family only includes others)");
    if (!cfg.contains("include")) c.fail("", "a config needs 'family' (runs) or 'include' (a composite)");
    return plan;
  }
  read_family(c, cfg, plan);

  // Smoke block: the same keys as the top level; params and sweep merge key by key, the others
  // replace. The full config is always validated, so --smoke never hides an error.
  if (cfg.contains("smoke")) {
    c.object(cfg["smoke"], "smoke");
    c.keys(cfg["smoke"], kSmokeKeys, "smoke");
  }
  expand_family(c, cfg, plan);
  if (opt.smoke && cfg.contains("smoke")) {
    plan.runs.clear();
    expand_family(Checker(shown_path + " (smoke)"), smoke_config(cfg), plan);
  }
  return plan;
}

void Loader::expand_family(const Checker& c, const ojson& cfg, ExperimentPlan& plan) {
  expand_sweep(c, read_sweep(c, cfg, plan, ctx, opt), opt, plan, dataset_names, ctx);
}

void collect_backends(const ExperimentPlan& p, const Registry* reg, std::set<std::string>& out) {
  if (!p.family.empty() && reg)
    for (const auto& b : reg->backends(p.family)) out.insert(b.backend);
  for (const auto& i : p.included) collect_backends(i, reg, out);
}

void collect_run_datasets(const ExperimentPlan& p, std::set<std::string>& out) {
  for (const auto& r : p.runs) out.insert(r.dataset.name);
  for (const auto& i : p.included) collect_run_datasets(i, out);
}

}  // namespace

ExperimentPlan load_plan(const std::string& config_path, const ValidationContext& ctx, const PlanOptions& opt) {
  if (opt.repetitions == 0 || opt.repetitions < -1 || opt.repetitions > kMaxRepetitions)
    throw ConfigError("--repetitions must be in [1, " + std::to_string(kMaxRepetitions) + "]");
  Loader loader{ctx, opt, PaperCsvCache(ctx.paper_tables_dir), {}, {}, {}};
  ExperimentPlan plan = loader.load(fs::path(config_path), config_path);
  if (!opt.backends.empty()) {
    std::set<std::string> known;
    collect_backends(plan, ctx.registry, known);
    const std::vector<std::string> names(known.begin(), known.end());
    for (const auto& b : opt.backends)
      if (!known.count(b)) throw ConfigError("--backend " + b + ": no family in " + config_path + " has this backend" + suggest(b, names));
  }
  if (!opt.datasets.empty()) {
    // Checked against the runs that remain (under --smoke: the smoke block's datasets).
    std::set<std::string> used;
    collect_run_datasets(plan, used);
    const std::vector<std::string> names(loader.dataset_names.begin(), loader.dataset_names.end());
    for (const auto& d : opt.datasets)
      if (!used.count(d))
        throw ConfigError("--only-dataset " + d + ": no run of " + config_path + (opt.smoke ? " --smoke" : "") +
                          " uses a dataset of this name" +
                          (loader.dataset_names.count(d) ? std::string(" (it is only in the datasets that --smoke replaces)")
                                                         : suggest(d, names)));
  }
  if (!opt.allow_large_sweep && plan.total_runs() > kMaxRuns)
    throw ConfigError(config_path + ": the config and its includes expand to " + std::to_string(plan.total_runs()) +
                      " runs, more than the limit of " + std::to_string(kMaxRuns) +
                      " per invocation; split the config or pass --allow-large-sweep");
  return plan;
}

}  // namespace gpudm::experiments
