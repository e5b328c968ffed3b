#include "experiments/config_sweep.hpp"

#include <algorithm>

#include "datasets/user_file.hpp"
#include "experiments/text.hpp"

namespace gpudm::experiments::config_detail {

namespace fs = std::filesystem;

bool wanted(const std::vector<std::string>& filter, const std::string& name) {
  return filter.empty() || std::find(filter.begin(), filter.end(), name) != filter.end();
}

namespace {

const std::vector<std::string> kDatasetKeys = {"name", "options"};
const std::vector<std::string> kPathDatasetKeys = {"path", "target", "task", "options"};
const std::vector<std::string> kCaseKeys = {"backend", "params", "comment"};

bool is_literal_wrapper(const ojson& v) { return v.is_object() && v.size() == 1 && v.contains("value"); }

class FamilyParams {
 public:
  FamilyParams(const Family& f) : specs_(f.params()) {
    for (const auto& s : specs_) names_.push_back(s.name);
  }
  const ParamSpec* find(const std::string& name) const {
    for (const auto& s : specs_)
      if (s.name == name) return &s;
    return nullptr;
  }
  const std::vector<std::string>& names() const { return names_; }
  const std::vector<ParamSpec>& specs() const { return specs_; }

  const ParamSpec& require(const Checker& c, const std::string& family, const std::string& name,
                           const std::string& path) const {
    const ParamSpec* s = find(name);
    if (!s) c.fail(path, "unknown param '" + name + "' of family '" + family + "'" + suggest(name, names_));
    return *s;
  }

  // A concrete value (never an axis): literal wrappers are unwrapped.
  ojson value(const Checker& c, const ParamSpec& s, const ojson& raw, const std::string& path) const {
    const ojson v = is_literal_wrapper(raw) ? raw["value"] : raw;
    if (!param_type_ok(s.type, v))
      c.fail(path, "param '" + s.name + "' expects " + s.type + ", got " + type_name(v) + " " + shown(v) +
                       (v.is_array() && !is_literal_wrapper(raw) ? " (an array inside an axis; write {\"value\": [...]})" : ""));
    // Ranges and allowed values, before anything under results/ is touched.
    if (const std::string why = s.check(nlohmann::json(v)); !why.empty()) c.fail(path, "param '" + s.name + "' " + why);
    return v;
  }

  // Reads a "params" object: arrays are axes, {"value": x} and scalars are fixed values.
  ParamBlock block(const Checker& c, const std::string& family, const ojson& params, const std::string& path) const {
    c.object(params, path);
    ParamBlock b;
    for (auto it = params.begin(); it != params.end(); ++it) {
      const std::string p = join_path(path, it.key());
      const ParamSpec& s = require(c, family, it.key(), p);
      if (it.value().is_array()) {
        b.axes.push_back(axis(c, s, it.value(), p));
      } else {
        b.fixed[it.key()] = value(c, s, it.value(), p);
      }
    }
    return b;
  }

  Axis axis(const Checker& c, const ParamSpec& s, const ojson& values, const std::string& path) const {
    c.array(values, path);
    Axis a{s.name, {}};
    for (std::size_t i = 0; i < values.size(); ++i) a.values.push_back(value(c, s, values[i], index_path(path, i)));
    return a;
  }

