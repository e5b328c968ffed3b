#include "experiments/cli.hpp"

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <set>
#include <sstream>

#include <CLI/CLI.hpp>

#include "algorithms/core/json_limits.hpp"
#include "algorithms/core/progress.hpp"
#include "experiments/compare.hpp"
#include "datasets/user_file.hpp"
#include "experiments/config.hpp"
#include "experiments/runner.hpp"
#include "experiments/text.hpp"

namespace gpudm::experiments {

namespace fs = std::filesystem;

namespace {

int fail(int code, const std::string& msg) {
  report_cli_error(Error(msg));
  return code;
}

std::string pad(const std::string& s, std::size_t n) { return s.size() >= n ? s : s + std::string(n - s.size(), ' '); }

// The "format" of a model file, for routing --predict (the family's command reads the file again).
std::string model_format_of(const std::string& path) {
  const nlohmann::json j = read_json_file(path, "model file");
  if (!j.is_object() || !j.contains("format") || !j["format"].is_string())
    throw Error(path + ": not a model file (no \"format\" key at the top level)");
  return j["format"].get<std::string>();
}

const char* kFooter =
    "\nExamples:\n"
    "  run_experiment configs/smoke.json              run a config; tables are printed and written to\n"
    "                                                 results/<gpu-tag>/<experiment>.{json,md,csv}\n"
    "  run_experiment configs/pitt_table3.json --smoke --backend sequential --backend cuda\n"
    "  run_experiment configs/gmt_table3.json --resume   continue a sweep, skipping runs already ok\n"
    "  run_experiment configs/gmt_table3.json --render -o results/h100   tables of a file as it stands\n"
    "  run_experiment --list | --datasets\n"
    "  run_experiment --compare results/h200/pitt_table3.json new/pitt_table3.json --threshold 0.05\n"
    "                                                 per run: both medians, new/base, U-test p, verdict,\n"
    "                                                 headline metrics; exit 1 if a run is significantly\n"
    "                                                 slower beyond the threshold (docs/perf-regression.md)\n"
    "  run_experiment --evaluate pittsburgh --population P.json --dataset my/data.csv --target class\n"
    "\nYour own data: wherever a mode takes --dataset NAME, NAME may be a file path\n"
    "(.csv .tsv .arff .dat(KEEL) .data(UCI) .txt, each optionally .gz) instead of a catalog name, with\n"
    "  --target COLUMN   the target column: a header/attribute name or a 1-based number (default: the last)\n"
    "  --task classification|regression   when the file cannot say (a numeric target in CSV/TSV)\n"
    "  --header yes|no   CSV/TSV: whether the first line names the columns (default: detected)\n"
    "Missing values: an empty cell, ?, NA, N/A, NaN, NULL, None, #N/A, <null> (pandas' spellings).\n"
    "A column is numeric unless a cell holds a word; inf or an out-of-range number is an error.\n"
    "In a config: \"datasets\": [{\"path\": \"my/data.csv\", \"target\": \"price\", \"task\": \"regression\"}].\n"
    "\nEnvironment:\n"
    "  GPUDM_DATA_DIR     ':'-separated folders holding the datasets (then datasets/cache/)\n"
    "  GPUDM_RESULTS_DIR  results root instead of <source>/results (--out overrides both)\n"
    "\nExit status: 0 ok; 1 a run failed, a checksum mismatched or data could not be loaded\n"
    "(--compare: a run is significantly slower beyond the threshold); 2 usage or config error\n"
    "(nothing under results/ is touched; --compare: different experiments, no common run, too few repetitions).\n"
    "Config format: docs/config-format.md. Results format: docs/results-schema.md.";

// --dry-run: what would run, per experiment, without running or writing anything.
void describe_plan_into(const ExperimentPlan& p, const Registry& registry, int depth, std::ostringstream& o) {
  const std::string ind(static_cast<std::size_t>(depth) * 2, ' ');
  for (const auto& inc : p.included) describe_plan_into(inc, registry, depth + 1, o);
  if (p.family.empty()) {
    o << ind << p.id << ": composite of " << p.included.size() << " experiment(s), " << p.total_runs() << " run(s)\n";
    return;
  }
  std::map<std::string, int> per_backend;
  std::set<std::string> datasets;
  for (const auto& r : p.runs) {
    ++per_backend[r.backend];
    datasets.insert(r.dataset.name);
  }
  o << ind << p.id << " (" << p.config_path << "): family " << p.family << ", " << p.runs.size() << " run(s) on "
    << datasets.size() << " dataset(s);";
  for (const auto& [b, n] : per_backend) {
    const bool avail = registry.has(p.family, b) && registry.info(p.family, b).available;
    o << " " << b << " " << n << (avail ? "" : " (skipped: unavailable)");
  }
  o << "; " << p.tables.size() << " table(s)\n";
}

std::string describe_plan(const ExperimentPlan& p, const Registry& registry) {
  std::ostringstream o;
  describe_plan_into(p, registry, 0, o);
  o << "config ok: " << p.total_runs() << " run(s)" << (p.smoke ? " (smoke)" : "") << "\n";
  return o.str();
}

int run_config(const CliArgs& a, CliServices& s) {
  FamilySet& families = s.families();
  Registry& registry = s.registry();
  ValidationContext vc;
  vc.families = &families;
  vc.registry = &registry;
  vc.check_dataset = s.check_dataset;
  vc.paper_tables_dir = s.paper_tables_dir;
  PlanOptions po;
  po.smoke = a.smoke;
  po.backends = a.backends;
  po.datasets = a.only_datasets;
  po.repetitions = a.repetitions;
  po.allow_large_sweep = a.allow_large_sweep;
  const ExperimentPlan plan = load_plan(a.config, vc, po);
  if (a.dry_run) {
    std::cout << describe_plan(plan, registry);
    return kExitOk;
  }

  RunnerOptions ro;
  ro.out_dir = a.out;
  ro.results_root = s.results_root;
  ro.paper_tables_dir = s.paper_tables_dir;
  ro.resume = a.resume;
  ro.render_only = a.render;
  ro.quiet = a.quiet;
  ro.argv = a.argv;
  Runner runner(families, registry, s.datasets(), ro);
  const auto outcomes = runner.run(plan);

  int failed = 0, mismatches = 0;
  for (const auto& o : outcomes) {
    failed += o.failed;
    mismatches += o.validation_failures;
  }
  // A composite's document already holds its parts; otherwise print every experiment's.
  if (plan.family.empty()) {
    if (!outcomes.empty()) std::cout << outcomes.back().markdown;
  } else {
    for (const auto& o : outcomes) std::cout << o.markdown;
  }
  std::cout << std::flush;
  if (!a.quiet) {
    for (const auto& o : outcomes) {
      if (o.json_path.empty() && o.md_path.empty()) continue;
      if (o.json_path.empty()) {  // a composite: its parts were summarised above
        std::fprintf(stderr, "run_experiment: %s: tables gathered -> %s\n", o.id.c_str(), o.md_path.c_str());
        continue;
      }
      std::fprintf(stderr, "run_experiment: %s: %d ok, %d skipped, %d failed%s%s -> %s\n", o.id.c_str(), o.ok, o.skipped,
                   o.failed, o.reused ? (", " + std::to_string(o.reused) + " kept from the previous file").c_str() : "",
                   o.validation_failures ? (", " + std::to_string(o.validation_failures) + " CHECKSUM MISMATCH(ES)").c_str() : "",
                   (o.json_path.empty() ? o.md_path : o.json_path).c_str());
    }
  }
  if (failed > 0) return fail(kExitRuntime, std::to_string(failed) + " run(s) failed; reasons are in the results file and under the tables");
  if (mismatches > 0)
    return fail(kExitRuntime, std::to_string(mismatches) + " run(s) disagree with the sequential backend's checksum (validation.passed = false)");
  return kExitOk;
}

}  // namespace

std::string list_families(FamilySet& families, const Registry& registry) {
  std::ostringstream o;
  const auto names = families.names();
  o << "Families (" << names.size() << "):\n";
  if (names.empty()) o << "  (none: this build has no algorithms/<f>/family_<f>.cpp)\n";
  for (const auto& n : names) {
    Family* f = families.find(n);
    o << "\n" << n << " — " << one_line(f->description()) << "\n  backends:\n";
    const auto bs = registry.backends(n);
    if (bs.empty()) o << "    (none registered)\n";
    for (const auto& b : bs)
      o << "    " << pad(b.backend, 12) << (b.available ? "available" : "skipped: " + one_line(b.reason))
        << (b.reference ? " (reference)" : "") << "\n";
    const auto cmds = f->commands();
    if (!cmds.empty()) {
      o << "  commands:\n";
      for (const auto& c : cmds) o << "    " << one_line(c.usage) << "\n";
    }
    o << "  params:\n";
    const auto ps = f->params();
    if (ps.empty()) o << "    (none)\n";
    std::size_t w = 0;
    for (const auto& p : ps) w = std::max(w, p.name.size());
    for (const auto& p : ps)
      o << "    " << pad(p.name, w + 2) << pad(p.type, 8) << " default " << pad(p.default_value.dump(), 10) << " "
        << one_line(p.doc) << p.constraint_text() << (p.backend_only ? " [backend-only]" : "") << "\n";
  }
  return o.str();
}

std::vector<CliMode> builtin_modes() {
  std::vector<CliMode> modes;
  auto list_flag = std::make_shared<bool>(false);
  modes.push_back(CliMode{
      "list",
      [list_flag](CLI::App& app, CliArgs&) {
        return app.add_flag("--list", *list_flag, "List families, their backends (available or why skipped) and params");
      },
      [](const CliArgs&, CliServices& s) {
        std::cout << list_families(s.families(), s.registry()) << std::flush;
        return kExitOk;
      },
      {}, {}, {}});
  auto ds_flag = std::make_shared<bool>(false);
  modes.push_back(CliMode{
      "datasets",
      [ds_flag](CLI::App& app, CliArgs&) {
        return app.add_flag("--datasets", *ds_flag,
                            "List every catalog dataset: found (path), generated or missing, shape checked");
      },
      [](const CliArgs&, CliServices& s) {
        if (!s.datasets_report) return fail(kExitRuntime, "this build has no dataset catalog");
        std::cout << s.datasets_report() << std::flush;
        return kExitOk;
      },
      {}, {}, {}});
  struct CompareState {
    std::vector<std::string> files;
    CompareOptions opt;
    bool json = false;
  };
  auto cmp = std::make_shared<CompareState>();
  modes.push_back(CliMode{
      "compare",
      [cmp](CLI::App& app, CliArgs&) {
        auto* trigger = app.add_option("--compare", cmp->files,
                                       "Compare two results files of one experiment (or two Google Benchmark JSON files) run by "
                                       "run: medians, ratio, Mann-Whitney U p-value, verdict, headline metrics (Markdown; --json)")
                            ->expected(2)
                            ->type_name("BASE.json NEW.json");
        app.add_option("--threshold", cmp->opt.threshold, "--compare: relative change of the median that counts (default 0.10)")
            ->check(CLI::Range(0.0, 100.0));
        app.add_option("--alpha", cmp->opt.alpha, "--compare: significance level of the U test (default 0.05)")
            ->check(CLI::Range(1e-9, 0.999999));
        app.add_option("--min-repetitions", cmp->opt.min_repetitions,
                       "--compare: fewer repetitions in a matched run is an input error (default: the fewest that can "
                       "reach alpha, 4 for 0.05; 1 reports such runs as ambiguous)")
            ->check(CLI::PositiveNumber);
        app.add_flag("--common-params", cmp->opt.common_params,
                     "--compare: match runs on the params both files record (a param added between the versions does "
                     "not split runs)");
        app.add_flag("--json", cmp->json, "--compare: print the report as JSON instead of Markdown");
        return trigger;
      },
      [cmp](const CliArgs&, CliServices&) {
        const ojson report = compare_results(cmp->files.at(0), cmp->files.at(1), cmp->opt);
        std::cout << (cmp->json ? report.dump(2) + "\n" : render_compare_markdown(report)) << std::flush;
        return report["exit_status"].get<int>();
      },
      {}, {}, {}});
  return modes;
}

namespace {

// --target and --task of the family modes: they apply to a dataset given by path, whichever
// option of the family's command names it (--dataset, --test, ...), so they are taken out here
// and the family's command gets a provider that adds them to such a dataset's options.
struct UserFileArgs {
  std::string target, task, header;
  bool any() const { return !target.empty() || !task.empty() || !header.empty(); }
};

std::vector<std::string> take_user_file_args(const std::vector<std::string>& in, UserFileArgs& out) {
  std::vector<std::string> rest;
  for (std::size_t i = 0; i < in.size(); ++i) {
    const bool target = in[i] == "--target", task = in[i] == "--task", header = in[i] == "--header";
    if (!target && !task && !header) {
      rest.push_back(in[i]);
      continue;
    }
    if (i + 1 >= in.size()) throw ConfigError(in[i] + " needs a value");
    const std::string& v = in[++i];
    if (task && v != "classification" && v != "regression")
      throw ConfigError("--task expects classification or regression, got '" + v + "'");
    if (header && v != "yes" && v != "no") throw ConfigError("--header expects yes or no, got '" + v + "'");
    (target ? out.target : task ? out.task : out.header) = v;
  }
  return rest;
}

class UserFileProvider : public DatasetProvider {
 public:
  UserFileProvider(CliServices& s, UserFileArgs args, std::string default_task)
      : s_(s), args_(std::move(args)), default_task_(std::move(default_task)) {}
  std::shared_ptr<const Dataset> get(const std::string& name, const nlohmann::json& options) override {
    const bool catalog = s_.check_dataset && s_.check_dataset(name).empty();
    if (!datasets::is_user_file(name, catalog)) {
      if (args_.any())
        throw ConfigError("--target, --task and --header apply to a data file given by path; '" + name +
                          "' is a catalog dataset");
      return s_.datasets().get(name, options);
    }
    nlohmann::json o = options.is_object() ? options : nlohmann::json::object();
    if (!args_.target.empty()) {
      const bool number = args_.target.find_first_not_of("0123456789") == std::string::npos && args_.target.size() < 9;
      o["target"] = number ? nlohmann::json(std::stoll(args_.target)) : nlohmann::json(args_.target);
    }
    const std::string task = args_.task.empty() ? default_task_ : args_.task;
    if (!task.empty()) o["task"] = task;
    if (!args_.header.empty()) o["header"] = args_.header == "yes";
    return s_.datasets().get(name, o);
  }

