// The "gmt" family for the experiment runner: one case = train GMT with one backend on one
// dataset (warm-up + timed repetitions of the whole induction), report the six-procedure
// breakdown, tree quality and a checksum of the final tree (equal across CPU backends).
#include <algorithm>
#include <cmath>
#include <filesystem>
#include <memory>

#include "algorithms/core/family.hpp"
#include "algorithms/core/replay_estimate.hpp"
#include "algorithms/core/progress.hpp"
#include "algorithms/core/stopwatch.hpp"
#include "algorithms/gmt/sharded_evaluator.hpp"
#include "algorithms/gmt/batch_sample.hpp"
#include "algorithms/gmt/cli.hpp"
#include "algorithms/gmt/params.hpp"
#include "algorithms/gmt/train.hpp"

namespace gpudm {

namespace {

using namespace gmt;

// The evaluator's phases (the paper's six procedures and the transfers), seconds in `t`.
double evaluator_seconds(const PhaseTimer& t) {
  double s = 0.0;
  for (const char* ph : {"flattening", "redistribute", "separate", "repair", "reorganize", "calc_models", "estimate_errors",
                         "exact_solver", "reduction", "transfers"})
    s += t.seconds(ph);
  return s;
}
long long phase_calls(const PhaseTimer& t, const char* name) {
  for (const auto& p : t.phases())
    if (p.name == name) return p.calls;
  return 0;
}

// Per-evaluation time and the achieved bandwidth of the data passes (results' metrics).
void add_pass_metrics(CaseResult& res, const Dataset& train, std::int64_t evaluations) {
  const double reps = std::max<std::size_t>(1, res.timing.samples.size());
  const PhaseTimer& b = res.breakdown;
  const double ev = evaluator_seconds(b) / reps;
  res.metrics["evaluator_seconds"] = ev;
  res.metrics["seconds_per_evaluation"] = evaluations > 0 ? ev / double(evaluations) : 0.0;
  const double pass_bytes = double(train.rows()) * double(train.cols() + 1) * sizeof(float);
  const double passes = double(phase_calls(b, "redistribute") + phase_calls(b, "separate") + phase_calls(b, "estimate_errors")) / reps;
  const double pass_s = (b.seconds("redistribute") + b.seconds("separate") + b.seconds("estimate_errors")) / reps;
  // An estimated run's phase seconds are scaled to the whole run while its call counts are the
  // sample's, so its passes per call are unknown: only the per-evaluation rate below is reported.
  const bool estimated = res.metrics.contains("estimated") && res.metrics["estimated"].is_boolean() && res.metrics["estimated"].get<bool>();
  if (!estimated) {
    res.metrics["data_passes"] = passes;
    res.metrics["data_pass_bytes"] = passes * pass_bytes;
    res.metrics["data_pass_gb_per_s"] = pass_s > 0 ? passes * pass_bytes / pass_s * 1e-9 : 0.0;
  }
  // Per tree: every evaluation needs the three passes; the fast path serves a generation's trees
  // with one pass each, so its effective rate can exceed the memory's.
  res.metrics["data_pass_effective_gb_per_s"] = pass_s > 0 ? 3.0 * double(evaluations) / reps * pass_bytes / pass_s * 1e-9 : 0.0;
  res.metrics["data_pass_definition"] =
      "one pass = the training features and targets read once (rows x (cols + 1) x 4 bytes); one pass per call of "
      "redistribute, separate and estimate_errors (per generation on the CUDA fast path, for all its trees; per "
      "individual otherwise), over the time of those three phases; effective: three passes per evaluated individual";
}

// replay_from: the case's time estimated from a recorded run's sampled batches.
CaseResult replay_case(const CaseContext& ctx, CaseResult res, const Dataset& train, ModelTreeEvaluator& eval,
                       const std::string& path, std::int64_t max_evaluations, double max_seconds, std::int64_t piece_size) {
  if (!std::filesystem::exists(path))
    throw MissingInput("gmt: no batch sample '" + path + "' to replay (run the recording case, batch_sample_every > 0, first)", path);
  const BatchSample s = read_batch_sample(path);
  GPUDM_REQUIRE(s.complete, "gmt: batch sample '" + path + "' has no summary (the recording run did not finish)");
  GPUDM_REQUIRE(s.rows == train.rows() && s.cols == train.cols() && s.seed == ctx.seed,
                "gmt: batch sample '" + path + "' was recorded on " + std::to_string(s.rows) + " x " + std::to_string(s.cols) +
                    " rows (seed " + std::to_string(s.seed) + "), this case has " + std::to_string(train.rows()) + " x " +
                    std::to_string(train.cols()) + " (seed " + std::to_string(ctx.seed) + ")");
  GPUDM_REQUIRE(!s.batches.empty(), "gmt: batch sample '" + path + "' holds no batches (fewer generations than batch_sample_every?)");
  // Whole sampled batches spread over the run (pick_batches), whole or cut into pieces of at most
  // piece_size trees (so a time cap can stop within one large batch of a slow backend); the
  // replay loop takes them in an order whose every prefix is spread over the run.
  struct Piece {
    SampledBatch trees;   // a slice of a sampled batch (salts and repair rule along)
    std::size_t batch;
    std::vector<Tree> copies;  // evaluation edits trees: each pass evaluates fresh copies
    EvalBatch fresh() { return trees.batch(copies); }
  };
  std::vector<Piece> pieces;
  for (std::size_t i : pick_batches(s, max_evaluations)) {
    const SampledBatch& b = s.batches[i];
    const std::size_t step = piece_size > 0 ? std::min(b.size(), static_cast<std::size_t>(piece_size)) : b.size();  // (0: whole batches)
    for (std::size_t k = 0; k < b.size(); k += step) {
      Piece p{{}, i, {}};
      p.trees.generation = b.generation;
      p.trees.repair = b.repair;
      for (std::size_t t = k; t < std::min(b.size(), k + step); ++t) {
        p.trees.trees.push_back(b.trees[t]);
        p.trees.salts.push_back(b.salts[t]);
      }
      pieces.push_back(std::move(p));
    }
  }
  PhaseTimer prep;
  { auto sc = prep.scope(prepare_phase(eval)); eval.prepare(train); }
  // The pieces as the runner's replay loop (time_replay) sees them; a piece's step is its batch's
  // generation. Copies of a piece's trees are made off the clock.
  std::string counts;  // node counts of the first piece's trees (after their repairs): equal on every backend
  struct Replay final : ReplayCase {
    std::vector<Piece>& pieces;
    ModelTreeEvaluator& eval;
    std::string& counts;
    double last_step;
    EvalBatch current;
    Replay(std::vector<Piece>& p, ModelTreeEvaluator& e, std::string& c, double last) : pieces(p), eval(e), counts(c), last_step(last) {}
    std::size_t samples() const override { return pieces.size(); }
    double step(std::size_t i) const override { return std::min<double>(pieces[i].trees.generation, last_step); }
    double work(std::size_t i) const override { return double(pieces[i].trees.size()); }
    void set_up(std::size_t i) override { current = pieces[i].fresh(); }
    void run(std::size_t, PhaseTimer& t) override { eval.evaluate(current, t); }
    void check(std::size_t i, bool first) override {
      if (!first || i != 0) return;
      for (const Tree* t : current.trees)
        for (const TreeNode& n : t->nodes()) counts += std::to_string(n.stats.count) + ",";
    }
  };
  // The shared estimator (algorithms/core/replay_estimate.hpp) over the run's generations 0 ..
  // iterations; the sample records no per-generation counts, so each generation's evaluations are
  // the run's mean (x the run's own extrapolation, if any).
  const double total_evals = double(s.run.evaluations) * s.run.scale;
  const std::vector<double> work(static_cast<std::size_t>(std::max(0, s.run.iterations)) + 1,
                                 total_evals / double(std::max(0, s.run.iterations) + 1));
  const double host = s.run.host_seconds * s.run.scale;
  Replay replay(pieces, eval, counts, double(work.size() - 1));
  const ReplayTiming rt = time_replay(replay, work, host, ctx.warmup, ctx.repetitions, max_seconds,
                                      [](double x) { return world().max(x, "gmt: the replay's time cap"); });
  res.timing = rt.timing;
  for (const ReplayRepetition& r : rt.repetitions) {
    const double factor = r.replay_seconds > 0 ? r.estimate.seconds / r.replay_seconds : 0.0;  // the replay's phase split, scaled to the estimate
    for (const auto& ph : r.phases.phases()) res.breakdown.add(ph.name, ph.seconds * factor, ph.clock);
    res.breakdown.add("cpu_ea", host, PhaseClock::host);
  }
  const ReplayEstimate& last = rt.repetitions.back().estimate;
  std::int64_t replayed = 0;
  std::vector<std::size_t> sources;
  for (std::size_t k : rt.kept) {
    replayed += static_cast<std::int64_t>(pieces[k].trees.size());
    if (std::find(sources.begin(), sources.end(), pieces[k].batch) == sources.end()) sources.push_back(pieces[k].batch);
  }
  for (const auto& ph : prep.phases()) res.breakdown.add(ph.name, ph.seconds * double(res.timing.samples.size()), ph.clock);
  res.metrics["estimated"] = true;
  res.metrics["estimate_method"] =
      replay_estimate_method(s.run.backend, "generation", "evaluations", last, work.size()) +
      " (each generation's evaluations: the run's mean; " + std::to_string(replayed) + " trees of " + std::to_string(sources.size()) +
      " of its " + std::to_string(s.batches.size()) + " sampled generation batches" +
      (s.run.scale != 1.0 ? "; x " + std::to_string(s.run.scale) + ", the run's own extrapolation" : std::string()) +
      "; host time: the run's cpu_ea)";
  res.metrics["replayed_evaluations"] = replayed;
  res.metrics["replayed_batches"] = sources.size();
  // The sample's density: the share of the run's generations replayed (>= 1 % and >= 100 of them,
  // or the time cap's stated budget, is what the estimator's error was checked at:
  // results/<gpu>/estimator_check.md)
  res.metrics["replayed_generation_share"] = double(sources.size()) / double(work.size());
  res.metrics["recorded_backend"] = s.run.backend;
  res.metrics["recorded_evaluations"] = s.run.evaluations;
  res.metrics["recorded_iterations"] = s.run.iterations;
  res.metrics["estimated_for_iterations"] = static_cast<long long>(std::llround(double(s.run.iterations) * s.run.scale));
  res.metrics["recorded_host_seconds"] = host;
  res.metrics["evaluations"] = static_cast<long long>(std::llround(total_evals));
  res.metrics["batch_sample_file"] = path;
  add_pass_metrics(res, train, static_cast<std::int64_t>(std::llround(total_evals)));
  res.metrics["backend_info"] = eval.describe();
  // Validation: the first replayed tree on the reference backend (the oracle).
  {
    const std::string reference = ctx.registry->reference("gmt");
    auto ref = ctx.registry->create<ModelTreeEvaluator>("gmt", reference);
    ref->configure(eval.options());
    ref->prepare(train);
    PhaseTimer scratch, scratch_ref;  // one each: a host and a device backend time 'transfers' on different clocks
    const SampledBatch& first = pieces[rt.kept.front()].trees;
    Tree ta = first.trees.front(), tb = first.trees.front();
    EvalBatch ba = single(ta, first.salts.front(), first.repair), bb = single(tb, first.salts.front(), first.repair);
    ba.clean_sse_known = bb.clean_sse_known = true;
    ref->evaluate(ba, scratch_ref);
    eval.evaluate(bb, scratch);
    const double sa = ta.node(0).stats.sse, sb = tb.node(0).stats.sse;
    const double err = std::fabs(sa - sb) / std::max(1e-300, std::fabs(sa));
    bool same_counts = ta.size() == tb.size();
    for (int i = 0; same_counts && i < ta.size(); ++i) same_counts = ta.node(i).stats.count == tb.node(i).stats.count;
    res.validation = {{"reference_backend", reference},
                      {"quantity", "relative difference of the first replayed tree's SSE (node counts must be equal)"},
                      {"max_error", err},
                      {"tolerance", eval.sse_tolerance()},
                      {"passed", same_counts && err <= eval.sse_tolerance()}};
  }
  res.checksum = checksum_hex(counts.data(), counts.size());  // node counts of the first replayed piece: equal on every backend
  return res;
}

// One GMT induction as the runner times it: the data split and the evaluator made in the
// constructor; run_timed_case() times run_once() (the evaluator prepared with the training set and
// the whole EA); the last timed run records its sampled batches (batch_sample_every) for replays;
// finish() has the extrapolation (estimate_above_rows: the paper's footnote a), the tree's quality
// and the validation.
class GmtTimedCase final : public TimedCase {
 public:
  explicit GmtTimedCase(const CaseContext& ctx) : ctx_(ctx) {
    GPUDM_REQUIRE(ctx.datasets != nullptr && ctx.registry != nullptr, "gmt: the runner gave no dataset provider or registry");
    CaseResult& res = res_;
    auto full = ctx.datasets->get(ctx.dataset, ctx.dataset_options);
    GPUDM_REQUIRE(full != nullptr, "gmt: dataset '" + ctx.dataset + "' could not be loaded");
    GPUDM_REQUIRE(full->task() == Task::regression,
                  "gmt: dataset '" + ctx.dataset + "' is a classification dataset; GMT needs a regression target");
    res.dataset = describe_dataset(*full);
    c_ = read_case(ctx.params);
    const GmtCase& c = c_;

    const double test_fraction = c.test_fraction;
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
    train_ = train_ds;
    test_ = test_ds;
    const Dataset& train = *train_ds;
    p_ = ea_params(c, train.rows());
    GmtParams& p = p_;
    p.seed = ctx.seed;
    // Large sets: run estimate_iterations and scale the time to the configured iterations.
    int& extrapolate = extrapolate_;
    extrapolate = c.extrapolate_iterations;
    if (c.estimate_above_rows > 0 && static_cast<long long>(train.rows()) > c.estimate_above_rows) {
      const int few = c.estimate_iterations;
      if (few < p.iterations) {
        extrapolate = std::max(extrapolate, p.iterations);
        p.iterations = few;
      }
    }
    if (ctx.smoke) p.iterations = std::min(p.iterations, 20);
    const long long chunks = (static_cast<long long>(train.rows()) + c.eval.chunk_rows - 1) / std::max(1, c.eval.chunk_rows);
    eval_ = across_ranks(ctx.registry->create<ModelTreeEvaluator>("gmt", ctx.backend), c.eval.rank_split, chunks);  // (MPI ranks)
    eval_->configure(c.eval);

    // {dataset} names the dataset and its options (Fig. 18 runs one dataset with several options).
    const std::string dataset_tag = sample_dataset_tag(ctx.dataset, ctx.dataset_options);
    sample_file_ = expand_sample_path(c.batch_sample_file, ctx.experiment_id, dataset_tag, ctx.seed);
    replay_ = c.replay_from == "sample" ? sample_file_ : expand_sample_path(c.replay_from, ctx.experiment_id, dataset_tag, ctx.seed);
    // batch_sample_every: the last run records its sampled batches and, below, its totals. The
    // run keeps copies of the sampled batches' trees (~0.1 ms a sample) and the file is written
    // after the timed runs: serialising and writing them as they come (a few hundred KB to a few MB
    // a sample) inside the timed run measured 0.3-1.2 s of a 10,000-iteration GPU run (Table 3:
    // its wall time minus its phases), time the induction itself does not spend. The file
    // is opened first, so a path that cannot be written fails before the runs.
    if (c.batch_sample_every > 0 && replay_.empty() && world().rank() == 0)  // (rank 0 of an MPI run writes the file: the ranks' runs are identical)
      writer_ = std::make_unique<BatchSampleWriter>(sample_file_, ctx.dataset, train.rows(), train.cols(), ctx.seed);
  }