 private:
  std::vector<ParamSpec> specs_;
  std::vector<std::string> names_;
};

// Cartesian product of axes, first axis outermost.
std::vector<ojson> product(const std::vector<Axis>& axes) {
  std::vector<ojson> points{ojson::object()};
  for (const auto& a : axes) {
    std::vector<ojson> next;
    for (const auto& p : points)
      for (const auto& v : a.values) {
        ojson q = p;
        q[a.name] = v;
        next.push_back(std::move(q));
      }
    points = std::move(next);
  }
  return points;
}

// A data file of the user's: {"path": ..., "target": ..., "task": ..., "options": {...}}. The
// path is relative to the config's folder; the run's dataset name is that path as seen from the
// working directory, its options the rest (both part of the run's identity).
DatasetRef user_file(const Checker& c, const ojson& d, const std::string& p, const fs::path& config_dir) {
  c.keys(d, kPathDatasetKeys, p);
  const std::string rel = c.string(d["path"], join_path(p, "path"));
  if (rel.empty()) c.fail(join_path(p, "path"), "expected a file path");
  fs::path file(rel);
  if (file.is_relative()) file = config_dir / file;
  std::string name = file.lexically_normal().string();
  // A name with a '/' is never a catalog name (datasets/user_file.hpp).
  if (name.find('/') == std::string::npos) name = "./" + name;
  if (const std::string why = file_problem(name); !why.empty()) c.fail(join_path(p, "path"), "data file " + name + ": " + why);
  DatasetRef ref;
  ref.name = name;
  if (d.contains("options")) {
    c.object(d["options"], join_path(p, "options"));
    ref.options = d["options"];
  }
  for (const char* k : {"target", "task"})
    if (d.contains(k)) {
      if (ref.options.contains(k)) c.fail(join_path(p, k), std::string("given twice (here and in options)"));
      ref.options[k] = d[k];
    }
  try {
    datasets::check_user_file_options(nlohmann::json::parse(ref.options.dump()), name);
  } catch (const Error& e) {
    c.fail(p, e.what());
  }
  return ref;
}

// The run keys of one family config, read in the order their errors are reported.
class SweepReader {
 public:
  SweepReader(const Checker& c, const ojson& cfg, const ExperimentPlan& plan, const ValidationContext& ctx)
      : c_(c), cfg_(cfg), family_(plan.family), config_dir_(fs::path(plan.config_path).parent_path()), ctx_(ctx),
        fp_(*ctx.families->find(plan.family)) {}

  Sweep read(const PlanOptions& opt) {
    Sweep s;
    read_backends();
    s.datasets = read_datasets();
    if (cfg_.contains("params")) s.top = fp_.block(c_, family_, cfg_["params"], "params");
    s.axes = read_axes(s.top);
    s.cases = read_cases(s.axes);
    if (cfg_.contains("seeds")) {
      c_.array(cfg_["seeds"], "seeds");
      s.seeds.clear();
      for (std::size_t i = 0; i < cfg_["seeds"].size(); ++i)
        s.seeds.push_back(static_cast<std::uint64_t>(c_.integer(cfg_["seeds"][i], index_path("seeds", i), 0)));
    }
    if (cfg_.contains("warmup")) s.warmup = static_cast<int>(c_.integer(cfg_["warmup"], "warmup", 0, kMaxWarmup));
    if (cfg_.contains("repetitions"))
      s.repetitions = static_cast<int>(c_.integer(cfg_["repetitions"], "repetitions", 1, kMaxRepetitions));
    if (opt.repetitions > 0) s.repetitions = opt.repetitions;
    return s;
  }

 private:
  // Backends known to the registry for this family (available or not), then "backends".
  void read_backends() {
    if (ctx_.registry)
      for (const auto& b : ctx_.registry->backends(family_)) known_backends_.push_back(b.backend);
    if (known_backends_.empty()) c_.fail("family", "family '" + family_ + "' has no registered backends");
    backends_ = known_backends_;
    if (!cfg_.contains("backends")) return;
    c_.array(cfg_["backends"], "backends");
    backends_.clear();
    backends_given_ = true;
    for (std::size_t i = 0; i < cfg_["backends"].size(); ++i) {
      const std::string b = c_.string(cfg_["backends"][i], index_path("backends", i));
      check_backend(b, index_path("backends", i));
      if (std::find(backends_.begin(), backends_.end(), b) != backends_.end())
        c_.fail(index_path("backends", i), "duplicate backend '" + b + "'");
      backends_.push_back(b);
    }
  }

  void check_backend(const std::string& b, const std::string& path) const {
    if (std::find(known_backends_.begin(), known_backends_.end(), b) == known_backends_.end())
      c_.fail(path, "unknown backend '" + b + "' for family '" + family_ + "'" + suggest(b, known_backends_));
  }

  // A family that needs no data (ceilings) omits "datasets": its runs use kNoDataset.
  std::vector<DatasetRef> read_datasets() const {
    std::vector<DatasetRef> datasets;
    if (!cfg_.contains("datasets")) {
      datasets.push_back(DatasetRef{kNoDataset, ojson::object()});
      return datasets;
    }
    c_.array(cfg_["datasets"], "datasets");
    for (std::size_t i = 0; i < cfg_["datasets"].size(); ++i) datasets.push_back(read_dataset(cfg_["datasets"][i], index_path("datasets", i)));
    return datasets;
  }

