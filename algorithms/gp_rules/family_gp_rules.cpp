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
// seconds per GPop interpolated between the sampled calls (metrics.estimated). metrics.run_seconds
// is the measured median otherwise. The checksum (classifier + fitness trace) is equal across
// backends.
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

// One untimed evaluation (an empty antecedent): loads kernels and sizes buffers.
void warm_up(rules::RuleEvaluator& e) {
  rules::RulePopulation pop;
  pop.add(std::vector<std::uint32_t>{});
  rules::RuleCounts c;
  PhaseTimer t;
  t.set_enabled(false);
  e.evaluate(pop, c, t);
}
// Rule size, terminals included (= GPops per instance).
double mean_nodes(const Classifier& c) {
  double s = 0;
  for (const auto& r : c.rules) s += static_cast<double>(size(r.tree));
  return c.rules.empty() ? 0.0 : s / static_cast<double>(c.rules.size());
}

// What a whole run and a cross-validation report alike: the run's counters, the replay's refusal,
// the engine's launch description, the checksum.
void finish_run(CaseResult& res, const RunStats& stats, const std::string& declined, rules::RuleEvaluator& engine,
                const std::string& checksum) {
  ojson& m = res.metrics;
  const ojson rm = run_metrics(stats);
  for (auto it = rm.begin(); it != rm.end(); ++it) m[it.key()] = it.value();
  if (!declined.empty()) m["replay_declined"] = declined;
  m["estimated"] = false;
  m["run_seconds"] = res.timing.median();
  if (ojson launch = engine.describe(); !launch.empty()) m["engine"] = launch;
  res.checksum = checksum;
  res.checksum_exact = true;
}

// folds = 0: the whole evolutionary run on every row. run_timed_case() times run_once() (the run:
// creation, evolution, classifier); the last timed run keeps its populations (record_every) for
// replays; finish() scores the classifier and writes the recording.
class RunCase final : public TimedCase {
 public:
  RunCase(const CaseContext& ctx, const GpCase& p, const GpParams& gp, std::unique_ptr<rules::RuleEvaluator> engine,
          std::shared_ptr<const Dataset> data, std::string record_path, std::string declined)
      : ctx_(ctx), p_(p), gp_(gp), engine_(std::move(engine)), data_(std::move(data)), record_path_(std::move(record_path)),
        declined_(std::move(declined)) {
    engine_->prepare(*data_);
    warm_up(*engine_);
  }
  void run_once(PhaseTimer& timer) override {
    if (!timer.enabled()) {  // a warm-up run: nothing kept
      RunStats discard;
      train(*data_, gp_, ctx_.seed, *engine_, discard);
      return;
    }
    stats_ = RunStats{};
    if (p_.record_every > 0) {  // the last repetition's populations are kept
      recorder_ = std::make_unique<PopulationRecorder>(p_.record_every);
      stats_.recorder = recorder_.get();
    }
    Stopwatch sw;
    model_ = train(*data_, gp_, ctx_.seed, *engine_, stats_);
    run_wall_ = sw.seconds();
    stats_.recorder = nullptr;
    timer.merge(stats_.phases);
  }
  CaseResult finish(TimingStats timing, PhaseTimer breakdown) override {
    const Dataset& data = *data_;
    CaseResult res;
    res.dataset = describe_dataset(data);
    res.timing = std::move(timing);
    res.breakdown.merge(breakdown);
    ojson& m = res.metrics;
    m["algorithm"] = to_string(gp_.algorithm);
    PhaseTimer untimed;
    const Score sc = score(model_, data, *engine_, untimed);
    m["train_accuracy"] = sc.accuracy();
    m["rules"] = model_.rules.size();
    m["mean_rule_nodes"] = mean_nodes(model_);
    m["classifier"] = to_text(model_, data);
    const std::string checksum = run_checksum(model_, stats_);
    if (recorder_) {
      PopulationSample sample = recorder_->finish();
      sample.dataset = ctx_.dataset;
      sample.algorithm = to_string(gp_.algorithm);
      sample.rows = data.rows();
      sample.classes = static_cast<std::uint64_t>(data.num_classes());
      sample.seed = ctx_.seed;
      sample.population = gp_.population;
      sample.generations = gp_.generations;
      sample.backend = ctx_.backend;
      sample.run_seconds = run_wall_;
      sample.engine_seconds = stats_.engine_call_seconds;
      sample.checksum = checksum;
      if (world().rank() == 0) write_population_sample(record_path_, sample);  // (an MPI run: rank 0 writes)
      m["record_file"] = record_path_;
      res.outputs.push_back(record_path_);
      m["recorded_calls"] = sample.calls.size();
      m["engine_calls"] = sample.gpops.size();
    }
    m["timed_region"] = engine_->capabilities().host() ? "the whole run: creation, evolution, classifier (host wall clock)"
                                                       : "the whole run incl. population uploads and count downloads (host wall clock)";
    finish_run(res, stats_, declined_, *engine_, checksum);
    return res;
  }

