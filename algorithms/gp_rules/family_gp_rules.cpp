// The "gp_rules" family for the runner: one case = one GP classification algorithm (Falco, Tan
// or Bojarczuk; Cano, Zafra, Ventura 2012) on one dataset with one engine backend:
//   folds = 0: the whole evolutionary run on every row (timed: warm-up + repetitions), its
//     phase breakdown (the paper's Table 1 names), train accuracy of the classifier;
//   folds = k: k-fold cross-validation (timed as a whole), pooled test accuracy (the table
//     renderer joins scikit-learn's decision tree on the same folds: configs/gp_accuracy.json).
// Host backends may stop early (cpu_gpops_budget) and extrapolate the whole-run time linearly
// in evaluations (metrics.estimated, metrics.run_seconds); metrics.run_seconds is the measured
// median otherwise. The checksum (classifier + fitness trace) is equal across backends.
#include <cmath>
#include <memory>

#include "algorithms/core/family.hpp"
#include "algorithms/core/stopwatch.hpp"
#include "algorithms/gp_rules/cli.hpp"
#include "algorithms/gp_rules/cv.hpp"
#include "algorithms/gp_rules/params.hpp"
#include "algorithms/gp_rules/report.hpp"

namespace gpudm {

namespace {

using namespace gp_rules;

class GpRulesFamily final : public Family {
 public:
  std::string name() const override { return "gp_rules"; }
  std::string description() const override {
    return "GP classification rules (Falco, Tan, Bojarczuk) evolved on the shared rule engine, whose batched "
           "population evaluation runs on the chosen backend (Cano, Zafra, Ventura, Soft Computing 16 (2012))";
  }
  std::vector<ParamSpec> params() const override { return case_params().specs(); }
  std::vector<FamilyCommand> commands() const override { return gp_rules::commands(); }

  CaseResult run_case(const CaseContext& ctx) override {
    GPUDM_REQUIRE(ctx.datasets != nullptr && ctx.registry != nullptr, "gp_rules: run_case needs datasets and a registry");
    const GpCase p = case_params().read(ctx.params);
    // The backend first: an unavailable one is skipped before any dataset is built.
    const auto make_engine = [&] {
      auto e = ctx.registry->create<rules::RuleEvaluator>("gp_rules", ctx.backend);
      e->configure(p.engine);
      return e;
    };
    auto engine = make_engine();
    const Capabilities caps = engine->capabilities();
    std::shared_ptr<const Dataset> data = ctx.datasets->get(ctx.dataset, ctx.dataset_options);
    GPUDM_REQUIRE(data && data->task() == Task::classification,
                  "gp_rules: dataset '" + ctx.dataset + "' is not a classification dataset");
    GpParams gp = p.gp;
    gp.gpops_budget = caps.host() ? p.cpu_gpops_budget : 0.0;

    CaseResult res;
    res.dataset = describe_dataset(*data);
    ojson& m = res.metrics;
    m["algorithm"] = to_string(gp.algorithm);
    RunStats stats;
    Classifier model;
    std::string checksum;
    if (p.folds == 0) {
      engine->prepare(*data);
      warm_up(*engine);
      for (int i = 0; i < ctx.warmup; ++i) {
        RunStats discard;
        train(*data, gp, ctx.seed, *engine, discard);
      }
      res.timing = measure(0, std::max(1, ctx.repetitions), [&] {
        stats = RunStats{};
        model = train(*data, gp, ctx.seed, *engine, stats);
        res.breakdown.merge(stats.phases);
      });
      res.timing.warmup = ctx.warmup;
      PhaseTimer untimed;
      const Score s = score(model, *data, *engine, untimed);
      m["train_accuracy"] = s.accuracy();
      m["rules"] = model.rules.size();
      m["mean_rule_nodes"] = mean_nodes(model);
      m["classifier"] = to_text(model, *data);
      checksum = run_checksum(model, stats);
      m["timed_region"] = caps.host() ? "the whole run: creation, evolution, classifier (host wall clock)"
                                      : "the whole run incl. population uploads and count downloads (host wall clock)";
    } else {
      CvResult cv;
      res.timing = measure(0, 1, [&] {
        stats = RunStats{};
        cv = cross_validate(*data, gp, ctx.seed, p.folds, make_engine, stats);
        res.breakdown.merge(stats.phases);
      });
      m["folds"] = p.folds;
      m["test_accuracy"] = cv.test_accuracy();
      m["train_accuracy"] = cv.mean_train_accuracy();
      m["rules"] = cv.mean_rules();
      auto per = ojson::array();
      for (const auto& f : cv.folds) per.push_back({{"train", f.train.accuracy()}, {"test", f.test.accuracy()}, {"rules", f.rules}});
      m["per_fold"] = per;
      std::vector<unsigned char> bytes;
      for (const auto& f : cv.folds) {
        const std::uint64_t v[2] = {f.test.correct, f.train.correct};
        bytes.insert(bytes.end(), reinterpret_cast<const unsigned char*>(v), reinterpret_cast<const unsigned char*>(v + 2));
      }
      const auto* t = reinterpret_cast<const unsigned char*>(stats.trace.data());
      bytes.insert(bytes.end(), t, t + stats.trace.size() * sizeof(double));
      checksum = checksum_hex(bytes.data(), bytes.size());
      m["timed_region"] = "the whole cross-validation: k runs, engines prepared per fold, scoring (host wall clock)";
    }
    const ojson rm = run_metrics(stats);
    for (auto it = rm.begin(); it != rm.end(); ++it) m[it.key()] = it.value();
    const double median = res.timing.median();
    m["estimated"] = stats.truncated;
    m["run_seconds"] = stats.truncated && stats.evaluations > 0
                           ? median * static_cast<double>(stats.planned_evaluations) / static_cast<double>(stats.evaluations)
                           : median;
    if (stats.truncated)
      m["estimate_method"] = "run stopped after " + std::to_string(stats.evaluations) + " of " +
                             std::to_string(stats.planned_evaluations) +
                             " planned population evaluations (cpu_gpops_budget); whole-run time = measured time x "
                             "planned / done (every evaluation assumed as long as the measured ones)";
    if (ojson launch = engine->describe(); !launch.empty()) m["engine"] = launch;
    res.checksum = checksum;
    res.checksum_exact = !stats.truncated;
    return res;
  }

 private:
  // One untimed evaluation (an empty antecedent): loads kernels and sizes buffers.
  static void warm_up(rules::RuleEvaluator& e) {
    rules::RulePopulation pop;
    pop.add(std::vector<std::uint32_t>{});
    rules::RuleCounts c;
    PhaseTimer t;
    t.set_enabled(false);
    e.evaluate(pop, c, t);
  }
  // Rule size, terminals included (= GPops per instance).
  static double mean_nodes(const Classifier& c) {
    double s = 0;
    for (const auto& r : c.rules) s += static_cast<double>(size(r.tree));
    return c.rules.empty() ? 0.0 : s / static_cast<double>(c.rules.size());
  }
};

}  // namespace

std::unique_ptr<Family> make_gp_rules_family() { return std::make_unique<GpRulesFamily>(); }

}  // namespace gpudm