  DatasetRef read_dataset(const ojson& d, const std::string& p) const {
    DatasetRef ref;
    if (d.is_string()) {
      ref.name = d.get<std::string>();
    } else if (d.is_object() && d.contains("path")) {
      return user_file(c_, d, p, config_dir_);
    } else if (d.is_object()) {
      c_.keys(d, kDatasetKeys, p);
      if (!d.contains("name")) c_.fail(p, "missing key 'name' (a catalog dataset) or 'path' (a data file)");
      ref.name = c_.string(d["name"], join_path(p, "name"));
      if (d.contains("options")) {
        c_.object(d["options"], join_path(p, "options"));
        ref.options = d["options"];
        if (ref.options.contains("rows")) c_.integer(ref.options["rows"], join_path(p, "options.rows"), 1);
        if (ref.options.contains("seed")) c_.integer(ref.options["seed"], join_path(p, "options.seed"), 0);
        for (auto it = ref.options.begin(); it != ref.options.end(); ++it)
          if (it.value().is_number_integer())
            c_.integer(it.value(), join_path(p, "options." + it.key()), LLONG_MIN);  // no value beyond 64 bits
      }
    } else {
      c_.fail(p, "expected a dataset name, {\"name\": ..., \"options\": {...}} or {\"path\": ..., \"target\": ...}, got " +
                     type_name(d));
    }
    if (ctx_.check_dataset && ref.name != kNoDataset) {
      const std::string why = ctx_.check_dataset(ref.name);
      if (!why.empty()) c_.fail(d.is_object() ? join_path(p, "name") : p, why);
    }
    return ref;
  }

  // "sweep" axes, then the axes of "params" (`top`).
  std::vector<Axis> read_axes(const ParamBlock& top) const {
    std::vector<Axis> sweep;
    if (cfg_.contains("sweep")) {
      c_.object(cfg_["sweep"], "sweep");
      for (auto it = cfg_["sweep"].begin(); it != cfg_["sweep"].end(); ++it) {
        const std::string p = join_path("sweep", it.key());
        const ParamSpec& s = fp_.require(c_, family_, it.key(), p);
        if (!it.value().is_array()) c_.fail(p, "a sweep axis is an array of values, got " + type_name(it.value()));
        if (top.fixed.contains(it.key())) c_.fail(p, "param '" + it.key() + "' is both fixed in 'params' and swept");
        sweep.push_back(fp_.axis(c_, s, it.value(), p));
      }
    }
    for (const auto& a : top.axes) {
      for (const auto& s : sweep)
        if (s.name == a.name) c_.fail(join_path("params", a.name), "param '" + a.name + "' is an axis in both 'params' and 'sweep'");
      sweep.push_back(a);
    }
    return sweep;
  }

  // "cases" (those of backends outside "backends" dropped), else one case per backend.
  std::vector<SweepCase> read_cases(const std::vector<Axis>& axes) const {
    std::vector<SweepCase> cases;
    if (!cfg_.contains("cases")) {
      for (const auto& b : backends_) cases.push_back(SweepCase{b, {}});
      return cases;
    }
    c_.array(cfg_["cases"], "cases");
    for (std::size_t i = 0; i < cfg_["cases"].size(); ++i) {
      SweepCase cs = read_case(cfg_["cases"][i], index_path("cases", i), axes);
      if (backends_given_ && std::find(backends_.begin(), backends_.end(), cs.backend) == backends_.end()) continue;
      cases.push_back(std::move(cs));
    }
    return cases;
  }

  SweepCase read_case(const ojson& k, const std::string& p, const std::vector<Axis>& axes) const {
    auto is_top_axis = [&](const std::string& n) {
      for (const auto& a : axes)
        if (a.name == n) return true;
      return false;
    };
    c_.object(k, p);
    c_.keys(k, kCaseKeys, p);
    if (!k.contains("backend")) c_.fail(p, "missing key 'backend'");
    SweepCase cs;
    cs.backend = c_.string(k["backend"], join_path(p, "backend"));
    check_backend(cs.backend, join_path(p, "backend"));
    if (k.contains("params")) cs.params = fp_.block(c_, family_, k["params"], join_path(p, "params"));
    for (auto it = cs.params.fixed.begin(); it != cs.params.fixed.end(); ++it)
      if (is_top_axis(it.key())) c_.fail(join_path(p, "params." + it.key()), "param '" + it.key() + "' is already a sweep axis");
    for (const auto& a : cs.params.axes)
      if (is_top_axis(a.name)) c_.fail(join_path(p, "params." + a.name), "param '" + a.name + "' is already a sweep axis");
    return cs;
  }