 private:
  CaseContext ctx_;
  GpCase p_;
  GpParams gp_;
  std::unique_ptr<rules::RuleEvaluator> engine_;
  std::shared_ptr<const Dataset> data_;
  std::string record_path_, declined_;
  RunStats stats_;
  Classifier model_;
  std::unique_ptr<PopulationRecorder> recorder_;
  double run_wall_ = 0.0;
};

// folds = k: k-fold cross-validation, engines prepared per fold; run_timed_case() times it once as
// a whole; finish() has the pooled test accuracy and the folds.
class CvCase final : public TimedCase {
 public:
  CvCase(const CaseContext& ctx, const GpCase& p, const GpParams& gp, std::function<std::unique_ptr<rules::RuleEvaluator>()> make_engine,
         std::unique_ptr<rules::RuleEvaluator> engine, std::shared_ptr<const Dataset> data, std::string declined)
      : ctx_(ctx), p_(p), gp_(gp), make_engine_(std::move(make_engine)), engine_(std::move(engine)), data_(std::move(data)),
        declined_(std::move(declined)) {}
  void run_once(PhaseTimer& timer) override {
    stats_ = RunStats{};
    cv_ = cross_validate(*data_, gp_, ctx_.seed, p_.folds, make_engine_, stats_);
    timer.merge(stats_.phases);
  }
  CaseResult finish(TimingStats timing, PhaseTimer breakdown) override {
    CaseResult res;
    res.dataset = describe_dataset(*data_);
    res.timing = std::move(timing);
    res.breakdown.merge(breakdown);
    ojson& m = res.metrics;
    m["algorithm"] = to_string(gp_.algorithm);
    m["folds"] = p_.folds;
    m["test_accuracy"] = cv_.test_accuracy();
    m["train_accuracy"] = cv_.mean_train_accuracy();
    m["rules"] = cv_.mean_rules();
    auto per = ojson::array();
    for (const auto& f : cv_.folds) per.push_back({{"train", f.train.accuracy()}, {"test", f.test.accuracy()}, {"rules", f.rules}});
    m["per_fold"] = per;
    std::vector<unsigned char> bytes;
    for (const auto& f : cv_.folds) {
      const std::uint64_t v[2] = {f.test.correct, f.train.correct};
      bytes.insert(bytes.end(), reinterpret_cast<const unsigned char*>(v), reinterpret_cast<const unsigned char*>(v + 2));
    }
    const auto* t = reinterpret_cast<const unsigned char*>(stats_.trace.data());
    bytes.insert(bytes.end(), t, t + stats_.trace.size() * sizeof(double));
    m["timed_region"] = "the whole cross-validation: k runs, engines prepared per fold, scoring (host wall clock)";
    finish_run(res, stats_, declined_, *engine_, checksum_hex(bytes.data(), bytes.size()));
    return res;
  }

