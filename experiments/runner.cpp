#include "experiments/runner.hpp"

#include <cstdlib>
#include <exception>
#include <filesystem>
#include <map>
#include <new>
#include <optional>

#include "algorithms/core/comm.hpp"
#include "algorithms/core/progress.hpp"
#include "algorithms/core/stopwatch.hpp"
#include "experiments/results.hpp"
#include "experiments/results_session.hpp"
#include "experiments/tables.hpp"
#include "experiments/text.hpp"
#include "gpudm/build_info.hpp"

namespace gpudm::experiments {

namespace fs = std::filesystem;

std::string default_results_root() {
  if (const char* env = std::getenv("GPUDM_RESULTS_DIR"); env && *env) return env;
  return (fs::path(build_info::kSourceDir) / "results").string();
}

std::vector<std::string> backend_only_params(const Family& family) {
  std::vector<std::string> out;
  for (const auto& p : family.params())
    if (p.backend_only || p.name == "threads" || p.name == "devices" || p.name == "path") out.push_back(p.name);
  return out;
}

namespace {

std::string dataset_key(const std::string& name, const ojson& options) {
  return name + " " + nlohmann::json::parse(options.dump()).dump();
}

// Serves the datasets the runner loaded before the sweep (so a bad file fails before any
// results are written) and forwards anything else to the catalog.
class PreloadedDatasets : public DatasetProvider {
 public:
  explicit PreloadedDatasets(DatasetProvider& next) : next_(next) {}
  std::shared_ptr<const Dataset> get(const std::string& name, const nlohmann::json& options) override {
    auto it = cache_.find(dataset_key(name, ojson(options)));
    if (it != cache_.end()) return it->second;
    return next_.get(name, options);
  }
  std::shared_ptr<const Dataset> load(const std::string& name, const ojson& options) {
    const std::string key = dataset_key(name, options);
    auto it = cache_.find(key);
    if (it != cache_.end()) return it->second;
    auto d = next_.get(name, nlohmann::json::parse(options.dump()));
    if (!d) throw Error("dataset '" + name + "': the catalog returned no data");
    cache_[key] = d;
    return d;
  }
  std::shared_ptr<const Dataset> find(const std::string& name, const ojson& options) const {
    auto it = cache_.find(dataset_key(name, options));
    return it == cache_.end() ? nullptr : it->second;
  }
  void release(const std::string& name, const ojson& options) { cache_.erase(dataset_key(name, options)); }