  const Checker& c_;
  const ojson& cfg_;
  const std::string& family_;
  const fs::path config_dir_;
  const ValidationContext& ctx_;
  const FamilyParams fp_;
  std::vector<std::string> known_backends_;
  std::vector<std::string> backends_;
  bool backends_given_ = false;
};

double points(const std::vector<Axis>& axes) {
  double n = 1;
  for (const auto& a : axes) n *= static_cast<double>(a.values.size());
  return n;
}

// The size of the expansion, computed from the axes before anything is expanded: a sweep of
// millions of runs would take gigabytes just to list.
void check_sweep_size(const Checker& c, const Sweep& sweep, const PlanOptions& opt) {
  double per_point = 0;
  for (const auto& cs : sweep.cases)
    if (wanted(opt.backends, cs.backend)) per_point += points(cs.params.axes);
  double kept = 0;
  for (const auto& ds : sweep.datasets) kept += wanted(opt.datasets, ds.name) ? 1 : 0;
  const double n = kept * points(sweep.axes) * per_point * static_cast<double>(sweep.seeds.size());
  if (!opt.allow_large_sweep && n > static_cast<double>(kMaxRuns))
    c.fail("", "the sweep expands to " + format_number(n, ",.0f") + " runs, more than the limit of " +
                   format_number(static_cast<double>(kMaxRuns), ",.0f") +
                   " per invocation; split the config or pass --allow-large-sweep");
}

// A point's params: the family's defaults (in its order), then the fixed values and axis values,
// the case's overriding the config's.
ojson point_params(const ojson& defaults, const Sweep& sweep, const ojson& sweep_point, const SweepCase& cs,
                   const ojson& case_point) {
  ojson params = defaults;
  for (const ojson* layer : {&sweep.top.fixed, &sweep_point, &cs.params.fixed, &case_point})
    for (auto it = layer->begin(); it != layer->end(); ++it) params[it.key()] = it.value();
  return params;
}

}  // namespace

Sweep read_sweep(const Checker& c, const ojson& cfg, const ExperimentPlan& plan, const ValidationContext& ctx,
                 const PlanOptions& opt) {
  return SweepReader(c, cfg, plan, ctx).read(opt);
}

void expand_sweep(const Checker& c, const Sweep& sweep, const PlanOptions& opt, ExperimentPlan& plan,
                  std::set<std::string>& dataset_names, const ValidationContext& ctx) {
  ojson defaults = ojson::object();
  for (const auto& s : ctx.families->find(plan.family)->params()) defaults[s.name] = s.default_value;
  check_sweep_size(c, sweep, opt);

  std::set<std::string> seen;
  const auto sweep_points = product(sweep.axes);
  for (const auto& ds : sweep.datasets) {
    dataset_names.insert(ds.name);
    if (!wanted(opt.datasets, ds.name)) continue;
    for (const auto& sp : sweep_points) {
      for (const auto& cs : sweep.cases) {
        if (!wanted(opt.backends, cs.backend)) continue;
        for (const auto& cp : product(cs.params.axes)) {
          const ojson params = point_params(defaults, sweep, sp, cs, cp);
          for (const auto seed : sweep.seeds) {
            RunSpec r;
            r.family = plan.family;
            r.backend = cs.backend;
            r.dataset = ds;
            r.params = params;
            r.seed = seed;
            r.warmup = sweep.warmup;
            r.repetitions = sweep.repetitions;
            if (!seen.insert(run_identity(r)).second)
              c.fail("", "two runs are identical (backend '" + r.backend + "', dataset '" + ds.name + "', params " +
                             shown(params) + ", seed " + std::to_string(seed) + "): remove the duplicate case, dataset or axis value");
            plan.runs.push_back(std::move(r));
          }
        }
      }
    }
  }
}

}  // namespace gpudm::experiments::config_detail