 private:
  CliServices& s_;
  UserFileArgs args_;
  std::string default_task_;
};

}  // namespace

std::vector<CliMode> family_command_modes(FamilySet& families) {
  struct Entry {
    std::string family;
    FamilyCommand command;
  };
  std::map<std::string, std::vector<Entry>> by_trigger;
  std::vector<std::string> triggers;  // first-seen order
  for (const auto& name : families.names())
    for (auto& c : families.find(name)->commands()) {
      if (!by_trigger.count(c.trigger)) triggers.push_back(c.trigger);
      by_trigger[c.trigger].push_back(Entry{name, std::move(c)});
    }
  std::vector<CliMode> modes;
  for (const auto& trigger : triggers) {
    const auto entries = std::make_shared<std::vector<Entry>>(by_trigger[trigger]);
    CliMode m;
    m.name = trigger.substr(trigger.find_first_not_of('-'));
    m.raw_trigger = trigger;
    for (const auto& e : *entries) m.raw_help += (m.raw_help.empty() ? "" : "\n  ") + e.command.usage;
    m.run_raw = [trigger, entries](const std::vector<std::string>& raw_rest, CliServices& s) -> int {
      UserFileArgs uf;
      const std::vector<std::string> rest = take_user_file_args(raw_rest, uf);
      auto run = [&](const FamilyCommand& c, const std::vector<std::string>& args) {
        UserFileProvider files(s, uf, c.data_task);
        CommandEnv env{&s.registry(), &files};
        return c.run(args, env);
      };
      std::string known;
      const bool by_format = !entries->empty() && !entries->front().command.model_format.empty();
      for (const auto& e : *entries) known += (known.empty() ? "" : ", ") + (by_format ? e.command.model_format : e.family);
      if (by_format) {
        if (rest.empty() || rest[0].rfind("-", 0) == 0) throw ConfigError(trigger + " needs a model file first: " + trigger + " MODEL.json ...");
        const std::string format = model_format_of(rest[0]);
        for (const auto& e : *entries)
          if (e.command.model_format == format) return run(e.command, rest);
        throw ConfigError(rest[0] + ": model format '" + format + "' is read by no family (known formats: " + known + ")");
      }
      if (rest.empty()) throw ConfigError(trigger + " needs a family: " + trigger + " FAMILY ... (" + known + ")");
      for (const auto& e : *entries)
        if (e.family == rest[0]) return run(e.command, std::vector<std::string>(rest.begin() + 1, rest.end()));
      throw ConfigError(trigger + " " + rest[0] + ": no family has this mode (" + known + ")");
    };
    modes.push_back(std::move(m));
  }
  return modes;
}

int run_cli(int argc, const char* const* argv, CliServices& services, const std::vector<CliMode>& modes) {
  CliArgs a;
  for (int i = 0; i < argc; ++i) a.argv.emplace_back(argv[i]);
  // Raw modes take everything after their trigger; only what precedes it is parsed here.
  const CliMode* raw = nullptr;
  std::vector<std::string> raw_rest;
  for (int i = 1; i < argc && !raw; ++i) {
    for (const auto& m : modes) {
      if (!m.raw_trigger.empty() && m.raw_trigger == argv[i]) {
        raw = &m;
        raw_rest.assign(argv + i + 1, argv + argc);
        argc = i;
        break;
      }
    }
  }
  CLI::App app{
      "run_experiment: runs an experiment config (sweeps of family x backend x dataset x params x seeds),\n"
      "writes results/<gpu-tag>/<experiment>.{json,md,csv} and prints the tables.",
      "run_experiment"};
  std::string footer;
  for (const auto& m : modes)
    if (!m.raw_trigger.empty()) footer += (footer.empty() ? "\nFamily modes (they parse their own options):\n" : "") + std::string("  ") + m.raw_help + "\n";
  app.footer(footer + kFooter);
  app.add_option("config", a.config, "Experiment config (configs/*.json); see docs/config-format.md");
  app.add_option("-b,--backend", a.backends, "Run only this backend (repeatable): sequential, openmp, cuda, ...")
      ->allow_extra_args(false);  // one name per -b, so "-b cuda configs/x.json" keeps the config
  app.add_option("--only-dataset", a.only_datasets,
                 "Run only this dataset of the config (repeatable; its name as in the config, e.g. iris)")
      ->allow_extra_args(false);
  app.add_flag("--smoke", a.smoke, "Apply the config's \"smoke\" block (CI-sized: seconds on a CPU)");
  app.add_option("-o,--out", a.out, "Results folder (default: results/<gpu-tag>, e.g. results/h100)");
  app.add_flag("--resume", a.resume, "Keep the results file's runs and run only those not already ok");
  app.add_flag("--render", a.render, "Write the tables (.md, .csv) of the existing results file again and run nothing (e.g. after an interrupted run; -o names the folder)");
  app.add_option("-r,--repetitions", a.repetitions, "Timed repetitions per run (overrides the config)")
      ->check(CLI::PositiveNumber);
  app.add_flag("-q,--quiet", a.quiet, "No progress bar or summary on stderr (tables still go to stdout)");
  app.add_flag("-n,--dry-run", a.dry_run, "Validate CONFIG and print what would run; run and write nothing");
  app.add_flag("--allow-large-sweep", a.allow_large_sweep,
               "Run a config that expands to more than " + std::to_string(kMaxRuns) + " runs");

  std::vector<CLI::Option*> triggers;
  for (const auto& m : modes) triggers.push_back(m.add ? m.add(app, a) : nullptr);

  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    return fail(kExitConfig, std::string(e.what()) + " (see run_experiment --help)");
  }
  try {
    if (raw) {
      if (!a.config.empty()) return fail(kExitConfig, raw->raw_trigger + " takes no CONFIG (got " + a.config + ")");
      Progress::set_quiet(a.quiet);
      return raw->run_raw(raw_rest, services);
    }
    const CliMode* chosen = nullptr;
    for (std::size_t i = 0; i < modes.size(); ++i) {
      if (triggers[i] && triggers[i]->count() > 0) {
        if (chosen) return fail(kExitConfig, "--" + chosen->name + " and --" + modes[i].name + " cannot be combined");
        chosen = &modes[i];
      }
    }
    // An empty -o (an unset variable in a script) would write into the default results folder.
    if (const CLI::Option* o = app.get_option("--out"); o->count() > 0 && a.out.empty())
      return fail(kExitConfig, "-o/--out: an empty folder name (an unset variable?); name the results folder");
    if (chosen) {
      if (!a.config.empty()) return fail(kExitConfig, "--" + chosen->name + " takes no CONFIG (got " + a.config + ")");
      return chosen->run(a, services);
    }
    if (a.config.empty()) return fail(kExitConfig, "no CONFIG given (e.g. run_experiment configs/smoke.json; see --help)");
    return run_config(a, services);
  } catch (const std::exception& e) {
    // ConfigError is a UsageError (exit 2); other Errors exit 1 (core/error.hpp).
    return report_cli_error(e);
  }
}

}  // namespace gpudm::experiments