 private:
  CaseContext ctx_;
  GpCase p_;
  GpParams gp_;
  std::function<std::unique_ptr<rules::RuleEvaluator>()> make_engine_;
  std::unique_ptr<rules::RuleEvaluator> engine_;
  std::shared_ptr<const Dataset> data_;
  std::string declined_;
  RunStats stats_;
  CvResult cv_;
};

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
    std::shared_ptr<const Dataset> data = ctx.datasets->get(ctx.dataset, ctx.dataset_options);
    GPUDM_REQUIRE(data && data->task() == Task::classification,
                  "gp_rules: dataset '" + ctx.dataset + "' is not a classification dataset");
    GpParams gp = p.gp;
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
          throw MissingInput("gp_rules: no population sample '" + path + "' to replay (run the recording case, record_every > 0, first)", path);
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

    if (p.folds == 0) {
      RunCase c(ctx, p, gp, std::move(engine), data, record_path, declined);
      return run_timed_case(c, ctx.warmup, ctx.repetitions);
    }
    CvCase c(ctx, p, gp, make_engine, std::move(engine), data, declined);
    return run_timed_case(c, 0, 1);  // (a cross-validation is timed once, as a whole)
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
    CaseResult res;
    res.dataset = describe_dataset(data);
    ojson& m = res.metrics;
    m["algorithm"] = to_string(gp.algorithm);
    engine.prepare(data);
    warm_up(engine);
    // The sampled calls as the runner's replay loop (time_replay) sees them: each call's counts
    // checked against the recorded ones off the clock; any prefix of its order is spread over the run.
    struct Replay final : ReplayCase {
      const PopulationSample& s;
      rules::RuleEvaluator& engine;
      PhaseTimer& engine_phases;
      rules::RuleCounts counts;
      std::size_t mismatched = 0;
      double gpops_run = 0.0;  // over every replayed call, warm-ups included (as engine_phases)
      Replay(const PopulationSample& smp, rules::RuleEvaluator& e, PhaseTimer& ph) : s(smp), engine(e), engine_phases(ph) {}
      std::size_t samples() const override { return s.calls.size(); }
      double step(std::size_t i) const override { return static_cast<double>(s.calls[i].call); }
      double work(std::size_t i) const override { return s.gpops[static_cast<std::size_t>(s.calls[i].call)]; }
      void run(std::size_t i, PhaseTimer&) override {
        engine.evaluate(s.calls[i].pop, counts, engine_phases, s.calls[i].want);
        gpops_run += work(i);
      }
      void check(std::size_t i, bool first) override {
        if (first && counts_hash(counts) != s.calls[i].counts_hash) ++mismatched;
      }
    };
    PhaseTimer engine_phases;
    Replay replay(s, engine, engine_phases);
    const ReplayTiming rt = time_replay(replay, s.gpops, s.host_seconds(), ctx.warmup, ctx.repetitions, p.replay_max_seconds,
                                        [](double x) { return world().max(x, "gp_rules: the replay's time cap"); });
    res.timing = rt.timing;
    for (const ReplayRepetition& r : rt.repetitions) {
      res.breakdown.add("evaluation", r.estimate.seconds, PhaseClock::host);
      res.breakdown.add("host (recorded run)", s.host_seconds(), PhaseClock::host);
    }
    const ReplayEstimate& last = rt.repetitions.back().estimate;
    const std::size_t kept = rt.kept.size();
    const std::size_t mismatched = replay.mismatched;
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
    // The engine's interpretation alone over the replayed calls (report.cpp's definition)
    const double kernel_s = engine_phases.seconds("match_count") + engine_phases.seconds("match") +
                            engine_phases.seconds("reduction") + engine_phases.seconds("count");
    m["gpops_per_s_kernel"] = kernel_s > 0 ? replay.gpops_run / kernel_s : 0.0;
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

};

}  // namespace

std::unique_ptr<Family> make_gp_rules_family() { return std::make_unique<GpRulesFamily>(); }

}  // namespace gpudm
