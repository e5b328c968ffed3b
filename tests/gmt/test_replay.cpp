// Batch samples (algorithms/gmt/batch_sample.*): compact trees, with their salts and repair rule,
// survive the file round trip, and the family estimates a backend's induction time by replaying
// the batches a run recorded (batch_sample_every / replay_from), flagged estimated, validated
// against the oracle.
#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>

#include "algorithms/core/family.hpp"
#include "algorithms/gmt/batch_sample.hpp"
#include "algorithms/gmt/ea.hpp"
#include "algorithms/gmt/tree.hpp"
#include "common.hpp"

namespace gpudm {
std::unique_ptr<Family> make_gmt_family();
}

using namespace gpudm;
using namespace gpudm::gmt;

namespace {
std::string temp_file(const std::string& name) {
  return (std::filesystem::temp_directory_path() / ("gpudm_" + std::to_string(::getpid()) + "_" + name)).string();
}
}  // namespace

TEST(GmtBatchSample, TreesSurviveTheRoundTrip) {
  const Dataset d = gmt_test::make_dataset(500, 4, 3, gmt_test::piecewise, 0.1);
  auto seq = gmt_test::registry().create<ModelTreeEvaluator>("gmt", "sequential");
  seq->prepare(d);
  PhaseTimer t;
  GmtParams p;
  p.init_model_attrs = 2;
  GmtEA ea(p, *seq, d, t);
  Rng rng(5);
  std::vector<Tree> trees;
  for (int i = 0; i < 6; ++i) trees.push_back(ea.init_tree(rng));
  // Tree 1 evaluated (statistics and fitted models), then one leaf changed (dirty); tree 2 with
  // hand-made clean models: flags, coefficients and the clean leaves' statistics must survive.
  seq->evaluate(single(trees[1], 3), t);
  for (int i = 0; i < trees[1].size(); ++i)
    if (trees[1].node(i).is_leaf()) {
      trees[1].set_model(i, {0, 3});
      break;
    }
  gmt_test::make_clean(trees[2]);
  const std::string path = temp_file("roundtrip.bin");
  const RepairSpec promote{5, RepairMode::promote}, collapse{3, RepairMode::collapse};
  {
    BatchSampleWriter w(path, "synthetic", d.rows(), d.cols(), 42);
    w.add(7, gmt_test::batch_of(trees, 100, promote));
    std::vector<Tree> two = {trees[0], trees[2]};
    w.add(9, gmt_test::batch_of(two, 200, collapse));
    EXPECT_EQ(w.batches(), 2);
    RecordedRun r;
    r.backend = "sequential";
    r.evaluations = 1234;
    r.iterations = 10;
    r.scale = 2.5;
    r.host_seconds = 0.75;
    w.finish(r);
  }
  const BatchSample s = read_batch_sample(path);
  std::filesystem::remove(path);
  EXPECT_TRUE(s.complete);
  EXPECT_EQ(s.dataset, "synthetic");
  EXPECT_EQ(s.rows, d.rows());
  EXPECT_EQ(s.cols, 4u);
  EXPECT_EQ(s.seed, 42u);
  ASSERT_EQ(s.batches.size(), 2u);
  EXPECT_EQ(s.batches[0].generation, 7);
  EXPECT_EQ(s.batches[1].generation, 9);
  EXPECT_EQ(s.batches[0].repair.min_rows, 5);
  EXPECT_EQ(s.batches[0].repair.mode, RepairMode::promote);
  EXPECT_EQ(s.batches[1].repair.min_rows, 3);
  EXPECT_EQ(s.batches[1].repair.mode, RepairMode::collapse);
  EXPECT_EQ(s.batches[1].salts, (std::vector<std::uint64_t>{200, 201}));
  EXPECT_EQ(s.trees(), 8);
  EXPECT_EQ(s.run.evaluations, 1234);
  EXPECT_EQ(s.run.scale, 2.5);
  EXPECT_EQ(s.run.host_seconds, 0.75);
  for (std::size_t k = 0; k < 6; ++k) {
    SCOPED_TRACE("tree " + std::to_string(k));
    const Tree &a = trees[k], &b = s.batches[0].trees[k];
    EXPECT_EQ(s.batches[0].salts[k], 100 + k);
    EXPECT_EQ(gmt_test::layout_error(b, 4), "");
    EXPECT_TRUE(a.same_model(b));
    ASSERT_EQ(a.size(), b.size());
    for (int i = 0; i < a.size(); ++i) {
      const TreeNode &x = a.node(i), &y = b.node(i);
      EXPECT_EQ(x.parent, y.parent);
      EXPECT_EQ(x.depth, y.depth);
      if (!x.is_leaf()) continue;
      EXPECT_EQ(x.dirty, y.dirty) << "node " << i;
      EXPECT_EQ(x.has_coef, y.has_coef) << "node " << i;
      EXPECT_EQ(a.leaf_needs_refit(i), b.leaf_needs_refit(i)) << "node " << i;
      if (!a.leaf_needs_refit(i)) {  // what a backend may keep for a clean leaf (EvalBatch::clean_sse_known)
        EXPECT_EQ(x.stats.count, y.stats.count) << "node " << i;
        EXPECT_EQ(x.stats.sse, y.stats.sse) << "node " << i;
      }
    }
  }
  EXPECT_TRUE(s.batches[1].trees[1].same_model(trees[2]));
  // The replayed batch: copies of the recorded trees, the salts, the repair rule, clean SSE known;
  // evaluating it gives what evaluating the original trees gives.
  std::vector<Tree> copies;
  const EvalBatch replay = s.batches[0].batch(copies);
  ASSERT_EQ(replay.size(), 6u);
  EXPECT_TRUE(replay.clean_sse_known);
  EXPECT_EQ(replay.repair.min_rows, 5);
  EXPECT_EQ(replay.salts, s.batches[0].salts);
  std::vector<Tree> direct = trees;
  seq->evaluate(replay, t);
  seq->evaluate(gmt_test::batch_of(direct, 100, promote), t);
  for (std::size_t k = 0; k < 6; ++k) {
    EXPECT_TRUE(copies[k].same_model(direct[k])) << "tree " << k;
    ASSERT_EQ(copies[k].size(), direct[k].size());
    for (int i = 0; i < copies[k].size(); ++i) {
      EXPECT_EQ(copies[k].node(i).stats.count, direct[k].node(i).stats.count);
      EXPECT_EQ(copies[k].node(i).stats.sse, direct[k].node(i).stats.sse);
      EXPECT_EQ(copies[k].node(i).stats.dipole_rand, direct[k].node(i).stats.dipole_rand);
    }
  }
  EXPECT_TRUE(s.batches[0].trees[0].same_model(trees[0]));  // batch() evaluated copies, not the sample's trees
  // Two batches of 6 and 2 trees: a cap of 2 trees picks one batch, a large cap both.
  EXPECT_EQ(pick_batches(s, 1000).size(), 2u);
  EXPECT_EQ(pick_batches(s, 2).size(), 1u);
  EXPECT_THROW(read_batch_sample(path), Error);  // removed
}

