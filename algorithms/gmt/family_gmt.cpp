// The "gmt" family for the experiment runner: one case = train GMT with one backend on one
// dataset (warm-up + timed repetitions of the whole induction), report the six-procedure
// breakdown, tree quality and a checksum of the final tree (equal across CPU backends).
#include <cmath>
#include <memory>

#include "algorithms/core/family.hpp"
#include "algorithms/core/progress.hpp"
#include "algorithms/gmt/cli.hpp"
#include "algorithms/gmt/train.hpp"

namespace gpudm {

namespace {

class GmtFamily final : public Family {
 public:
  std::string name() const override { return "gmt"; }
  std::string description() const override {
    return "GMT evolutionary model trees (Jurczuk, Czajkowski, Kretowski, ASOC 119 (2022) 108503)";
  }
  std::vector<ParamSpec> params() const override { return gmt::param_specs(); }

  std::vector<FamilyCommand> commands() const override {
    FamilyCommand train;
    train.trigger = "--train";
    train.data_task = "regression";
    train.usage = "--train gmt --dataset NAME [--test NAME | --cv K] [...]   induce a model tree (--train gmt --help)";
    train.run = [](const std::vector<std::string>& args, CommandEnv& env) {
      return gmt::train_cli(args, gmt::CliEnv{env.registry, env.datasets});
    };
    FamilyCommand predict;
    predict.trigger = "--predict";
    predict.usage = "--predict GMT_MODEL.json --dataset NAME   score a GMT model tree";
    predict.model_format = gmt::kModelFormat;
    predict.data_task = "regression";
    predict.run = [](const std::vector<std::string>& args, CommandEnv& env) {
      return gmt::predict_cli(args, gmt::CliEnv{env.registry, env.datasets});
    };
    return {train, predict};
  }