 private:
  DatasetProvider& next_;
  std::map<std::string, std::shared_ptr<const Dataset>> cache_;
};

// The reference identity: the run identity without the backend and backend-only params.
std::string reference_identity(const ojson& rec, const std::vector<std::string>& backend_only) {
  ojson params = rec.contains("params") && rec["params"].is_object() ? rec["params"] : ojson::object();
  if (const ojson* res = find_path(rec, "resolved_params"); res && res->is_object())
    for (auto it = res->begin(); it != res->end(); ++it) params[it.key()] = it.value();
  for (const auto& p : backend_only) params.erase(p);
  const ojson* opts = find_path(rec, "dataset.options");
  const ojson* name = find_path(rec, "dataset.name");
  const ojson* seed = find_path(rec, "seed");
  return run_identity(rec.value("family", std::string()), "", name && name->is_string() ? name->get<std::string>() : "",
                      opts ? *opts : ojson::object(), params, seed && seed->is_number_unsigned() ? seed->get<std::uint64_t>() : 0);
}

// The experiment's tables (.md, .csv beside the JSON) from a results document.
void write_tables(const ojson& doc, const ExperimentPlan& plan, const std::string& paper_tables_dir, const fs::path& dir,
                  const std::string& stem, ExperimentOutcome& oc) {
  const RenderedTables tables = render_tables(doc, plan.tables, paper_tables_dir, plan.peers);
  oc.markdown = render_experiment_markdown(doc, tables);
  oc.md_path = (dir / (stem + ".md")).string();
  oc.csv_path = (dir / (stem + ".csv")).string();
  write_file_atomic(oc.md_path, oc.markdown);
  write_file_atomic(oc.csv_path, tables.csv);
}

}  // namespace

int apply_validation(ojson& runs, const std::function<std::vector<std::string>(const std::string&)>& backend_only,
                     const std::function<std::string(const std::string&)>& reference_of) {
  std::map<std::string, std::string> ref_cache;
  auto ref_name = [&](const std::string& family) -> const std::string& {
    auto it = ref_cache.find(family);
    if (it == ref_cache.end()) it = ref_cache.emplace(family, reference_of(family)).first;
    return it->second;
  };
  std::map<std::string, std::vector<std::string>> bo_cache;
  auto bo = [&](const std::string& family) -> const std::vector<std::string>& {
    auto it = bo_cache.find(family);
    if (it == bo_cache.end()) it = bo_cache.emplace(family, backend_only ? backend_only(family) : std::vector<std::string>{}).first;
    return it->second;
  };
  std::map<std::string, const ojson*> reference;  // reference identity -> ok run of the reference backend
  for (const auto& r : runs) {
    const std::string family = r.value("family", std::string());
    if (record_ok(r) && r.value("backend", std::string()) == ref_name(family))
      reference.emplace(reference_identity(r, bo(family)), &r);
  }

  int mismatches = 0;
  for (auto& r : runs) {
    if (!r.is_object()) continue;
    ojson& v = r["validation"];
    if (!v.is_object()) v = ojson::object();
    // A family that validated the run itself (floating tolerance, ...) keeps its verdict.
    if (!v.empty() && v.value("source", std::string()) != "runner") {
      if (v.contains("passed") && v["passed"].is_boolean() && !v["passed"].get<bool>()) ++mismatches;
      continue;
    }
    ojson out = ojson::object();
    out["source"] = "runner";
    const std::string backend = r.value("backend", std::string());
    const std::string ref_backend = ref_name(r.value("family", std::string()));
    const bool exact = r.value("checksum_exact", false);
    if (!record_ok(r)) {
      out["reference_backend"] = nullptr;
      out["passed"] = nullptr;
      out["note"] = "run did not complete";
    } else if (backend == ref_backend) {
      out["reference_backend"] = ref_backend;
      out["is_reference"] = true;
      out["passed"] = nullptr;
      out["note"] = "the " + ref_backend + " backend is the oracle";
    } else {
      auto it = reference.find(reference_identity(r, bo(r.value("family", std::string()))));
      if (it == reference.end()) {
        out["reference_backend"] = nullptr;
        out["passed"] = nullptr;
        out["note"] = "no ok " + ref_backend + " run with the same dataset, params and seed in this results file";
      } else if (!exact || !it->second->value("checksum_exact", false)) {
        out["reference_backend"] = ref_backend;
        out["method"] = "none";
        out["passed"] = nullptr;
        out["note"] = "the family marks its checksum inexact (floating-point results); equivalence is tested by the family's tests";
      } else {
        const std::string mine = r.value("checksum", std::string());
        const std::string ref = it->second->value("checksum", std::string());
        out["reference_backend"] = ref_backend;
        out["method"] = "checksum";
        out["reference_checksum"] = ref;
        out["max_error"] = mine == ref ? ojson(0) : ojson(nullptr);
        out["tolerance"] = 0;
        out["passed"] = !mine.empty() && mine == ref;
        if (!(mine == ref && !mine.empty())) ++mismatches;
      }
    }
    v = out;
  }
  return mismatches;
}

Runner::Runner(const FamilySet& families, const Registry& registry, DatasetProvider& datasets, RunnerOptions opt)
    : families_(families), registry_(registry), datasets_(datasets), opt_(std::move(opt)) {
  environment_ = make_environment();
  provenance_ = make_provenance(opt_.argv);
  Comm& comm = world();
  if (comm.size() > 1) {  // an MPI run: who ran it; progress and files from rank 0 only
    const char* cvd = std::getenv("CUDA_VISIBLE_DEVICES");
    provenance_["ranks"] = {{"count", comm.size()},
                            {"kind", comm.kind()},
                            {"hosts", comm.gather_all(comm.host(), "runner: the ranks' hosts")},
                            {"cuda_visible_devices", comm.gather_all(cvd ? cvd : "(unset)", "runner: the ranks' devices")},
                            {"timing", "each timing sample is the slowest rank's; phases, metrics and files are rank 0's"}};
    if (comm.rank() != 0) opt_.quiet = true;
  }
  run_origin_ = run_origin(provenance_, environment_);
  if (opt_.results_root.empty()) opt_.results_root = default_results_root();
  out_dir_ = !opt_.out_dir.empty() ? opt_.out_dir : (fs::path(opt_.results_root) / machine_tag(environment_)).string();
}

std::vector<ExperimentOutcome> Runner::run(const ExperimentPlan& plan) {
  Progress::set_quiet(opt_.quiet);
  Progress progress("runs", static_cast<double>(plan.total_runs()), "runs");
  std::vector<ExperimentOutcome> out;
  run_plan(plan, out, progress);
  progress.finish();
  return out;
}

void Runner::run_plan(const ExperimentPlan& plan, std::vector<ExperimentOutcome>& out, Progress& progress) {
  const std::size_t first = out.size();
  for (const auto& inc : plan.included) run_plan(inc, out, progress);
  if (!plan.family.empty()) {
    out.push_back(run_experiment(plan, progress));
    return;
  }
  // A composite: its document gathers the included experiments' tables.
  ExperimentOutcome comp;
  comp.id = plan.id;
  std::string md = "# " + (plan.title.empty() ? plan.id : plan.title) + "\n\n";
  if (!plan.paper.empty()) md += "Paper: " + plan.paper + "\n\n";
  md += "Composite of:";
  for (std::size_t i = first; i < out.size(); ++i) md += " " + out[i].id + (i + 1 < out.size() ? "," : "");
  md += " (each has its own results file).\n\n";
  for (const auto& n : plan.notes) md += "- " + n + "\n";
  if (!plan.notes.empty()) md += "\n";
  for (std::size_t i = first; i < out.size(); ++i) {
    // Demote the included documents' headings one level.
    std::string sub;
    std::size_t pos = 0;
    const std::string& m = out[i].markdown;
    while (pos < m.size()) {
      std::size_t nl = m.find('\n', pos);
      if (nl == std::string::npos) nl = m.size();
      std::string line = m.substr(pos, nl - pos);
      if (!line.empty() && line[0] == '#') line = "#" + line;
      sub += line + "\n";
      pos = nl + 1;
    }
    md += sub;
  }
  comp.markdown = md;
  if (world().rank() != 0) {  // (an MPI run: rank 0 writes)
    out.push_back(ExperimentOutcome{});
    return;
  }
  comp.md_path = (fs::path(out_dir_) / (plan.id + (plan.smoke ? "-smoke" : "") + ".md")).string();
  remove_stale_temp_files(out_dir_, plan.id + (plan.smoke ? "-smoke" : ""));
  write_file_atomic(comp.md_path, md);
  out.push_back(std::move(comp));
}

namespace {

std::string command_line(const std::vector<std::string>& argv) {
  std::string command;
  for (const auto& a : argv) command += (command.empty() ? "" : " ") + a;
  return command;
}

// The config's path in the source tree, null when it lies outside: tables name it for readers of
// the repository, whatever folder the runner was started from.
ojson config_repo_path(const std::string& config_path) {
  const std::string rel = path_in_repository(config_path, build_info::kSourceDir);
  return rel.empty() ? ojson(nullptr) : ojson(rel);
}

// The results document before its runs.
ojson results_head(const ExperimentPlan& plan, const ojson& provenance, const ojson& environment) {
  ojson doc;
  doc["schema_version"] = kSchemaVersion;
  doc["experiment"] = {{"id", plan.id},
                       {"title", plan.title},
                       {"config_path", plan.config_path},
                       {"config_repo_path", config_repo_path(plan.config_path)},
                       {"config_sha256", plan.config_sha256},
                       {"paper", plan.paper},
                       {"family", plan.family},
                       {"smoke", plan.smoke}};
  doc["provenance"] = provenance;
  doc["environment"] = environment;
  doc["runs"] = ojson::array();
  return doc;
}

// Runs the family's case; whatever goes wrong becomes a skipped or failed result with its reason.
CaseResult run_case(Family& family, const Registry& registry, const ExperimentPlan& plan, const RunSpec& spec,
                    DatasetProvider& data) {
  CaseResult res;
  const BackendInfo* info = registry.has(spec.family, spec.backend) ? &registry.info(spec.family, spec.backend) : nullptr;
  if (!info) {
    res.status = "skipped";
    res.reason = "backend '" + spec.backend + "' is not registered for family '" + spec.family + "'";
    return res;
  }
  // An MPI run: every rank has the backend, or none runs it (a rank skipping while the others
  // enter the family's collectives would leave them waiting).
  std::vector<std::uint64_t> missing{info->available ? 0u : 1u};
  world().sum(missing.data(), 1, "runner: the backend on every rank");
  if (info->available && missing[0] > 0) {
    res.status = "skipped";
    res.reason = "backend '" + spec.backend + "' is not available on " + std::to_string(missing[0]) + " of the " +
                 std::to_string(world().size()) + " ranks";
    return res;
  }
  if (!info->available) {
    res.status = "skipped";
    res.reason = info->reason;
    return res;
  }
  CaseContext ctx;
  ctx.experiment_id = plan.id;
  ctx.family = spec.family;
  ctx.backend = spec.backend;
  ctx.dataset = spec.dataset.name;
  ctx.dataset_options = nlohmann::json::parse(spec.dataset.options.dump());
  ctx.params = nlohmann::json::parse(spec.params.dump());
  ctx.seed = spec.seed;
  ctx.warmup = spec.warmup;
  ctx.repetitions = spec.repetitions;
  ctx.smoke = plan.smoke;
  ctx.registry = &registry;
  ctx.datasets = &data;
  try {
    return family.run_case(ctx);
  } catch (const MissingInput& e) {
    res.status = "skipped";
    res.reason = one_line(e.what());
    res.missing_input = e.path();
  } catch (const Unavailable& e) {
    res.status = "skipped";
    res.reason = one_line(e.what());
  } catch (const Error& e) {
    res.status = "failed";
    res.reason = one_line(e.what());
  } catch (const std::bad_alloc&) {
    res.status = "failed";
    res.reason = "out of host memory";
  } catch (const std::exception& e) {
    res.status = "failed";
    res.reason = "internal error: " + one_line(e.what());
  }
  // An MPI run cannot go on after one rank's run stopped inside the family: the other ranks are in
  // (or will enter) its collectives, which this rank would no longer pair up with. End the job,
  // naming the run; the runs before it are in the journal (--resume continues).
  if (world().size() > 1)
    world().abort(plan.id + " " + spec.backend + " " + spec.dataset.name + ": " + res.status + ": " + res.reason +
                      " (ending every rank: an MPI run cannot continue past one rank's failed run; --resume continues)",
                  4);
  return res;
}

// A result the runner cannot record as the family gave it becomes failed, with the reason.
void check_result(CaseResult& res, const RunSpec& spec) {
  if (res.status != "ok" && res.status != "skipped" && res.status != "failed") {
    res.reason = "family returned unknown status '" + res.status + "'" + (res.reason.empty() ? "" : ": " + res.reason);
    res.status = "failed";
  }
  // A run is ok only with its timed repetitions: a median of nothing is not a result.
  if (res.status == "ok" && res.timing.samples.empty()) {
    res.reason = "the family returned no timing samples (" + std::to_string(spec.repetitions) + " repetitions asked)";
    res.status = "failed";
  }
}

// The run record's "dataset": name and options, then the description (the family's, else the
// runner's from the loaded data, else, for a skipped run that never loaded its data, an earlier
// run's of the same data).
ojson dataset_record(const RunSpec& spec, const CaseResult& res, const PreloadedDatasets& data,
                     std::map<std::string, ojson>& described) {
  ojson ds = {{"name", spec.dataset.name}, {"options", spec.dataset.options}};
  const std::string dkey = dataset_key(spec.dataset.name, spec.dataset.options);
  ojson desc = res.dataset.is_object() && !res.dataset.empty() ? res.dataset : ojson::object();
  if (desc.empty())
    if (auto d = data.find(spec.dataset.name, spec.dataset.options)) desc = describe_dataset(*d);
  if (desc.empty() && described.count(dkey)) desc = described[dkey];
  if (!desc.empty() && !described.count(dkey)) described[dkey] = desc;
  for (auto it = desc.begin(); it != desc.end(); ++it) {
    if (it.key() == "name") {
      if (it.value() != ds["name"]) ds["display_name"] = it.value();
      continue;
    }
    if (it.key() == "options") continue;
    ds[it.key()] = it.value();
  }
  return ds;
}

ojson run_record(const RunSpec& spec, const CaseResult& res, ojson dataset, double elapsed, ojson provenance) {
  ojson rec;
  rec["family"] = spec.family;
  rec["backend"] = spec.backend;
  rec["dataset"] = std::move(dataset);
  rec["params"] = spec.params;
  rec["seed"] = spec.seed;
  rec["status"] = res.status;
  rec["reason"] = res.reason;
  ojson timing = res.timing.to_json();
  if (res.timing.samples.empty() && res.timing.warmup == 0) timing["warmup"] = res.status == "ok" ? spec.warmup : 0;
  rec["timing"] = timing;
  const double reps = res.timing.samples.empty() ? 1.0 : static_cast<double>(res.timing.samples.size());
  rec["breakdown"] = res.breakdown.to_json(reps);
  rec["metrics"] = res.metrics.is_object() ? res.metrics : ojson::object();
  rec["validation"] = res.validation.is_object() ? res.validation : ojson::object();
  if (res.resolved_params.is_object() && !res.resolved_params.empty()) rec["resolved_params"] = res.resolved_params;
  if (!res.outputs.empty()) rec["outputs"] = res.outputs;
  rec["checksum"] = res.checksum;
  rec["checksum_exact"] =
      res.checksum_exact || (res.metrics.is_object() && res.metrics.value("checksum_exact", false) == true);
  rec["elapsed_s"] = elapsed;
  rec["provenance"] = std::move(provenance);
  return rec;
}

void count_status(const std::string& status, ExperimentOutcome& oc) {
  if (status == "ok") ++oc.ok;
  else if (status == "skipped") ++oc.skipped;
  else ++oc.failed;
}

// Loads every dataset the executing runs need; returns each one's last run.
std::map<std::string, std::size_t> preload(const ExperimentPlan& plan, const std::vector<bool>& execute,
                                           const Registry& registry, PreloadedDatasets& data) {
  std::map<std::string, std::size_t> last_use;
  for (std::size_t i = 0; i < plan.runs.size(); ++i) {
    if (!execute[i]) continue;
    const RunSpec& r = plan.runs[i];
    if (!registry.has(r.family, r.backend) || !registry.info(r.family, r.backend).available) continue;
    if (r.dataset.name == kNoDataset) continue;
    data.load(r.dataset.name, r.dataset.options);
    last_use[dataset_key(r.dataset.name, r.dataset.options)] = i;
  }
  return last_use;
}

// An MPI run: one result from every rank's. A rank that did not finish ok decides the status
// (failed over skipped, its reason named with its rank); the timing samples are the slowest
// rank's, repetition by repetition.
void combine_ranks(CaseResult& res, Comm& comm) {
  if (comm.size() == 1) return;
  const std::vector<std::string> st = comm.gather_all(res.status + "\t" + res.reason, "runner: the ranks' run status");
  int pick = -1;  // the first failed rank, else the first skipped one
  for (int r = 0; r < comm.size(); ++r) {
    const std::string& x = st[static_cast<std::size_t>(r)];
    const std::string status = x.substr(0, x.find('\t'));
    if (status == "failed") {
      pick = r;
      break;
    }
    if (status == "skipped" && pick < 0) pick = r;
  }
  if (pick >= 0) {
    const std::string& x = st[static_cast<std::size_t>(pick)];
    res.status = x.substr(0, x.find('\t'));
    res.reason = "rank " + std::to_string(pick) + ": " + x.substr(x.find('\t') + 1);
    return;
  }
  const double n = -comm.max(-static_cast<double>(res.timing.samples.size()), "runner: the ranks' repetitions");
  res.timing.samples.resize(static_cast<std::size_t>(n));
  for (double& t : res.timing.samples) t = comm.max(t, "runner: the slowest rank's time");
}

// The runs of the plan that `execute` marks, in order, each recorded in the results file through
// `session` (rank 0 of an MPI run; the other ranks run the same cases and record nothing: `session`
// null) with its provenance (`origin`, run_origin).
void sweep(const ExperimentPlan& plan, Family& family, const std::vector<bool>& execute, const Registry& registry,
           DatasetProvider& catalog, ResultsSession* session, const ojson& origin, Progress& progress,
           ExperimentOutcome& oc) {
  // Every dataset the executing runs need is loaded first, so a bad file is reported before any
  // results are written. They stay loaded until their last run.
  PreloadedDatasets data(catalog);
  const std::map<std::string, std::size_t> last_use = preload(plan, execute, registry, data);
  std::map<std::string, ojson> described;  // dataset key -> description from a run that loaded it
  const auto execute_run = [&](std::size_t i) {
    const RunSpec& spec = plan.runs[i];
    Stopwatch wall;
    CaseResult res = run_case(family, registry, plan, spec, data);
    combine_ranks(res, world());
    const double elapsed = world().max(wall.seconds(), "runner: the slowest rank's wall time");
    check_result(res, spec);
    ojson rec = run_record(spec, res, dataset_record(spec, res, data, described), elapsed, run_provenance(origin));
    if (session) session->record(rec);
    return res;
  };
  std::vector<bool> again(plan.runs.size(), false);  // kept runs run again for their outputs
  for (std::size_t i = 0; i < plan.runs.size(); ++i) {
    const RunSpec& spec = plan.runs[i];
    progress.set_label(plan.id + " " + spec.backend + " " + spec.dataset.name);
    if (!execute[i]) {
      ++oc.reused;
      progress.advance();
      continue;
    }
    CaseResult res = execute_run(i);
    // A file the case reads (a recorded sample) is gone, and a kept run of this plan wrote it (a
    // sweep resumed on another machine): that run runs again, then this one. Rank 0 (the
    // results file's) picks it; every rank runs it.
    std::vector<std::uint32_t> pick{0};
    if (session && !res.missing_input.empty()) {
      const std::string producer = session->kept_run_with_output(res.missing_input);
      for (std::size_t k = 0; !producer.empty() && k < plan.runs.size(); ++k)
        if (!execute[k] && !again[k] && run_identity(plan.runs[k]) == producer) {
          pick[0] = static_cast<std::uint32_t>(k + 1);
          break;
        }
    }
    world().sum(pick.data(), 1, "runner: the kept run whose output a run reads");
    if (pick[0] > 0) {
      const std::size_t k = pick[0] - 1;
      again[k] = true;
      if (session && !session->quiet())
        std::fprintf(stderr, "run_experiment: %s: %s on %s runs again: %s is gone and %s on %s reads it\n", plan.id.c_str(),
                     plan.runs[k].backend.c_str(), plan.runs[k].dataset.name.c_str(), res.missing_input.c_str(),
                     spec.backend.c_str(), spec.dataset.name.c_str());
      --oc.reused;
      count_status(execute_run(k).status, oc);
      res = execute_run(i);
    }
    count_status(res.status, oc);
    auto lu = last_use.find(dataset_key(spec.dataset.name, spec.dataset.options));
    if (lu != last_use.end() && lu->second == i) data.release(spec.dataset.name, spec.dataset.options);
    progress.advance();
  }
}

}  // namespace

ExperimentOutcome Runner::run_experiment(const ExperimentPlan& plan, Progress& progress) {
  ExperimentOutcome oc;
  oc.id = plan.id;
  const fs::path dir(out_dir_);
  // A --smoke run never overwrites the full experiment's results.
  const std::string stem = plan.smoke ? plan.id + "-smoke" : plan.id;
  Family* family = families_.find(plan.family);
  if (!family) throw Error("unknown family '" + plan.family + "'");
  Comm& comm = world();
  if (comm.size() > 1 && family->split_across_ranks().empty())
    throw Error("family '" + plan.family + "' does not split its work over MPI ranks yet: run " + plan.id +
                " with one rank, not " + std::to_string(comm.size()));
  const bool lead = comm.rank() == 0;  // the rank that owns the results files
  if (!lead && opt_.render_only) return oc;

  // ---- before the first run: nothing below may touch the results folder until it passes ----
  std::optional<ResultsSession> session;
  if (lead) {
    session.emplace(dir, stem, command_line(opt_.argv));
    oc.json_path = session->json_path();
  }

  // --render: the tables of the results file as it stands (e.g. after an interrupted run on
  // another machine), nothing run and the JSON untouched.
  if (opt_.render_only) {
    const ojson old = session->read_for_render();
    oc.reused = static_cast<int>(old["runs"].size());
    write_tables(old, plan, opt_.paper_tables_dir, dir, stem, oc);
    return oc;
  }

  ojson head = results_head(plan, provenance_, environment_);
  if (comm.size() > 1) head["provenance"]["ranks"]["split"] = family->split_across_ranks();
  // Which runs execute now (the others are reused from the previous file): rank 0 decides; its
  // last slot says whether rank 0 could open the results file at all, so an error there (a
  // corrupt file to resume) ends every rank at once instead of leaving them in a collective.
  std::vector<std::uint32_t> run_now(plan.runs.size() + 1, 0);
  std::exception_ptr lead_error;
  if (lead) {
    try {
      session->open(head, opt_.resume, opt_.quiet);
      for (std::size_t i = 0; i < plan.runs.size(); ++i) run_now[i] = session->has_ok_run(run_identity(plan.runs[i])) ? 0 : 1;
    } catch (...) {
      lead_error = std::current_exception();
      run_now.back() = 1;
    }
  }
  comm.sum(run_now.data(), run_now.size(), "runner: which runs execute (rank 0's results file)");
  if (run_now.back()) {
    if (lead_error) std::rethrow_exception(lead_error);
    throw Error(plan.id + ": rank 0 could not open the results file (its error is on its stderr)");
  }
  run_now.pop_back();
  const std::vector<bool> execute(run_now.begin(), run_now.end());

  sweep(plan, *family, execute, registry_, datasets_, session ? &*session : nullptr, run_origin_, progress, oc);
  if (!lead) return oc;
  ResultsSession& results = *session;

  ojson& doc = results.document();
  const auto bo_of = [this](const std::string& f) {
    const Family* fam = families_.find(f);
    return fam ? backend_only_params(*fam) : std::vector<std::string>{};
  };
  const auto ref_of = [this](const std::string& f) -> std::string {
    try {
      return registry_.reference(f);
    } catch (const Error&) {
      return "";  // a family without a reference backend: nothing is validated by checksum
    }
  };
  oc.validation_failures = apply_validation(doc["runs"], bo_of, ref_of);
  if (doc["runs"].empty()) {
    oc.json_path.clear();
    oc.markdown = "# " + (plan.title.empty() ? plan.id : plan.title) + "\n\n_No runs (all filtered out by --backend or --only-dataset)._\n\n";
    return oc;
  }
  results.commit();
  write_tables(doc, plan, opt_.paper_tables_dir, dir, stem, oc);
  return oc;
}

}  // namespace gpudm::experiments
