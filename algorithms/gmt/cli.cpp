#include "algorithms/gmt/cli.hpp"

#include <algorithm>
#include <climits>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <iostream>
#include <memory>
#include <numeric>

#include "algorithms/core/files.hpp"
#include "algorithms/core/cli_numbers.hpp"
#include "algorithms/core/json_limits.hpp"
#include "algorithms/core/progress.hpp"
#include "algorithms/core/schema.hpp"
#include "algorithms/gmt/csv.hpp"
#include "algorithms/gmt/params.hpp"
#include "algorithms/gmt/train.hpp"

namespace gpudm {
namespace gmt {

std::string cli_usage() {
  return "usage:\n"
         "  --train gmt --dataset NAME [--test NAME | --cv K [--cv-only [--cv-folds LIST]]] [--backend sequential|openmp|cuda] [--seed S]\n"
         "              [--rows N] [--param key=value]... [--model-out MODEL.json] [--metrics-out M.json] [--quiet]\n"
         "  --predict MODEL.json --dataset NAME [--rows N] [--predictions-out P.csv] [--metrics-out M.json]\n"
         "NAME is a catalog dataset or a data file (.csv .tsv .arff .dat .data .txt[.gz]; --target COLUMN,\n"
         "default the last column; see run_experiment --help). --cv K: K folds of a seeded shuffle (the folds of\n"
         "tools/gmt/gmt_study_split --folds K with the same seed), then the model on all rows unless --cv-only.\n"
         "--cv-folds LIST (0-based, e.g. 0-4 or 0,3,7): only those folds of the K, a study cut into parts\n"
         "(the per-fold records of the parts make the whole run's).\n"
         "Predictions are bounded by the leaves' training ranges (--param clamp_margin, < 0 = off).\n";
}

namespace {

struct Args {
  std::string dataset, test, backend, model_out, metrics_out, predictions_out, model_in;
  int cv = 0;
  std::string cv_folds_text;  // --cv-folds as given
  std::vector<int> cv_folds;  // the folds to run (all K when empty)
  long long rows = -1;
  std::uint64_t seed = 1;
  bool quiet = false, cv_only = false;
  nlohmann::json params = nlohmann::json::object();  // as given, for the metrics file
  GmtCase typed;                                      // the same, read and checked
};

// "0-4", "0,3,7" or a mix ("0-2,5"): distinct folds in [0, K), in the order given.
std::vector<int> parse_fold_list(const std::string& text, int k) {
  std::vector<int> out;
  std::size_t start = 0;
  while (start <= text.size()) {
    const std::size_t comma = std::min(text.find(',', start), text.size());
    const std::string item = text.substr(start, comma - start);
    const std::size_t dash = item.find('-');
    const long long lo = parse_cli_int("--cv-folds", dash == std::string::npos ? item : item.substr(0, dash), 0, k - 1);
    const long long hi = dash == std::string::npos ? lo : parse_cli_int("--cv-folds", item.substr(dash + 1), 0, k - 1);
    GPUDM_REQUIRE(lo <= hi, "--cv-folds: '" + item + "' is an empty range");
    for (long long f = lo; f <= hi; ++f) {
      GPUDM_REQUIRE(std::find(out.begin(), out.end(), int(f)) == out.end(), "--cv-folds: fold " + std::to_string(f) + " given twice");
      out.push_back(int(f));
    }
    start = comma + 1;
  }
  return out;
}

Args parse(const std::vector<std::string>& a, bool predict) {
  Args r;
  std::size_t i = 0;
  if (predict) {
    GPUDM_REQUIRE(!a.empty() && a[0].rfind("--", 0) != 0, "--predict needs the model file: --predict MODEL.json --dataset NAME");
    r.model_in = a[0];
    i = 1;
  }
  auto value = [&](const std::string& flag) -> std::string {
    GPUDM_REQUIRE(i + 1 < a.size(), flag + " needs a value (--train gmt --help lists the options)");
    return a[++i];
  };
  for (; i < a.size(); ++i) {
    const std::string& f = a[i];
    if (f == "--dataset") r.dataset = value(f);
    else if (f == "--test") r.test = value(f);
    else if (f == "--cv") r.cv = static_cast<int>(parse_cli_int(f, value(f), 2, 1 << 20));
    else if (f == "--backend") r.backend = value(f);
    else if (f == "--seed") r.seed = parse_cli_uint64(f, value(f));
    else if (f == "--rows") r.rows = parse_cli_int(f, value(f), 1, LLONG_MAX);
    else if (f == "--model-out") r.model_out = value(f);
    else if (f == "--metrics-out") r.metrics_out = value(f);
    else if (f == "--predictions-out") r.predictions_out = value(f);
    else if (f == "--quiet") r.quiet = true;
    else if (f == "--cv-only") r.cv_only = true;
    else if (f == "--cv-folds") r.cv_folds_text = value(f);
    else if (f == "--param") {
      const std::string kv = value(f);
      const auto eq = kv.find('=');
      GPUDM_REQUIRE(eq != std::string::npos && eq > 0, "--param expects key=value, got '" + kv + "'");
      const std::string k = kv.substr(0, eq), v = kv.substr(eq + 1);
      r.params[k] = cli_json_value(v, "--param " + k);
    } else {
      throw Error("unknown option '" + f + "' (--train gmt --help lists the options)");
    }
  }
  GPUDM_REQUIRE(!r.dataset.empty(), "--dataset NAME is required (--train gmt --help lists the options)");
  GPUDM_REQUIRE(r.test.empty() || r.cv == 0, "use either --test or --cv, not both");
  GPUDM_REQUIRE(r.cv == 0 || r.cv >= 2, "--cv needs K >= 2");
  GPUDM_REQUIRE(!r.cv_only || r.cv > 0, "--cv-only needs --cv K");
  if (!r.cv_folds_text.empty()) {
    GPUDM_REQUIRE(r.cv_only, "--cv-folds needs --cv K --cv-only (a part of a cross-validation builds no final model)");
    r.cv_folds = parse_fold_list(r.cv_folds_text, r.cv);
  }
  try {
    r.typed = read_case(r.params);
  } catch (const Error& e) {
    throw Error(std::string("--param: ") + e.what() + " (--train gmt --help lists the parameters)");
  }
  return r;
}

Dataset resolve(const std::string& name, long long rows, const CliEnv& env) {
  GPUDM_REQUIRE(env.datasets != nullptr, "dataset '" + name + "': this tool has no dataset provider");
  nlohmann::json opt = nlohmann::json::object();
  if (rows > 0) opt["rows"] = rows;
  auto p = env.datasets->get(name, opt);
  GPUDM_REQUIRE(p != nullptr, "dataset '" + name + "' could not be loaded");
  GPUDM_REQUIRE(p->task() == Task::regression, "dataset '" + name + "' is a classification dataset; GMT needs a regression target");
  return *p;
}

void write_json(const std::string& path, const nlohmann::ordered_json& j) { write_file_atomic(path, j.dump(2) + "\n"); }

// Without --backend: a host thread pool when one is available (the fastest backend that needs no
// device), else the reference.
std::string default_backend(const Registry& r) {
  return r.first_available("gmt", [](const Capabilities& c) { return c.host() && c.threads; });
}

nlohmann::ordered_json scores_json(const Scores& s) {
  return {{"rows", s.rows}, {"rmse", s.rmse}, {"mae", s.mae}, {"max_abs_error", s.max_abs_error}, {"clamped", s.clamped}};
}

// A test score with the model's bounds ("test") and, when they are on, without ("test_unbounded":
// what the clamp changed).
void test_scores(nlohmann::ordered_json& into, const Tree& t, const Dataset& d, const PredictionBounds& b, Scores* bounded = nullptr) {
  const Scores s = score(t, d, 0.0, &b);
  into["test"] = scores_json(s);
  if (b.on()) into["test_unbounded"] = scores_json(score(t, d));
  if (bounded) *bounded = s;
}

}  // namespace

namespace {
bool wants_help(const std::vector<std::string>& argv) {
  for (const auto& a : argv)
    if (a == "--help" || a == "-h") return true;
  return false;
}
}  // namespace

int train_cli(const std::vector<std::string>& argv, const CliEnv& env) {
  if (wants_help(argv)) {
    std::printf("%s\nGMT parameters (--param key=value):\n", cli_usage().c_str());
    for (const auto& p : params_table().specs()) std::printf("  %-22s %-7s default %-10s %s\n", p.name.c_str(), p.type.c_str(), p.default_value.dump().c_str(), p.doc.c_str());
    return 0;
  }
  try {
    GPUDM_REQUIRE(env.registry != nullptr, "gmt CLI: no backend registry");
    Args a = usage_errors([&] { return parse(argv, false); });
    if (a.quiet) Progress::set_quiet(true);
    if (a.backend.empty()) a.backend = default_backend(*env.registry);
    Dataset data = resolve(a.dataset, a.rows, env);
    data.validate();
    // --test is read and matched to the training data by name before training: a file that cannot
    // be scored fails now, not after the run, and columns in another order are matched, not swapped.
    std::unique_ptr<Dataset> test;
    if (!a.test.empty()) {
      test = std::make_unique<Dataset>(resolve(a.test, -1, env));
      align_to_schema(DataSchema::of(data), *test, "test dataset '" + a.test + "'");
    }
    // --param test_fraction=F: hold out F of the rows (the runner's seeded split) for a test score.
    const double test_fraction = a.typed.test_fraction;
    std::unique_ptr<Dataset> holdout;
    if (test_fraction > 0.0) {
      GPUDM_REQUIRE(a.test.empty() && a.cv == 0, "--param test_fraction cannot be combined with --test or --cv");
      Dataset tr, te;
      holdout_split(data, test_fraction, a.seed, &tr, &te);
      tr.set_name(data.name());
      te.set_name(data.name() + "[hold-out]");
      data = std::move(tr);
      holdout = std::make_unique<Dataset>(std::move(te));
    }
    auto make_eval = [&] {
      auto e = env.registry->create<ModelTreeEvaluator>("gmt", a.backend);
      e->configure(a.typed.eval);
      return e;
    };
    nlohmann::ordered_json metrics;
    metrics["dataset"] = data.name();
    metrics["backend"] = a.backend;
    metrics["seed"] = a.seed;
    metrics["params"] = a.params;

    if (a.cv > 0) {
      // K folds of a seeded shuffle (cv_folds); each fold's model is scored on its held-out rows.
      const auto fold_rows = cv_folds(data.rows(), a.cv, a.seed);
      double se = 0, ae = 0, se_u = 0, ae_u = 0, max_err = 0, max_err_u = 0, leaves = 0, attrs = 0, secs = 0;
      std::int64_t clamped = 0;
      std::size_t n = 0;
      // The same folds' test scores under other clamp margins and smoothing constants (scoring
      // only: the trees depend on neither), so a study can choose both from one run.
      const std::vector<double> sweep_margin{0.0, 0.05, 0.1, 0.25, 0.5};
      const std::vector<double> grid_k{0.0, 5.0, 15.0, 30.0, 60.0, 120.0}, grid_margin{-1.0, 0.0, 0.05, 0.1, 0.25, 0.5};
      struct Pool {
        double se = 0, ae = 0, max = 0;
        void add(const Scores& s) {
          se += s.rmse * s.rmse * double(s.rows);
          ae += s.mae * double(s.rows);
          max = std::max(max, s.max_abs_error);
        }
      };
      std::vector<Pool> sweep(sweep_margin.size()), grid(grid_k.size() * grid_margin.size());
      auto point = [](const char* k1, double v1, const char* k2, double v2, const Scores& s) {
        return nlohmann::ordered_json{{k1, v1}, {k2, v2}, {"rmse", s.rmse}, {"mae", s.mae}, {"max_abs_error", s.max_abs_error}};
      };
      auto folds = nlohmann::ordered_json::array();
      std::vector<int> run_folds = a.cv_folds;
      if (run_folds.empty())
        for (int k = 0; k < a.cv; ++k) run_folds.push_back(k);
      const double nf = double(run_folds.size());
      for (const int k : run_folds) {
        const auto& te = fold_rows[static_cast<std::size_t>(k)];
        Dataset dtr = data.select(rows_not_in(te, data.rows())), dte = data.select(te);
        dtr.set_name(data.name());
        // the fold's training means fill its missing values on both sides, as Weka's M5P fills them
        // (ReplaceMissingValues on the training rows): the test rows never shape the model
        if (data.has_missing()) {
          const std::vector<double> v = impute_missing(dtr, nullptr);
          impute_missing(dte, &v);
        }
        GmtParams p = ea_params(a.typed, dtr.rows());
        p.seed = a.seed + static_cast<std::uint64_t>(k);
        auto e = make_eval();
        TrainResult r = train(dtr, p, *e, !a.quiet);
        const NodeModels nm = node_models(r.best.tree, dtr, a.typed.eval.rank_tol, a.typed.eval.rows_per_param);
        const Tree tree = smoothed(r.best.tree, nm, a.typed.smoothing);
        // (smoothing changes the leaf models, not the routing: the leaves' target ranges are the same)
        const PredictionBounds b = prediction_bounds(r.best.tree, dtr, a.typed.clamp_margin);
        const Scores s = score(tree, dte, 0.0, &b), su = score(tree, dte);
        auto fold_margins = nlohmann::ordered_json::array(), fold_grid = nlohmann::ordered_json::array();
        for (std::size_t m = 0; m < sweep_margin.size(); ++m) {
          PredictionBounds bm = b;
          bm.margin = sweep_margin[m];
          const Scores sm = score(tree, dte, 0.0, &bm);
          sweep[m].add(sm);
          fold_margins.push_back(point("clamp_margin", sweep_margin[m], "smoothing", a.typed.smoothing, sm));
        }
        for (std::size_t g = 0; g < grid_k.size(); ++g) {
          const Tree tk = smoothed(r.best.tree, nm, grid_k[g]);
          for (std::size_t m = 0; m < grid_margin.size(); ++m) {
            PredictionBounds bm = b;
            bm.margin = grid_margin[m];
            const Scores sm = score(tk, dte, 0.0, &bm);
            grid[g * grid_margin.size() + m].add(sm);
            fold_grid.push_back(point("smoothing", grid_k[g], "clamp_margin", grid_margin[m], sm));
          }
        }
        se += s.rmse * s.rmse * double(s.rows);
        ae += s.mae * double(s.rows);
        se_u += su.rmse * su.rmse * double(su.rows);
        ae_u += su.mae * double(su.rows);
        max_err = std::max(max_err, s.max_abs_error);
        max_err_u = std::max(max_err_u, su.max_abs_error);
        clamped += s.clamped;
        n += static_cast<std::size_t>(s.rows);
        leaves += count_leaves(r.best.tree);
        attrs += count_model_attributes(r.best.tree);
        secs += r.seconds;
        nlohmann::ordered_json f = {{"fold", k}, {"test_rows_fingerprint", rows_fingerprint(te)}, {"test", scores_json(s)}};
        if (b.on()) f["test_unbounded"] = scores_json(su);
        f["leaves"] = count_leaves(r.best.tree);
        f["attributes_in_models"] = count_model_attributes(r.best.tree);
        f["iterations"] = r.summary.iterations;
        f["seconds"] = r.seconds;
        f["by_clamp_margin"] = std::move(fold_margins);
        f["by_smoothing_and_clamp"] = std::move(fold_grid);
        folds.push_back(std::move(f));
      }
      nlohmann::ordered_json cv = {{"folds", a.cv}, {"clamp_margin", a.typed.clamp_margin}, {"smoothing", a.typed.smoothing}, {"rmse", std::sqrt(se / double(n))},
                                   {"mae", ae / double(n)}, {"max_abs_error", max_err}, {"clamped", clamped}};
      if (!a.cv_folds.empty()) cv["folds_run"] = a.cv_folds;  // a part: these folds' scores only
      if (a.typed.clamp_margin >= 0.0)
        cv["unbounded"] = {{"rmse", std::sqrt(se_u / double(n))}, {"mae", ae_u / double(n)}, {"max_abs_error", max_err_u}};
      auto pooled = [&](const Pool& q) {
        return nlohmann::ordered_json{{"rmse", std::sqrt(q.se / double(n))}, {"mae", q.ae / double(n)}, {"max_abs_error", q.max}};
      };
      auto by_margin = nlohmann::ordered_json::array(), by_grid = nlohmann::ordered_json::array();
      for (std::size_t m = 0; m < sweep_margin.size(); ++m) {
        nlohmann::ordered_json e = {{"clamp_margin", sweep_margin[m]}, {"smoothing", a.typed.smoothing}};
        e.update(pooled(sweep[m]));
        by_margin.push_back(std::move(e));
      }
      for (std::size_t g = 0; g < grid_k.size(); ++g)
        for (std::size_t m = 0; m < grid_margin.size(); ++m) {
          nlohmann::ordered_json e = {{"smoothing", grid_k[g]}, {"clamp_margin", grid_margin[m]}};
          e.update(pooled(grid[g * grid_margin.size() + m]));
          by_grid.push_back(std::move(e));
        }
      cv["by_clamp_margin"] = by_margin;
      cv["by_smoothing_and_clamp"] = by_grid;
      cv["mean_leaves"] = leaves / nf;
      cv["mean_attributes_in_models"] = attrs / nf;
      cv["mean_seconds"] = secs / nf;
      cv["per_fold"] = folds;
      metrics["cv"] = cv;
      std::printf("=== %d-fold cross-validation on %s%s%s ===\nRMSE %.6g  MAE %.6g  max |error| %.6g  mean leaves %.2f  mean attributes in models %.2f\n",
                  a.cv, data.name().c_str(), a.cv_folds.empty() ? "" : ", folds ", a.cv_folds_text.c_str(), std::sqrt(se / double(n)),
                  ae / double(n), max_err, leaves / nf, attrs / nf);
      if (a.typed.clamp_margin >= 0.0)
        std::printf("(bounded predictions, clamp_margin %g: %lld clamped; unbounded RMSE %.6g  MAE %.6g  max |error| %.6g)\n",
                    a.typed.clamp_margin, static_cast<long long>(clamped), std::sqrt(se_u / double(n)), ae_u / double(n), max_err_u);
      std::printf("\n");
      if (a.cv_only) {
        if (!a.metrics_out.empty()) write_json(a.metrics_out, metrics);
        return 0;
      }
    }

    // Missing values: the training rows' means fill both sides (imputed after --cv, which fills each
    // fold from its own training rows).
    std::vector<double> impute;
    if (data.has_missing()) impute = impute_missing(data, nullptr);
    if (holdout && holdout->has_missing()) {
      if (impute.empty()) impute = impute_missing(data, nullptr);  // no missing in training: just its means
      impute_missing(*holdout, &impute);
    }

    // The model on the full training data (after CV, as Weka does).
    auto e = make_eval();
    // The tree that predicts (smoothed when smoothing > 0: same tests, blended leaf models) and its
    // training scores as it predicts (smoothed, bounded); sizes are the evolved tree's.
    const FittedModel fitted = fit_model(data, impute, a.typed, a.seed, *e, a.backend, !a.quiet);
    const TrainResult& r = fitted.result;
    const Tree& root = fitted.root;
    const PredictionBounds& bounds = fitted.bounds;
    const Scores& s_train = fitted.train;
    std::printf("GMT model tree (%s, backend %s, %d iterations, fitness %s)\n\n%s\n", data.name().c_str(), a.backend.c_str(),
                r.summary.iterations, r.fitness_kind == FitnessKind::bic ? "bic" : "weighted", to_text(root, data).c_str());
    std::printf("=== training data ===\nRMSE %.6g  MAE %.6g  rows %lld  induction %.3f s\n", s_train.rmse, s_train.mae,
                static_cast<long long>(s_train.rows), r.seconds);
    metrics["train"] = scores_json(s_train);
    metrics["leaves"] = count_leaves(root);
    metrics["internal_nodes"] = count_internal(root);
    metrics["attributes_in_models"] = count_model_attributes(r.best.tree);
    metrics["smoothing"] = a.typed.smoothing;
    metrics["iterations"] = r.summary.iterations;
    metrics["stop_reason"] = r.summary.stop_reason;
    metrics["thresholds_centered"] = r.thresholds_centered;
    metrics["evaluations"] = r.summary.evaluations;
    metrics["evaluate_calls"] = r.summary.evaluate_calls;
    metrics["repairs"] = r.summary.repairs;
    metrics["fitness"] = r.best.fitness;
    metrics["induction_seconds"] = r.seconds;
    metrics["breakdown"] = r.timer.to_json();
    metrics["backend_info"] = e->describe();  // (the backend's own counters: calls, graphs, host time outside the phases)
    if (holdout) {
      Scores s;
      test_scores(metrics, root, *holdout, bounds, &s);
      std::printf("=== test data (%s, test_fraction %g) ===\nRMSE %.6g  MAE %.6g  rows %lld\n", holdout->name().c_str(), test_fraction,
                  s.rmse, s.mae, static_cast<long long>(s.rows));
    }
    if (test) {
      if (test->has_missing()) {
        if (impute.empty()) impute = impute_missing(data, nullptr);  // no missing in training: just its means
        impute_missing(*test, &impute);
      }
      Scores s;
      test_scores(metrics, root, *test, bounds, &s);
      std::printf("=== test data (%s) ===\nRMSE %.6g  MAE %.6g  rows %lld\n", test->name().c_str(), s.rmse, s.mae,
                  static_cast<long long>(s.rows));
    }
    const std::string model_path = a.model_out.empty() ? default_model_path("gmt", data.name()) : a.model_out;
    write_json(model_path, fitted.model);
    std::printf("model written to %s\n", model_path.c_str());
    if (!a.metrics_out.empty()) write_json(a.metrics_out, metrics);
    return 0;
  } catch (const std::exception& ex) {
    return report_cli_error(ex);
  }
}

int predict_cli(const std::vector<std::string>& argv, const CliEnv& env) {
  if (wants_help(argv)) {
    std::printf("%s", cli_usage().c_str());
    return 0;
  }
  try {
    Args a = usage_errors([&] { return parse(argv, true); });
    nlohmann::json j = read_json_file(a.model_in, "model file");
    Dataset data = resolve(a.dataset, a.rows, env);
    auto root = model_from_json(j, data, a.model_in);
    const PredictionBounds bounds = model_bounds(j, root, a.model_in);
    std::vector<double> impute = model_imputation(j);
    // Missing values: the model's training means; a model trained without missing values has
    // none stored, then the scored data's own column means are used.
    if (data.has_missing()) impute_missing(data, impute.empty() ? nullptr : &impute);
    const Scores s = score(root, data, 0.0, &bounds);
    std::printf("model %s on %s\nRMSE %.6g  MAE %.6g  rows %lld  leaves %d  attributes in models %d\n", a.model_in.c_str(),
                data.name().c_str(), s.rmse, s.mae, static_cast<long long>(s.rows), count_leaves(root),
                count_model_attributes(root));
    if (!a.predictions_out.empty()) {
      // Built in memory, then the one checked writer (atomic for a file, through for a device or FIFO).
      std::ostringstream o;
      o.precision(9);
      o << "row,actual,predicted\n";
      for (std::size_t r = 0; r < data.rows(); ++r) o << r << ',' << data.target(r) << ',' << predict(root, &bounds, data, r) << '\n';
      write_file_atomic(a.predictions_out, o.str());
    }
    if (!a.metrics_out.empty()) {
      nlohmann::ordered_json m = {{"model", a.model_in}, {"dataset", data.name()}, {"test", scores_json(s)},
                                  {"bounded", bounds.on()}, {"smoothing", j.value("smoothing", 0.0)},
                                  {"leaves", count_leaves(root)}, {"attributes_in_models", count_model_attributes(root)}};
      write_json(a.metrics_out, m);
    }
    return 0;
  } catch (const std::exception& ex) {
    return report_cli_error(ex);
  }
}

}  // namespace gmt
}  // namespace gpudm
