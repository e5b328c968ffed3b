#include "algorithms/gp_rules/cli.hpp"

#include <cstdio>
#include <fstream>
#include <iostream>
#include <memory>

#include "algorithms/core/files.hpp"
#include "algorithms/core/json_limits.hpp"
#include "algorithms/core/progress.hpp"
#include "algorithms/core/schema.hpp"
#include "algorithms/core/stopwatch.hpp"
#include "algorithms/gp_rules/cv.hpp"
#include "algorithms/gp_rules/params.hpp"
#include "algorithms/gp_rules/report.hpp"

namespace gpudm::gp_rules {

namespace {

std::string usage() {
  return "usage:\n"
         "  --train gp_rules --algorithm falco|tan|bojarczuk --dataset NAME [--test NAME | --cv K]\n"
         "                   [--backend B] [--seed S] [--model-out M.json] [--param key=value]...\n"
         "                   [--metrics-out X.json] [--quiet]\n"
         "  --predict M.json --dataset NAME [--backend B] [--metrics-out X.json]\n"
         "NAME is a catalog dataset (run_experiment --datasets); params: run_experiment --list.\n";
}

struct Args {
  std::string dataset, test, backend, model_out, metrics_out, model_in;
  int cv = 0;
  std::uint64_t seed = 1;
  bool quiet = false;
  nlohmann::json params = nlohmann::json::object();
};

Args parse(const std::vector<std::string>& a, bool predict) {
  Args r;
  std::size_t i = 0;
  if (predict) {
    GPUDM_REQUIRE(!a.empty() && a[0].rfind("--", 0) != 0, "--predict needs the model file: --predict M.json --dataset NAME");
    r.model_in = a[i++];
  }
  const auto value = [&](const std::string& flag) -> std::string {
    GPUDM_REQUIRE(i + 1 < a.size(), flag + " needs a value (--train gp_rules --help lists the options)");
    return a[++i];
  };
  const auto integer = [&](const std::string& flag) -> long long {
    const std::string v = value(flag);
    try {
      std::size_t used = 0;
      const long long x = std::stoll(v, &used);
      if (used == v.size()) return x;
    } catch (const std::exception&) {
    }
    throw Error(flag + " expects an integer, got '" + v + "'");
  };
  for (; i < a.size(); ++i) {
    const std::string& f = a[i];
    if (f == "--dataset") r.dataset = value(f);
    else if (f == "--test" && !predict) r.test = value(f);
    else if (f == "--cv" && !predict) r.cv = static_cast<int>(integer(f));
    else if (f == "--backend") r.backend = value(f);
    else if (f == "--seed" && !predict) r.seed = static_cast<std::uint64_t>(integer(f));
    else if (f == "--model-out" && !predict) r.model_out = value(f);
    else if (f == "--metrics-out") r.metrics_out = value(f);
    else if (f == "--quiet") r.quiet = true;
    else if (f == "--algorithm" && !predict) r.params["algorithm"] = value(f);
    else if (f == "--param" && !predict) {
      const std::string kv = value(f);
      const auto eq = kv.find('=');
      GPUDM_REQUIRE(eq != std::string::npos && eq > 0, "--param expects key=value, got '" + kv + "'");
      r.params[kv.substr(0, eq)] = cli_json_value(kv.substr(eq + 1), "--param " + kv.substr(0, eq));
    } else {
      throw Error("unknown option '" + f + "' (--train gp_rules --help lists the options)");
    }
  }
  GPUDM_REQUIRE(!r.dataset.empty(), "--dataset NAME is required (--train gp_rules --help lists the options)");
  GPUDM_REQUIRE(r.test.empty() || r.cv == 0, "use either --test or --cv, not both");
  GPUDM_REQUIRE(r.cv == 0 || r.cv >= 2, "--cv needs K >= 2");
  return r;
}

std::shared_ptr<const Dataset> resolve(const std::string& name, CommandEnv& env) {
  GPUDM_REQUIRE(env.datasets != nullptr, "dataset '" + name + "': this tool has no dataset catalog");
  auto d = env.datasets->get(name, nlohmann::json::object());
  GPUDM_REQUIRE(d != nullptr, "dataset '" + name + "' could not be loaded");
  GPUDM_REQUIRE(d->task() == Task::classification, "dataset '" + name + "' is not a classification dataset");
  return d;
}

void write_json(const std::string& path, const nlohmann::ordered_json& j) { write_file_atomic(path, j.dump(2) + "\n"); }

bool wants_help(const std::vector<std::string>& a) {
  for (const auto& s : a)
    if (s == "--help" || s == "-h") return true;
  return false;
}

nlohmann::ordered_json score_json(const Score& s) {
  return {{"rows", s.rows}, {"correct", s.correct}, {"accuracy", s.accuracy()}, {"by_default_class", s.by_default}};
}

int train_cli(const std::vector<std::string>& argv, CommandEnv& env) {
  if (wants_help(argv)) {
    std::printf("%s\nparams (--param key=value):\n", usage().c_str());
    for (const auto& p : case_params().specs())
      std::printf("  %-22s %-7s default %-10s %s%s\n", p.name.c_str(), p.type.c_str(), p.default_value.dump().c_str(),
                  p.doc.c_str(), p.constraint_text().c_str());
    return 0;
  }
  try {
    GPUDM_REQUIRE(env.registry != nullptr, "gp_rules CLI: no backend registry");
    Args a = usage_errors([&] { return parse(argv, false); });
    if (!a.params.contains("algorithm"))
      throw UsageError("--algorithm falco|tan|bojarczuk is required (--train gp_rules --help lists the options)");
    if (a.quiet) Progress::set_quiet(true);
    const GpCase p = case_params().read(a.params);
    const std::string backend = a.backend.empty() ? env.registry->reference("gp_rules") : a.backend;
    const auto make_engine = [&] {
      auto e = env.registry->create<rules::RuleEvaluator>("gp_rules", backend);
      e->configure(p.engine);
      return e;
    };
    auto data = resolve(a.dataset, env);
    // --test is read and matched to the training data by name before training: a file that cannot
    // be scored fails now, not after the run; columns, categories and classes are matched by name.
    std::unique_ptr<Dataset> test;
    if (!a.test.empty()) {
      test = std::make_unique<Dataset>(*resolve(a.test, env));
      align_to_schema(DataSchema::of(*data), *test, "test dataset '" + a.test + "'");
    }
    nlohmann::ordered_json metrics;
    metrics["algorithm"] = to_string(p.gp.algorithm);
    metrics["dataset"] = data->name();
    metrics["backend"] = backend;
    metrics["seed"] = a.seed;
    metrics["params"] = a.params;
    if (a.cv > 0) {
      RunStats cv_stats;
      const CvResult cv = cross_validate(*data, p.gp, a.seed, a.cv, make_engine, cv_stats);
      std::printf("=== %d-fold cross-validation on %s ===\ntest accuracy %.4f (%llu/%llu)  mean train accuracy %.4f  mean rules %.1f\n\n",
                  a.cv, data->name().c_str(), cv.test_accuracy(), static_cast<unsigned long long>(cv.test_correct),
                  static_cast<unsigned long long>(cv.test_rows), cv.mean_train_accuracy(), cv.mean_rules());
      metrics["cv"] = {{"folds", a.cv}, {"test_accuracy", cv.test_accuracy()}, {"mean_train_accuracy", cv.mean_train_accuracy()},
                       {"mean_rules", cv.mean_rules()}};
    }
    // The model on every row (after CV, as Weka does).
    auto engine = make_engine();
    FittedModel fitted = fit_model(*data, p.gp, a.seed, *engine, backend, a.params);
    const Classifier& model = fitted.model;
    RunStats& stats = fitted.stats;
    const double secs = fitted.seconds;
    const Score& s = fitted.train;
    std::printf("gp_rules %s on %s (backend %s, seed %llu, population %d, generations %d)\n\n%s\n", to_string(p.gp.algorithm),
                data->name().c_str(), backend.c_str(), static_cast<unsigned long long>(a.seed), p.gp.population,
                p.gp.generations, to_text(model, *data).c_str());
    std::printf("=== training data ===\naccuracy %.4f (%llu/%llu)  run %.3f s  evaluations %llu  %.3g GPops/s in evaluation\n",
                s.accuracy(), static_cast<unsigned long long>(s.correct), static_cast<unsigned long long>(s.rows), secs,
                static_cast<unsigned long long>(stats.evaluations),
                stats.evaluation_seconds() > 0 ? static_cast<double>(stats.gpops) / stats.evaluation_seconds() : 0.0);
    metrics["train"] = score_json(s);
    metrics["run_seconds"] = secs;
    metrics["breakdown"] = stats.phases.to_json();
    const nlohmann::ordered_json rm = run_metrics(stats);
    for (auto it = rm.begin(); it != rm.end(); ++it) metrics[it.key()] = it.value();
    if (test) {
      auto tester = make_engine();
      tester->prepare(*test);
      const Score t = score(model, *test, *tester, stats.engine);
      std::printf("=== test data (%s) ===\naccuracy %.4f (%llu/%llu)\n", test->name().c_str(), t.accuracy(),
                  static_cast<unsigned long long>(t.correct), static_cast<unsigned long long>(t.rows));
      metrics["test"] = score_json(t);
    }
    std::string path = a.model_out;
    if (path.empty()) path = default_model_path(std::string("gp_rules_") + to_string(p.gp.algorithm), data->name());
    write_json(path, fitted.file);
    std::printf("model written to %s\n", path.c_str());
    if (!a.metrics_out.empty()) write_json(a.metrics_out, metrics);
    return 0;
  } catch (const std::exception& ex) {
    return report_cli_error(ex);
  }
}

int predict_cli(const std::vector<std::string>& argv, CommandEnv& env) {
  if (wants_help(argv)) {
    std::printf("%s", usage().c_str());
    return 0;
  }
  try {
    GPUDM_REQUIRE(env.registry != nullptr, "gp_rules CLI: no backend registry");
    const Args a = usage_errors([&] { return parse(argv, true); });
    const nlohmann::json j = read_json_file(a.model_in, "model file");
    auto data = std::make_shared<Dataset>(*resolve(a.dataset, env));
    const Classifier model = model_from_json(j, *data, a.model_in);
    const std::string backend = a.backend.empty() ? env.registry->reference("gp_rules") : a.backend;
    auto engine = env.registry->create<rules::RuleEvaluator>("gp_rules", backend);
    engine->prepare(*data);
    PhaseTimer t;
    const Score s = score(model, *data, *engine, t);
    std::printf("model %s (%s, %zu rules) on %s\n\n%s\naccuracy %.4f (%llu/%llu)  rows by the default class %llu\n",
                a.model_in.c_str(), j.value("algorithm", std::string("?")).c_str(), model.rules.size(),
                data->name().c_str(), to_text(model, *data).c_str(), s.accuracy(),
                static_cast<unsigned long long>(s.correct), static_cast<unsigned long long>(s.rows),
                static_cast<unsigned long long>(s.by_default));
    if (!a.metrics_out.empty())
      write_json(a.metrics_out, {{"model", a.model_in}, {"dataset", data->name()}, {"backend", backend}, {"score", score_json(s)}});
    return 0;
  } catch (const std::exception& ex) {
    return report_cli_error(ex);
  }
}

}  // namespace

std::vector<FamilyCommand> commands() {
  FamilyCommand train;
  train.trigger = "--train";
  train.usage = "--train gp_rules --algorithm falco|tan|bojarczuk --dataset NAME [--test NAME | --cv K] [...]   evolve a rule "
                "classifier (--train gp_rules --help)";
  train.run = train_cli;
  FamilyCommand predict;
  predict.trigger = "--predict";
  predict.usage = "--predict GP_RULES_MODEL.json --dataset NAME   score a gp_rules classifier";
  predict.model_format = kModelFormat;
  predict.run = predict_cli;
  return {train, predict};
}

}  // namespace gpudm::gp_rules