  // replay_from: this case's time is estimated from a recorded run instead (replay_case).
  const std::string& replay_path() const { return replay_; }
  CaseResult replay() {
    return replay_case(ctx_, std::move(res_), *train_, *eval_, replay_, c_.replay_max_evaluations, c_.replay_max_seconds,
                       c_.replay_batch_trees);
  }

  void set_up() override { ++call_; }
  void run_once(PhaseTimer&) override {
    const CaseContext& ctx = ctx_;
    const GmtParams& p = p_;
    const Dataset& train = *train_;
    const bool timed = call_ > ctx.warmup;
    const bool record = writer_ != nullptr && call_ == ctx.warmup + std::max(1, ctx.repetitions);  // (the last timed run)
    Stopwatch sw;
    PhaseTimer t;
    { auto s = t.scope(prepare_phase(*eval_)); eval_->prepare(train); }
    GmtEA ea(p, *eval_, train, t);
    if (record) {
      sampled_.clear();
      ea.set_batch_observer([&, every = c_.batch_sample_every](int generation, const EvalBatch& batch) {
        if (generation < 1 || generation % every != 0) return;
        SampledBatch b;
        b.generation = generation;
        b.repair = batch.repair;
        b.salts = batch.salts;
        b.trees.reserve(batch.size());
        for (const Tree* tree : batch.trees) b.trees.push_back(*tree);
        sampled_.push_back(std::move(b));
      });
    }
    Progress bar("gmt " + ctx.dataset + " [" + ctx.backend + "] run " + std::to_string(call_), p.iterations, "it");
    best_ = ea.run([&](int it, const Individual&) { bar.set(it); });
    bar.finish();
    summary_ = ea.summary();
    if (timed) {
      breakdown_.merge(t);
      loop_seconds_.push_back(summary_.loop_seconds);
      loop_iterations_.push_back(summary_.iterations);
    }
    if (record) {
      last_timer_ = t;
      last_seconds_ = sw.seconds();
    }
  }