  CaseResult run_case(const CaseContext& ctx) override {
    using namespace gmt;
    GPUDM_REQUIRE(ctx.datasets != nullptr && ctx.registry != nullptr, "gmt: the runner gave no dataset provider or registry");
    CaseResult res;
    auto full = ctx.datasets->get(ctx.dataset, ctx.dataset_options);
    GPUDM_REQUIRE(full != nullptr, "gmt: dataset '" + ctx.dataset + "' could not be loaded");
    GPUDM_REQUIRE(full->task() == Task::regression,
                  "gmt: dataset '" + ctx.dataset + "' is a classification dataset; GMT needs a regression target");
    res.dataset = describe_dataset(*full);

    const double test_fraction = ctx.params.value("test_fraction", 0.0);
    std::shared_ptr<const Dataset> train_ds = full, test_ds;
    if (test_fraction > 0.0) {
      auto tr = std::make_shared<Dataset>(), te = std::make_shared<Dataset>();
      holdout_split(*full, test_fraction, ctx.seed, tr.get(), te.get());
      if (tr->has_missing() || te->has_missing()) {
        const auto v = impute_missing(*tr, nullptr);
        impute_missing(*te, &v);
      }
      train_ds = tr;
      test_ds = te;
      res.dataset["train_rows"] = tr->rows();
      res.dataset["test_rows"] = te->rows();
    } else if (full->has_missing()) {
      auto tr = std::make_shared<Dataset>(*full);
      impute_missing(*tr, nullptr);
      train_ds = tr;
    }
    if (train_ds->has_missing()) res.dataset["missing_values"] = "replaced by the training mean";
    const Dataset& train = *train_ds;
    GmtParams p = params_from_json(ctx.params, train.rows());
    p.seed = ctx.seed;
    if (ctx.smoke) p.iterations = std::min(p.iterations, 20);
    auto eval = ctx.registry->create<ModelTreeEvaluator>("gmt", ctx.backend);
    eval->configure(eval_options_from_json(ctx.params));

    Individual best;
    RunSummary summary;
    int call = 0;
    res.timing = measure(ctx.warmup, ctx.repetitions, [&] {
      const bool timed = call++ >= ctx.warmup;
      PhaseTimer t;
      { auto s = t.scope("transfers"); eval->prepare(train); }
      GmtEA ea(p, *eval, train, t);
      Progress bar("gmt " + ctx.dataset + " [" + ctx.backend + "] run " + std::to_string(call), p.iterations, "it");
      best = ea.run([&](int it, const Individual&) { bar.set(it); });
      bar.finish();
      summary = ea.summary();
      if (timed) res.breakdown.merge(t);
    });

    // Extrapolation for baselines that would take hours (flagged as estimated, as the paper's footnote a).
    const int extrapolate = ctx.params.value("extrapolate_iterations", 0);
    bool estimated = false;
    if (extrapolate > summary.iterations && summary.iterations > 0) {
      const double f = double(extrapolate) / double(summary.iterations);
      for (double& s : res.timing.samples) s *= f;
      estimated = true;
      res.metrics["estimated_from_iterations"] = summary.iterations;
      res.metrics["estimated_for_iterations"] = extrapolate;
    }
    res.metrics["estimated"] = estimated;

    res.metrics["thresholds_centered"] = center_thresholds(best.root.get(), train);  // partition unchanged
    const Node* root = best.root.get();
    const Scores st = score(root, train);
    res.metrics["train_rmse"] = st.rmse;
    res.metrics["train_mae"] = st.mae;
    if (test_ds) {
      // gross errors: |error| > 10 x the training RMSE (a row routed to the wrong leaf model)
      const double gross = 10.0 * st.rmse;
      const Scores sv = score(root, *test_ds, gross);
      res.metrics["test_rmse"] = sv.rmse;
      res.metrics["test_mae"] = sv.mae;
      res.metrics["test_gross_errors"] = sv.gross;
      res.metrics["test_gross_threshold"] = gross;
      res.metrics["test_rmse_without_gross"] = sv.rmse_without_gross;
    }
    res.metrics["leaves"] = count_leaves(root);
    res.metrics["internal_nodes"] = count_internal(root);
    res.metrics["attributes_in_models"] = count_model_attributes(root);
    res.metrics["fitness_kind"] = p.fitness.kind == FitnessKind::bic ? "bic" : "weighted";
    res.metrics["fitness"] = best.fitness;
    res.metrics["iterations"] = summary.iterations;
    res.metrics["best_found_at"] = summary.best_found_at;
    res.metrics["stop_reason"] = summary.stop_reason;
    res.metrics["evaluations"] = summary.evaluations;
    const double med = res.timing.median();
    // Rows routed through a tree per second (evaluations x training rows / induction time).
    res.metrics["instances_per_s"] =
        med > 0 ? double(summary.evaluations) * double(train.rows()) / (estimated ? med / (double(extrapolate) / summary.iterations) : med) : 0.0;

    // Validation: the final tree re-evaluated from scratch by the sequential oracle and by this backend.
    {
      auto ref = ctx.registry->create<ModelTreeEvaluator>("gmt", "sequential");
      ref->configure(eval->options());
      ref->prepare(train);
      eval->prepare(train);
      auto again = root->clone();
      mark_subtree_dirty(again.get());
      FlatTree f;
      flatten(again.get(), static_cast<int>(train.cols()), 7, f);
      std::vector<EvalOutput> a, b;
      PhaseTimer scratch;
      ref->evaluate({&f}, a, scratch);
      eval->evaluate({&f}, b, scratch);
      const double sa = a[0].nodes[0].sse, sb = b[0].nodes[0].sse;
      const double err = std::fabs(sa - sb) / std::max(1e-300, std::fabs(sa));
      res.validation = {{"reference_backend", "sequential"},
                        {"quantity", "relative difference of the final tree's SSE, re-evaluated from scratch"},
                        {"max_error", err},
                        {"tolerance", 1e-9},
                        {"passed", err <= 1e-9}};
    }
    const std::string model = to_json(root, train).dump();
    res.checksum = checksum_hex(model.data(), model.size());
    return res;
  }
};

}  // namespace

std::unique_ptr<Family> make_gmt_family() { return std::make_unique<GmtFamily>(); }

}  // namespace gpudm