TEST(GmtBatchSample, FamilyReplaysARecordedRunOnEveryCpuBackend) {
  auto fam = make_gmt_family();
  nlohmann::json params = nlohmann::json::object();
  for (const auto& p : fam->params()) params[p.name] = p.default_value;
  params["iterations"] = 10;
  params["population"] = 12;
  params["batch_sample_file"] = temp_file("{experiment}_{dataset}_{seed}.bin");
  gmt_test::PiecewiseProvider provider(3000);
  auto ctx_for = [&](const std::string& backend, const nlohmann::json& extra, std::uint64_t seed) {
    CaseContext ctx;
    ctx.family = "gmt";
    ctx.experiment_id = "replay_test";
    ctx.backend = backend;
    ctx.dataset = "piecewise";
    ctx.params = params;
    ctx.params.update(extra);
    ctx.seed = seed;
    ctx.warmup = 0;
    ctx.repetitions = 2;
    ctx.registry = &gmt_test::registry();
    ctx.datasets = &provider;
    return ctx;
  };
  // No sample yet: skipped with the reason.
  EXPECT_THROW(fam->run_case(ctx_for("sequential", {{"replay_from", "sample"}}, 5)), Unavailable);
  const CaseResult rec = fam->run_case(ctx_for("sequential", {{"batch_sample_every", 2}}, 5));
  ASSERT_EQ(rec.status, "ok");
  EXPECT_GT(rec.metrics["data_pass_gb_per_s"].get<double>(), 0.0);  // a measured run counts its passes
  EXPECT_GE(rec.metrics["batch_sample_batches"].get<int>(), 4);
  const std::string file = rec.metrics["batch_sample_file"].get<std::string>();
  EXPECT_EQ(file, expand_sample_path(params["batch_sample_file"].get<std::string>(), "replay_test", "piecewise", 5));
  std::string checksum;
  for (const auto& backend : gmt_test::cpu_backends()) {
    const CaseResult r = fam->run_case(ctx_for(backend, {{"replay_from", "sample"}, {"replay_max_evaluations", 8}}, 5));
    ASSERT_EQ(r.status, "ok") << backend;
    EXPECT_TRUE(r.metrics["estimated"].get<bool>());
    EXPECT_NE(r.metrics["estimate_method"].get<std::string>().find("interpolated linearly between the sampled generations"),
              std::string::npos);  // the shared estimator (algorithms/core/replay_estimate.hpp)
    EXPECT_LE(r.metrics["replayed_evaluations"].get<long long>(), 12);  // whole batches (<= population) up to the cap
    EXPECT_EQ(r.metrics["recorded_evaluations"].get<long long>(), rec.metrics["evaluations"].get<long long>());
    EXPECT_TRUE(r.validation["passed"].get<bool>()) << r.validation.dump();
    ASSERT_EQ(r.timing.samples.size(), 2u);
    EXPECT_GT(r.timing.median(), 0.0);
    EXPECT_GT(r.breakdown.seconds("cpu_ea"), 0.0);
    EXPECT_GT(r.breakdown.seconds("calc_models"), 0.0);
    // A replay's phase seconds are scaled to the run, its call counts are the sample's: no
    // per-call pass rate, only the per-evaluation one.
    EXPECT_FALSE(r.metrics.contains("data_pass_gb_per_s")) << backend;
    EXPECT_GT(r.metrics["data_pass_effective_gb_per_s"].get<double>(), 0.0) << backend;
    if (checksum.empty()) checksum = r.checksum;
    EXPECT_EQ(r.checksum, checksum) << backend;
  }
  // A time cap stops after the first piece (here 3 trees of the middle batch).
  const CaseResult capped = fam->run_case(ctx_for(
      "sequential", {{"replay_from", "sample"}, {"replay_batch_trees", 3}, {"replay_max_seconds", 1e-9}}, 5));
  ASSERT_EQ(capped.status, "ok");
  EXPECT_GE(capped.metrics["replayed_evaluations"].get<long long>(), 1);
  EXPECT_LE(capped.metrics["replayed_evaluations"].get<long long>(), 3);
  EXPECT_EQ(capped.metrics["replayed_batches"].get<long long>(), 1);
  EXPECT_EQ(capped.timing.samples.size(), 2u);
  EXPECT_TRUE(capped.validation["passed"].get<bool>());
  // A sample recorded with another seed does not belong to this case.
  EXPECT_THROW(fam->run_case(ctx_for("sequential", {{"replay_from", file}}, 6)), Error);
  std::filesystem::remove(file);
}