  CaseResult finish(TimingStats timing, PhaseTimer) override {
    const CaseContext& ctx = ctx_;
    const GmtParams& p = p_;
    const Dataset& train = *train_;
    const int extrapolate = extrapolate_;
    const RunSummary& summary = summary_;
    Individual& best = best_;
    const std::shared_ptr<const Dataset>& test_ds = test_;
    auto& eval = eval_;
    CaseResult res = std::move(res_);
    res.timing = std::move(timing);
    res.breakdown = std::move(breakdown_);
    std::vector<double>& loop_seconds = loop_seconds_;
    std::vector<int>& loop_iterations = loop_iterations_;
    // Extrapolation for baselines that would take hours (flagged as estimated, as the paper's footnote a).
    bool estimated = false;
    if (extrapolate > summary.iterations && summary.iterations > 0) {
      // Only the iterations scale: the set-up (upload, initial population and its evaluation) is
      // paid once whatever the iteration count (scaling it too would inflate large sets' estimates:
      // Armchair 10M's set-up is seconds).
      // Per sample its own run's iterations (a run cut by max_seconds or a stall ran fewer) and
      // the slowest rank's loop time, as the sample is the slowest rank's (the same number of
      // collectives on every rank: the runs are identical).
      GPUDM_REQUIRE(loop_seconds.size() == res.timing.samples.size(), "gmt: a loop time per timed run (internal error)");
      std::vector<double> measured = res.timing.samples, setup, loops;
      for (std::size_t i = 0; i < res.timing.samples.size(); ++i) {
        const double f = double(extrapolate) / double(std::max(1, loop_iterations[i]));
        const double loop = std::min(world().max(loop_seconds[i], "gmt: the iterations' time"), measured[i]);
        setup.push_back(measured[i] - loop);
        loops.push_back(loop);
        res.timing.samples[i] = setup.back() + f * loop;
      }
      res.metrics["estimate_measured_seconds"] = measured;  // per sample: the timed run as it ran
      res.metrics["estimate_setup_seconds"] = setup;        // per sample: counted once
      res.metrics["estimate_loop_seconds"] = loops;         // per sample: its iterations, scaled to the target
      estimated = true;
      res.metrics["estimated_from_iterations"] = summary.iterations;
      res.metrics["estimated_for_iterations"] = extrapolate;
      res.metrics["estimate_method"] = "the first " + std::to_string(summary.iterations) +
                                       " iterations timed and their time scaled to " + std::to_string(extrapolate) +
                                       ", the set-up (upload, initial population) counted once (the paper's footnote a)";
    }
    res.metrics["estimated"] = estimated;
    if (writer_) {
      for (const SampledBatch& b : sampled_) writer_->add(b);
      sampled_.clear();
      RecordedRun r;
      r.backend = ctx.backend;
      r.evaluations = summary.evaluations;
      r.iterations = summary.iterations;
      r.scale = estimated ? double(extrapolate) / double(summary.iterations) : 1.0;
      r.host_seconds = last_timer_.seconds("cpu_ea");
      r.run_seconds = last_seconds_;
      r.evaluator_seconds = evaluator_seconds(last_timer_);
      writer_->finish(r);
      res.metrics["batch_sample_file"] = sample_file_;
      res.outputs.push_back(sample_file_);
      res.metrics["batch_sample_batches"] = writer_->batches();
    }

    res.metrics["thresholds_centered"] = center_thresholds(best.tree, train);  // partition unchanged
    const Tree& root = best.tree;
    const Scores st = score(root, train);
    res.metrics["train_rmse"] = st.rmse;
    res.metrics["train_mae"] = st.mae;
    if (test_ds) {
      // gross errors: |error| > 10 x the training RMSE (a row routed to the wrong leaf model)
      const double gross = 10.0 * st.rmse;
      const PredictionBounds bounds = prediction_bounds(root, train, c_.clamp_margin);
      const Scores sv = score(prediction_tree(root, train, c_.smoothing, c_.eval), *test_ds, gross, &bounds);
      res.metrics["test_rmse"] = sv.rmse;
      res.metrics["test_mae"] = sv.mae;
      res.metrics["test_max_abs_error"] = sv.max_abs_error;
      res.metrics["test_clamped"] = sv.clamped;
      res.metrics["clamp_margin"] = c_.clamp_margin;
      res.metrics["smoothing"] = c_.smoothing;
      res.metrics["test_gross_errors"] = sv.gross;
      res.metrics["test_gross_threshold"] = gross;
      res.metrics["test_rmse_without_gross"] = sv.rmse_without_gross;
      // The papers' GMT predicts with the tree as the search found it: no smoothing, no bounds.
      // Scored beside the defaults so a paper's test error is compared with its own design.
      const Scores sr = score(root, *test_ds, gross);
      res.metrics["test_rmse_as_found"] = sr.rmse;
      res.metrics["test_gross_errors_as_found"] = sr.gross;
      res.metrics["test_rmse_as_found_without_gross"] = sr.rmse_without_gross;
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
    res.metrics["evaluate_calls"] = summary.evaluate_calls;
    res.metrics["repairs"] = summary.repairs;
    add_pass_metrics(res, train, summary.evaluations);
    const double med = res.timing.median();
    // Rows routed through a tree per second (evaluations x training rows / induction time).
    res.metrics["instances_per_s"] =
        med > 0 ? double(summary.evaluations) * double(train.rows()) / (estimated ? med / (double(extrapolate) / summary.iterations) : med) : 0.0;

    // Validation: the final tree re-evaluated from scratch by the reference backend and by this backend.
    {
      const std::string reference = ctx.registry->reference("gmt");
      auto ref = ctx.registry->create<ModelTreeEvaluator>("gmt", reference);
      ref->configure(eval->options());
      res.metrics["backend_info"] = eval->describe();  // the run's counters, before prepare() resets them
      ref->prepare(train);
      eval->prepare(train);
      Tree ta = root, tb = root;
      ta.mark_dirty(0);
      tb.mark_dirty(0);
      PhaseTimer scratch, scratch_ref;  // one each: a host and a device backend time 'transfers' on different clocks
      ref->evaluate(single(ta, 7), scratch_ref);
      eval->evaluate(single(tb, 7), scratch);
      const double sa = ta.node(0).stats.sse, sb = tb.node(0).stats.sse;
      const double err = std::fabs(sa - sb) / std::max(1e-300, std::fabs(sa));
      const double tol = eval->sse_tolerance();
      res.validation = {{"reference_backend", reference},
                        {"quantity", "relative difference of the final tree's SSE, re-evaluated from scratch"},
                        {"max_error", err},
                        {"tolerance", tol},
                        {"passed", err <= tol}};
    }
    const std::string model = to_json(root, train).dump();
    res.checksum = checksum_hex(model.data(), model.size());
    return res;
  }

 private:
  CaseContext ctx_;
  GmtCase c_;
  GmtParams p_;
  CaseResult res_;
  std::shared_ptr<const Dataset> train_, test_;
  int extrapolate_ = 0;
  std::unique_ptr<ModelTreeEvaluator> eval_;
  std::string sample_file_, replay_;
  std::unique_ptr<BatchSampleWriter> writer_;
  int call_ = 0;  // runs so far, warm-ups included
  std::vector<SampledBatch> sampled_;
  Individual best_;
  RunSummary summary_;
  PhaseTimer breakdown_, last_timer_;
  double last_seconds_ = 0.0;
  std::vector<double> loop_seconds_;  // per timed run: its iterations' share of the sample (this rank's clock)
  std::vector<int> loop_iterations_;  // per timed run: the iterations it ran
};

class GmtFamily final : public Family {
 public:
  std::string name() const override { return "gmt"; }
  std::string description() const override {
    return "GMT evolutionary model trees (Jurczuk, Czajkowski, Kretowski, ASOC 119 (2022) 108503)";
  }
  std::vector<ParamSpec> params() const override { return gmt::params_table().specs(); }

  std::string split_across_ranks() const override {
    return "rank_split (auto: rows on the sequential and OpenMP backends when the data has a row chunk a rank, else individuals): rows = each rank a block of "
           "whole row chunks of every tree, leaf counts / small leaves' rows / TSQR R factors / error partials combined (CUDA fast path: each GPU a block of "
           "whole merge groups, leaf counts / keys / small leaves' rows / the groups' statistics combined); "
           "individuals = each rank a block of every generation's trees on all rows, the evaluated trees gathered (either "
           "way bit-identical to one process)";
  }
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
    GmtTimedCase c(ctx);
    if (!c.replay_path().empty()) return c.replay();  // (the runner's replay loop: time_replay)
    return run_timed_case(c, ctx.warmup, ctx.repetitions);
  }
};

}  // namespace

std::unique_ptr<Family> make_gmt_family() { return std::make_unique<GmtFamily>(); }

}  // namespace gpudm
