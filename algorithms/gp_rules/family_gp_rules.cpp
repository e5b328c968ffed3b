// The "gp_rules" family for the runner: one case = one GP classification algorithm (Falco, Tan
// or Bojarczuk; Cano, Zafra, Ventura 2012) on one dataset with one engine backend:
//   folds = 0: the whole evolutionary run on every row (timed: warm-up + repetitions), its
//     phase breakdown (the paper's Table 1 names), train accuracy of the classifier;
//   folds = k: k-fold cross-validation (timed as a whole), pooled test accuracy (the table
//     renderer joins scikit-learn's decision tree on the same folds: configs/gp_accuracy.json).
// Host backends too slow for a whole run replay the populations a recording run kept
// (record_every on the GPU case, replay_from on the host case; pop_sample.hpp and
// algorithms/core/replay_estimate.hpp): their counts are checked against the recorded ones and
// the whole-run time is the recorded host time + the run's GPops per engine call x this backend's
// seconds per GPop interpolated between the sampled calls (metrics.estimated). The older linear
// extrapolation from the run's first evaluations (cpu_gpops_budget) remains selectable; it is
// biased when rules change size over the run. metrics.run_seconds is the measured median
// otherwise. The checksum (classifier + fitness trace) is equal across backends.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <memory>

#include "algorithms/rules/sharded.hpp"
#include "algorithms/core/family.hpp"
#include "algorithms/core/replay_estimate.hpp"
#include "algorithms/core/stopwatch.hpp"
#include "algorithms/gp_rules/cli.hpp"
#include "algorithms/gp_rules/cv.hpp"
#include "algorithms/gp_rules/params.hpp"
#include "algorithms/gp_rules/pop_sample.hpp"
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
  std::string split_across_ranks() const override {
    return "rows: each rank's rule engine evaluates its block of the rows, counts summed over the ranks (exact), coverage gathered";
  }

  CaseResult run_case(const CaseContext& ctx) override {
    GPUDM_REQUIRE(ctx.datasets != nullptr && ctx.registry != nullptr, "gp_rules: run_case needs datasets and a registry");
    const GpCase p = case_params().read(ctx.params);
    // The backend first: an unavailable one is skipped before any dataset is built.
    const auto make_engine = [&] {  // (split over the ranks of an MPI run)
      auto e = rules::across_ranks(ctx.registry->create<rules::RuleEvaluator>("gp_rules", ctx.backend));
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
    std::string declined;  // why a replay_from case runs in full
    const std::string record_path =
        expand_sample_pattern(p.record_file, ctx.experiment_id, sample_dataset_tag(ctx.dataset, ctx.dataset_options), ctx.seed,
                              {{"{algorithm}", to_string(gp.algorithm)},
                               {"{population}", std::to_string(gp.population)},
                               {"{generations}", std::to_string(gp.generations)}});
    if (!p.replay_from.empty()) {
      GPUDM_REQUIRE(p.folds == 0, "gp_rules: replay_from estimates a whole run (folds = 0), not a cross-validation");
      const std::string path = p.replay_from == "sample"
                                   ? record_path
                                   : expand_sample_pattern(p.replay_from, ctx.experiment_id,
                                                           sample_dataset_tag(ctx.dataset, ctx.dataset_options), ctx.seed,
                                                           {{"{algorithm}", to_string(gp.algorithm)},
                                                            {"{population}", std::to_string(gp.population)},
                                                            {"{generations}", std::to_string(gp.generations)}});
      if (!std::filesystem::exists(path)) {
        // A smoke run without the recording backend (no GPU) runs its tiny cases in full.
        if (!ctx.smoke)
          throw Unavailable("gp_rules: no population sample '" + path + "' to replay (run the recording case, record_every > 0, first)");
        declined = "no population sample (the recording case did not run; a smoke run): run in full and measured";
      } else {
        PopulationSample sample = read_population_sample(path);
        double recorded = 0.0;
        for (double g : sample.gpops) recorded += g;
        if (recorded > p.replay_above_gpops) return replay_case(ctx, *data, gp, p, *engine, path, std::move(sample));
        declined = "the recorded run evaluated " + fmt_g(recorded) + " GPops (replay_above_gpops " + fmt_g(p.replay_above_gpops) +
                   "): run in full and measured";
      }
    }

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
      std::unique_ptr<PopulationRecorder> recorder;
      double run_wall = 0.0;
      TimedRepetitions timed = time_repetitions(ctx.warmup, ctx.repetitions, [&](PhaseTimer& timer) {
        if (!timer.enabled()) {  // a warm-up run: nothing kept
          RunStats discard;
          train(*data, gp, ctx.seed, *engine, discard);
          return;
        }
        stats = RunStats{};
        if (p.record_every > 0) {  // the last repetition's populations are kept
          recorder = std::make_unique<PopulationRecorder>(p.record_every);
          stats.recorder = recorder.get();
        }
        Stopwatch sw;
        model = train(*data, gp, ctx.seed, *engine, stats);
        run_wall = sw.seconds();
        stats.recorder = nullptr;
        timer.merge(stats.phases);
      });
      res.timing = std::move(timed.timing);
      res.breakdown.merge(timed.breakdown);
      PhaseTimer untimed;
      const Score s = score(model, *data, *engine, untimed);
      m["train_accuracy"] = s.accuracy();
      m["rules"] = model.rules.size();
      m["mean_rule_nodes"] = mean_nodes(model);
      m["classifier"] = to_text(model, *data);
      checksum = run_checksum(model, stats);
      if (recorder) {
        PopulationSample sample = recorder->finish();
        sample.dataset = ctx.dataset;
        sample.algorithm = to_string(gp.algorithm);
        sample.rows = data->rows();
        sample.classes = static_cast<std::uint64_t>(data->num_classes());
        sample.seed = ctx.seed;
        sample.population = gp.population;
        sample.generations = gp.generations;
        sample.backend = ctx.backend;
        sample.run_seconds = run_wall;
        sample.engine_seconds = stats.engine_call_seconds;
        sample.checksum = checksum;
        if (world().rank() == 0) write_population_sample(record_path, sample);  // (an MPI run: rank 0 writes)
        m["record_file"] = record_path;
        m["recorded_calls"] = sample.calls.size();
        m["engine_calls"] = sample.gpops.size();
      }
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
    if (!declined.empty()) m["replay_declined"] = declined;
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
  // replay_from: the sampled populations of a recorded run re-evaluated on this backend.
  static std::string fmt_g(double v) {
    char b[32];
    std::snprintf(b, sizeof b, "%.3g", v);
    return b;
  }
  CaseResult replay_case(const CaseContext& ctx, const Dataset& data, const GpParams& gp, const GpCase& p,
                         rules::RuleEvaluator& engine, const std::string& path, const PopulationSample s) {
    GPUDM_REQUIRE(s.rows == data.rows() && s.classes == static_cast<std::uint64_t>(data.num_classes()) && s.seed == ctx.seed &&
                      s.algorithm == to_string(gp.algorithm) && s.population == gp.population && s.generations == gp.generations,
                  "gp_rules: population sample '" + path + "' was recorded for " + s.algorithm + " (population " +
                      std::to_string(s.population) + ", " + std::to_string(s.generations) + " generations) on " +
                      std::to_string(s.rows) + " rows, " + std::to_string(s.classes) + " classes, seed " + std::to_string(s.seed) +
                      "; this case is " + to_string(gp.algorithm) + " (population " + std::to_string(gp.population) + ", " +
                      std::to_string(gp.generations) + " generations) on " + std::to_string(data.rows()) + " rows, " +
                      std::to_string(data.num_classes()) + " classes, seed " + std::to_string(ctx.seed));
    GPUDM_REQUIRE(!s.calls.empty() && !s.gpops.empty(), "gp_rules: population sample '" + path + "' holds no engine call");
    // Replay order: any prefix is spread over the run, so a time cap keeps calls from its start,
    // middle and end.
    const std::vector<std::size_t> order = spread_order(s.calls.size());
    CaseResult res;
    res.dataset = describe_dataset(data);
    ojson& m = res.metrics;
    m["algorithm"] = to_string(gp.algorithm);
    engine.prepare(data);
    warm_up(engine);
    PhaseTimer engine_phases;
    rules::RuleCounts counts;
    std::size_t mismatched = 0;
    auto pass = [&](std::size_t n, double cap, bool check) {
      std::vector<double> sec;
      double total = 0.0;
      for (std::size_t k = 0; k < n; ++k) {
        const SampledCall& c = s.calls[order[k]];
        Stopwatch sw;
        engine.evaluate(c.pop, counts, engine_phases, c.want);
        sec.push_back(sw.seconds());
        total += sec.back();
        if (check && counts_hash(counts) != c.counts_hash) ++mismatched;
        if (cap > 0 && world().max(total, "gp_rules: the replay's time cap") >= cap) break;  // (an MPI run's ranks agree)
      }
      return sec;
    };
    std::vector<double> first = pass(order.size(), p.replay_max_seconds, true);
    const std::size_t kept = first.size();
    auto estimate = [&](const std::vector<double>& sec) {
      std::vector<ReplayPoint> pts;
      for (std::size_t k = 0; k < sec.size(); ++k) {
        const SampledCall& c = s.calls[order[k]];
        pts.push_back({static_cast<double>(c.call), s.gpops[static_cast<std::size_t>(c.call)], sec[k]});
      }
      return replay_estimate(s.gpops, pts);
    };
    res.timing = TimingStats{};
    res.timing.warmup = ctx.warmup;
    ReplayEstimate last;
    auto add = [&](const std::vector<double>& sec) {
      last = estimate(sec);
      res.timing.samples.push_back(s.host_seconds() + last.seconds);
      res.breakdown.add("evaluation", last.seconds, PhaseClock::host);
      res.breakdown.add("host (recorded run)", s.host_seconds(), PhaseClock::host);
    };
    if (ctx.warmup == 0) add(first);
    for (int i = 1; i < ctx.warmup; ++i) pass(kept, 0, false);
    while (static_cast<int>(res.timing.samples.size()) < std::max(1, ctx.repetitions)) add(pass(kept, 0, false));
    const double median = res.timing.median();
    m["estimated"] = true;
    m["estimate_method"] = replay_estimate_method(s.backend, "engine call", "GPops", last, s.gpops.size()) +
                           "; the recorded run's host time (its wall time less its engine calls) added; replayed counts equal to "
                           "the recorded ones";
    m["run_seconds"] = median;
    m["replayed_calls"] = kept;
    m["recorded_calls"] = s.calls.size();
    m["recorded_backend"] = s.backend;
    m["engine_calls"] = s.gpops.size();
    m["recorded_run_seconds"] = s.run_seconds;
    m["recorded_host_seconds"] = s.host_seconds();
    m["gpops"] = last.work;
    m["gpops_per_s_evaluation"] = last.seconds > 0 ? last.work / last.seconds : 0.0;
    m["evaluation_seconds"] = last.seconds;
    m["evaluation_share"] = median > 0 ? last.seconds / median : 0.0;  // of the last repetition's estimate
    m["gpops_definition"] = rules::kGpopsDefinition;
    m["terminals_counted"] = true;
    m["record_file"] = path;
    m["engine_phases"] = engine_phases.to_json();
    if (ojson launch = engine.describe(); !launch.empty()) m["engine"] = launch;
    res.validation = {{"reference_backend", s.backend},
                      {"quantity", "counts of the replayed engine calls against the recording run's (hash of every count)"},
                      {"max_error", mismatched},
                      {"tolerance", 0},
                      {"passed", mismatched == 0}};
    res.checksum = s.checksum;  // the recorded run's; the replay reproduced its counts
    res.checksum_exact = false;
    return res;
  }

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
