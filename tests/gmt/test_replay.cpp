// Batch samples (algorithms/gmt/batch_sample.*): flattened trees survive the file round trip, and
// the family estimates a backend's induction time by replaying the batches a run recorded
// (batch_sample_every / replay_from), flagged estimated, validated against the oracle.
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
  PhaseTimer t;
  GmtParams p;
  p.init_model_attrs = 2;
  GmtEA ea(p, *seq, d, t);
  Rng rng(5);
  std::vector<std::unique_ptr<Node>> roots;
  std::vector<FlatTree> flats(6);
  std::vector<const FlatTree*> ptrs;
  for (int i = 0; i < 6; ++i) {
    roots.push_back(ea.init_tree(rng));
    flatten(roots.back().get(), 4, 100 + static_cast<std::uint64_t>(i), flats[static_cast<std::size_t>(i)]);
    ptrs.push_back(&flats[static_cast<std::size_t>(i)]);
  }
  FlatTree& keep = flats[2];  // a tree whose leaves keep their models: coefficients must survive
  for (int l = 0; l < keep.n_leaves(); ++l) {
    keep.refit[static_cast<std::size_t>(l)] = 0;
    for (int c = 0; c < 4; ++c)
      if (keep.mask[static_cast<std::size_t>(l * 4 + c)]) keep.coef[static_cast<std::size_t>(l * 5 + 1 + c)] = 0.5 + c;
    keep.coef[static_cast<std::size_t>(l * 5)] = -1.25 * l;
  }
  const std::string path = temp_file("roundtrip.bin");
  {
    BatchSampleWriter w(path, "synthetic", d.rows(), d.cols(), 42);
    w.add(7, ptrs);
    w.add(9, {ptrs[0], ptrs[2]});
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
  EXPECT_EQ(s.generation, (std::vector<int>{7, 9}));
  EXPECT_EQ(s.trees(), 8);
  EXPECT_EQ(s.run.evaluations, 1234);
  EXPECT_EQ(s.run.scale, 2.5);
  EXPECT_EQ(s.run.host_seconds, 0.75);
  for (std::size_t k = 0; k < 6; ++k) {
    const FlatTree &a = flats[k], &b = s.batches[0][k];
    EXPECT_EQ(a.levels, b.levels);
    EXPECT_EQ(a.salt, b.salt);
    EXPECT_EQ(a.attr, b.attr);
    EXPECT_EQ(a.threshold, b.threshold);
    EXPECT_EQ(a.leaf_slot, b.leaf_slot);
    EXPECT_EQ(a.leaf_node, b.leaf_node);
    EXPECT_EQ(a.refit, b.refit);
    EXPECT_EQ(a.mask, b.mask);
    EXPECT_EQ(a.coef, b.coef);
  }
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
  EXPECT_GE(rec.metrics["batch_sample_batches"].get<int>(), 4);
  const std::string file = rec.metrics["batch_sample_file"].get<std::string>();
  EXPECT_EQ(file, expand_sample_path(params["batch_sample_file"].get<std::string>(), "replay_test", "piecewise", 5));
  std::string checksum;
  for (const auto& backend : gmt_test::cpu_backends()) {
    const CaseResult r = fam->run_case(ctx_for(backend, {{"replay_from", "sample"}, {"replay_max_evaluations", 8}}, 5));
    ASSERT_EQ(r.status, "ok") << backend;
    EXPECT_TRUE(r.metrics["estimated"].get<bool>());
    EXPECT_FALSE(r.metrics["estimate_method"].get<std::string>().empty());
    EXPECT_LE(r.metrics["replayed_evaluations"].get<long long>(), 12);  // whole batches (<= population) up to the cap
    EXPECT_EQ(r.metrics["recorded_evaluations"].get<long long>(), rec.metrics["evaluations"].get<long long>());
    EXPECT_TRUE(r.validation["passed"].get<bool>()) << r.validation.dump();
    ASSERT_EQ(r.timing.samples.size(), 2u);
    EXPECT_GT(r.timing.median(), 0.0);
    EXPECT_GT(r.breakdown.seconds("cpu_ea"), 0.0);
    EXPECT_GT(r.breakdown.seconds("calc_models"), 0.0);
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
