// The CUDA GMT evaluator against the sequential oracle (ctest label gpu; every test skips with
// the registry's reason where no GPU is usable). Populations of compact trees (initial EA trees,
// some keeping given leaf models) on every shared regression dataset found through
// GPUDM_DATA_DIR, generated Armchair (with noise attributes) and shape surrogates: identical node
// counts, dipoles (lo / hi / random row), repairs and rank decisions; coefficients within 1e-8 x
// the leaf's largest (1e-6 for the fast path on real data: see kRealCoefTol), SSE within 1e-8
// relative (+ 1e-12 x sum y^2); SAE on the faithful path (the fast path does not compute it).
// Both paths (fast: graphs on and off, bit-identical repeats; faithful: double, and float with
// its own tolerance), repairs folded into the call (trees with small leaves, clean leaves known
// from an earlier evaluation), trees deeper than 20 levels and with 500+ leaves, models wider than
// the batched solver, quirks (empty leaves, fewer rows than columns, constant columns, NaN
// routing), the out-of-memory message, same seed same run, and the family end to end (batch
// samples recorded on the GPU, replayed on the CPU and the faithful path).
#include <gtest/gtest.h>

#include <array>

#include <cstdlib>

#include <cmath>
#include <filesystem>
#include <iostream>
#include <memory>

#include "algorithms/core/family.hpp"
#include "algorithms/core/rng.hpp"
#include "algorithms/gmt/batch_sample.hpp"
#include "algorithms/gmt/ea.hpp"
#include "algorithms/gmt/train.hpp"
#include "algorithms/gmt/tree.hpp"
#include "common.hpp"
#include "datasets/catalog.hpp"

namespace gpudm {
std::unique_ptr<Family> make_gmt_family();
}

using namespace gpudm;
using namespace gpudm::gmt;

namespace {

constexpr double kCoefTol = 1e-8, kErrTol = 1e-8;
// Real data: correlated attributes bring pivots of the fast path's centred Gram down towards
// fast_pivot_guard (1e-6 of the column's centred norm^2); with the Gram's rounding (~1e-14 to
// 1e-12 relative per entry) the coefficients then agree to ~1e-8 typically and ~1e-6 at worst.
// SSE is second order in the coefficients' error and keeps 1e-8.
constexpr double kRealCoefTol = 1e-6;

#define GMT_REQUIRE_CUDA()                                                                          \
  do {                                                                                              \
    const BackendInfo& info_ = gmt_test::registry().info("gmt", "cuda");                            \
    if (!info_.available) GTEST_SKIP() << "gmt/cuda: " << info_.reason;                             \
  } while (0)

std::unique_ptr<ModelTreeEvaluator> make(const std::string& backend, const EvalOptions& o) {
  auto e = gmt_test::registry().create<ModelTreeEvaluator>("gmt", backend);
  e->configure(o);
  return e;
}

EvalOptions fast_options(bool graphs = true) {
  EvalOptions o;
  o.gpu_path = EvalOptions::GpuPath::kFast;
  o.cuda_graphs = graphs;
  return o;
}
EvalOptions faithful_options(EvalOptions::GpuPrecision p = EvalOptions::GpuPrecision::kDouble) {
  EvalOptions o;
  o.gpu_path = EvalOptions::GpuPath::kFaithful;
  o.gpu_precision = p;
  return o;
}

// A batch's trees, salts, repair rule and whether clean leaves' SSE is known.
struct Batch {
  std::vector<Tree> trees;
  std::vector<std::uint64_t> salts;
  RepairSpec repair;
  bool clean_sse_known = false;
};

// Initial EA trees (dipolar tests on subsamples) and two trees whose leaves keep given models.
Batch population(const Dataset& d, int trees, int depth, double model_attrs, std::uint64_t seed) {
  Batch b;
  PhaseTimer t;
  auto seq = make("sequential", EvalOptions{});
  GmtParams gp;
  gp.init_max_depth = depth;
  gp.init_model_attrs = model_attrs;
  gp.max_depth = std::max(depth, 12);
  GmtEA ea(gp, *seq, d, t);
  Rng rng(seed);
  for (int i = 0; i < trees; ++i) {
    b.trees.push_back(ea.init_tree(rng));
    b.salts.push_back(seed * 100 + static_cast<std::uint64_t>(i));
  }
  for (int i : {1, trees - 2}) {
    if (i < 0 || i >= trees) continue;
    Tree& tr = b.trees[static_cast<std::size_t>(i)];
    int l = 0;
    for (int n = 0; n < tr.size(); ++n) {
      if (!tr.node(n).is_leaf()) continue;
      const auto a = tr.attrs(n);
      std::vector<double> c;
      for (std::size_t k = 0; k <= a.size(); ++k) c.push_back(0.25 * static_cast<double>(k + 1) - 0.5 * l);
      tr.set_fit(n, std::vector<int>(a.begin(), a.end()), c, -1);
      ++l;
    }
  }
  return b;
}

double sum_y2(const Dataset& d) {
  double s = 0;
  for (std::size_t r = 0; r < d.rows(); ++r) s += double(d.target(r)) * d.target(r);
  return s;
}

// Evaluates copies of the batch's trees (stats poisoned first: the evaluator must rewrite them).
std::vector<Tree> run(ModelTreeEvaluator& e, const Dataset& d, const Batch& in, bool prepare = true,
                      PhaseTimer* phases = nullptr) {
  if (prepare) e.prepare(d);
  std::vector<Tree> trees = in.trees;
  EvalBatch b;
  for (Tree& t : trees) {
    for (int i = 0; i < t.size(); ++i) {
      NodeStats& s = t.node(i).stats;
      if (in.clean_sse_known && t.node(i).is_leaf() && !t.leaf_needs_refit(i)) continue;  // a known clean leaf keeps its stats
      s.count = -7;
      s.sse = s.sae = std::nan("");
      s.dipole_lo = s.dipole_hi = s.dipole_rand = 123456789;
    }
    b.trees.push_back(&t);
  }
  b.salts = in.salts;
  b.repair = in.repair;
  b.clean_sse_known = in.clean_sse_known;
  PhaseTimer t;
  e.evaluate(b, t);
  if (phases) *phases = t;
  return trees;
}

// got == want: the same shapes (repairs), integers exactly, floats within the tolerances
// (err_tol relative + 1e-4 x err_tol x sum y^2), SAE only where the backend computes it.
void expect_equivalent(const Dataset& d, const std::vector<Tree>& got, const std::vector<Tree>& want, double coef_tol,
                       double err_tol, const std::string& what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  const double tss = sum_y2(d);
  for (std::size_t k = 0; k < want.size(); ++k) {
    SCOPED_TRACE(what + ", tree " + std::to_string(k));
    const Tree &g = got[k], &w = want[k];
    ASSERT_EQ(g.size(), w.size()) << "repairs differ";
    for (int i = 0; i < w.size(); ++i) {
      const TreeNode &gn = g.node(i), &wn = w.node(i);
      ASSERT_EQ(gn.attr, wn.attr) << "node " << i;
      ASSERT_EQ(gn.is_leaf() ? 0.0f : gn.threshold, wn.is_leaf() ? 0.0f : wn.threshold) << "node " << i;
      const NodeStats &a = gn.stats, &e = wn.stats;
      EXPECT_EQ(a.count, e.count) << "node " << i;
      EXPECT_EQ(a.dipole_lo, e.dipole_lo) << "node " << i;
      EXPECT_EQ(a.dipole_hi, e.dipole_hi) << "node " << i;
      EXPECT_EQ(a.dipole_rand, e.dipole_rand) << "node " << i;
      EXPECT_NEAR(a.sse, e.sse, err_tol * (std::fabs(e.sse) + 1e-4 * tss)) << "node " << i;
      if (!std::isnan(a.sae)) {
        EXPECT_NEAR(a.sae, e.sae, err_tol * (std::fabs(e.sae) + 1e-4 * std::sqrt(tss))) << "node " << i;
      }
      if (!wn.is_leaf()) continue;
      EXPECT_EQ(gn.rank, wn.rank) << "leaf " << i;
      EXPECT_EQ(gn.dirty, wn.dirty) << "leaf " << i;
      const auto ga = g.attrs(i), wa = w.attrs(i);
      ASSERT_EQ(std::vector<int>(ga.begin(), ga.end()), std::vector<int>(wa.begin(), wa.end())) << "leaf " << i << " kept attributes";
      const auto gc = g.coef(i), wc = w.coef(i);
      ASSERT_EQ(gc.size(), wc.size()) << "leaf " << i;
      double scale = 1e-300;
      for (double c : wc) scale = std::max(scale, std::fabs(c));
      for (std::size_t j = 0; j < wc.size(); ++j) EXPECT_NEAR(gc[j], wc[j], coef_tol * scale) << "leaf " << i << " coef " << j;
    }
  }
}

struct Named {
  std::string name;
  Dataset data;
};

// The shared regression datasets that GPUDM_DATA_DIR holds, Armchair (2 and 2 + 4 noise
// attributes) and the Year / Suzy' shape surrogates (20,000 rows each).
std::vector<Named> datasets_for_agreement() {
  std::vector<Named> out;
  datasets::CatalogProvider provider;
  const std::pair<const char*, nlohmann::json> specs[] = {
      {"pol", nlohmann::json::object()},           {"elevators", nlohmann::json::object()},
      {"cal_housing", nlohmann::json::object()},   {"house16h", nlohmann::json::object()},
      {"house8l", nlohmann::json::object()},       {"2dplanes", nlohmann::json::object()},
      {"fried", nlohmann::json::object()},         {"mv", nlohmann::json::object()},
      {"elnino", nlohmann::json::object()},        {"armchair", {{"rows", 30000}}},
      {"armchair", {{"rows", 20000}, {"noise_attributes", 4}}},
      {"year_prediction_msd", {{"rows", 20000}}},  {"susy_regression", {{"rows", 20000}}}};
  for (const auto& [name, opts] : specs) {
    try {
      auto d = provider.get(name, opts);
      Dataset copy = *d;
      if (copy.has_missing()) impute_missing(copy, nullptr);
      out.push_back({std::string(name) + opts.dump(), std::move(copy)});
    } catch (const Error& e) {
      std::cerr << "[ skipped  ] dataset " << name << ": " << e.what() << "\n";
    }
  }
  return out;
}

// Armchair 50,000 rows (narrow models) and the Year-shaped surrogate, 30,000 rows (wide ones).
std::vector<Named> armchair_and_year() {
  datasets::CatalogProvider provider;
  std::vector<Named> sets;
  sets.push_back({"armchair", *provider.get("armchair", {{"rows", 50000}})});
  sets.push_back({"year-shaped", *provider.get("year_prediction_msd", {{"rows", 30000}})});
  return sets;
}

// armchair_and_year() and 16 attributes with models of ~11 values: leaves on both sides of the
// shared-memory solve's 12 values
std::vector<Named> armchair_year_and_16_attributes() {
  std::vector<Named> sets = armchair_and_year();
  sets.push_back({"16 attributes", gmt_test::make_dataset(20000, 16, 29, gmt_test::piecewise, 0.1)});
  return sets;
}

// A left-deep chain of `levels` levels (x1 <= 9.5, <= 9.1, ...) with linear leaves.
Tree chain(int levels, int attrs) {
  std::vector<int> m;
  for (int a = 0; a < attrs; ++a) m.push_back(a);
  Tree t = Tree::leaf({1});
  for (int l = levels - 2; l >= 0; --l) t = Tree::join(0, 9.5f - 0.4f * static_cast<float>(l), t, Tree::leaf(m));
  return t;
}
// A full tree of `levels` levels with random tests.
Tree full(int levels, int cols, Rng& rng) {
  if (levels <= 1) {
    std::vector<int> m;
    for (int a = 0; a < cols; ++a)
      if (rng.bernoulli(0.5)) m.push_back(a);
    return Tree::leaf(m);
  }
  const int attr = rng.below_int(cols);
  const float thr = static_cast<float>(rng.uniform(2.0, 8.0));
  const Tree l = full(levels - 1, cols, rng);
  const Tree r = full(levels - 1, cols, rng);
  return Tree::join(attr, thr, l, r);
}

}  // namespace

TEST(GmtCuda, FastAndFaithfulMatchSequentialOnEveryDataset) {
  GMT_REQUIRE_CUDA();
  const auto sets = datasets_for_agreement();
  ASSERT_FALSE(sets.empty());
  auto seq = make("sequential", EvalOptions{});
  auto fast = make("cuda", fast_options());
  auto faithful = make("cuda", faithful_options());
  std::uint64_t seed = 11;
  for (const Named& s : sets) {
    SCOPED_TRACE(s.name);
    const Batch pop = population(s.data, 10, 6, s.data.cols() > 40 ? 20.0 : 3.0, ++seed);
    const auto want = run(*seq, s.data, pop);
    expect_equivalent(s.data, run(*fast, s.data, pop), want, kRealCoefTol, kErrTol, "fast " + s.name);
    expect_equivalent(s.data, run(*faithful, s.data, pop), want, kCoefTol, kErrTol, "faithful " + s.name);
  }
}

// The fast path's sums have a fixed order: graphs or not, first call or later, bit for bit.
TEST(GmtCuda, FastPathIsBitIdenticalWithAndWithoutGraphsAndOnRepeat) {
  GMT_REQUIRE_CUDA();
  const std::vector<Named> sets = armchair_and_year();
  auto seq = make("sequential", EvalOptions{});
  for (const Named& s : sets) {
    SCOPED_TRACE(s.name);
    const Batch pop = population(s.data, 16, 6, s.data.cols() > 10 ? 40.0 : 2.0, 5);  // wide models on Year: the wide path
    const auto want = run(*seq, s.data, pop);
    auto graphs = make("cuda", fast_options(true));
    auto direct = make("cuda", fast_options(false));
    const auto a = run(*graphs, s.data, pop);
    expect_equivalent(s.data, a, want, kRealCoefTol, kErrTol, "fast " + s.name);
    const auto b = run(*direct, s.data, pop);
    const auto c = run(*graphs, s.data, pop, false);
    for (std::size_t k = 0; k < a.size(); ++k)
      for (int i = 0; i < a[k].size(); ++i) {
        EXPECT_EQ(a[k].node(i).stats.sse, b[k].node(i).stats.sse) << "graphs on/off, tree " << k;
        EXPECT_EQ(a[k].node(i).stats.sse, c[k].node(i).stats.sse) << "repeat, tree " << k;
        if (!a[k].node(i).is_leaf()) continue;
        const auto ca = a[k].coef(i), cb = b[k].coef(i), cc = c[k].coef(i);
        EXPECT_TRUE(std::equal(ca.begin(), ca.end(), cb.begin(), cb.end())) << "graphs on/off, tree " << k << " leaf " << i;
        EXPECT_TRUE(std::equal(ca.begin(), ca.end(), cc.begin(), cc.end())) << "repeat, tree " << k << " leaf " << i;
      }
    EXPECT_EQ(graphs->describe().value("cuda_graphs", ""), "on");
  }
}

// Every way of sharing a stat leaf's rows among the stats pass's warps (fast_stat_split,
// FusedPolicy::kSplit*) agrees with the sequential backend, narrow and wide models, and repeats
// bit for bit.
TEST(GmtCuda, EveryStatSplitModeMatchesSequential) {
  GMT_REQUIRE_CUDA();
  const std::vector<Named> sets = armchair_and_year();
  auto seq = make("sequential", EvalOptions{});
  const std::pair<const char*, EvalOptions::StatSplit> modes[] = {
      {"auto", EvalOptions::StatSplit::kAuto}, {"warps", EvalOptions::StatSplit::kWarps}, {"leaf", EvalOptions::StatSplit::kLeaf}};
  for (const auto& [mode, split] : modes) {
    for (const Named& s : sets) {
      SCOPED_TRACE(std::string(mode) + ", " + s.name);
      const Batch pop = population(s.data, 16, 6, s.data.cols() > 10 ? 40.0 : 2.0, 5);  // wide models on Year: the wide path
      const auto want = run(*seq, s.data, pop);
      EvalOptions o = fast_options();
      o.fast_stat_split = split;
      auto fast = make("cuda", o);
      const auto a = run(*fast, s.data, pop);
      expect_equivalent(s.data, a, want, kRealCoefTol, kErrTol, std::string("fast ") + mode + " " + s.name);
      const auto b = run(*fast, s.data, pop, false);
      for (std::size_t k = 0; k < a.size(); ++k)
        for (int i = 0; i < a[k].size(); ++i) EXPECT_EQ(a[k].node(i).stats.sse, b[k].node(i).stats.sse) << "repeat, tree " << k;
      EXPECT_EQ(fast->describe().value("stat_split", ""), mode);
    }
  }
}

// Every node's statistics and every leaf's coefficients equal, bit for bit.
template <class Trees>
void expect_same_trees(const Trees& a, const Trees& b) {
  ASSERT_EQ(a.size(), b.size());
  for (std::size_t k = 0; k < a.size(); ++k) {
    ASSERT_EQ(a[k].size(), b[k].size()) << "tree " << k;
    for (int i = 0; i < a[k].size(); ++i) {
      const NodeStats &x = a[k].node(i).stats, &y = b[k].node(i).stats;
      EXPECT_EQ(x.count, y.count) << "tree " << k << " node " << i;
      EXPECT_EQ(x.sse, y.sse) << "tree " << k << " node " << i;
      EXPECT_EQ(x.dipole_lo, y.dipole_lo) << "tree " << k << " node " << i;
      EXPECT_EQ(x.dipole_hi, y.dipole_hi) << "tree " << k << " node " << i;
      EXPECT_EQ(x.dipole_rand, y.dipole_rand) << "tree " << k << " node " << i;
      if (!a[k].node(i).is_leaf()) continue;
      const auto ca = a[k].coef(i), cb = b[k].coef(i);
      EXPECT_TRUE(std::equal(ca.begin(), ca.end(), cb.begin(), cb.end())) << "tree " << k << " leaf " << i;
    }
  }
}

// A tuning option that must keep the trees: a population of trees of each set (Armchair and
// Year-shaped unless given) evaluated by an evaluator made with `first` and one made with `other`,
// the same trees; the evaluators' describe() says which by `key`. Models of ~2 attributes on narrow
// sets, ~40 on Year's 90, ~70 % of the attributes in between. Returns what describe() said by `key`
// with each (the last set's evaluators).
std::pair<nlohmann::ordered_json, nlohmann::ordered_json> expect_option_keeps_trees(const EvalOptions& first_options,
                                                                                     const EvalOptions& other_options, const char* key,
                                                                                     const std::vector<Named>& sets = armchair_and_year()) {
  std::pair<nlohmann::ordered_json, nlohmann::ordered_json> said;
  for (const Named& s : sets) {
    SCOPED_TRACE(s.name);
    const double attrs = s.data.cols() > 40 ? 40.0 : s.data.cols() > 10 ? 0.7 * static_cast<double>(s.data.cols()) : 2.0;
    const Batch pop = population(s.data, 12, 6, attrs, 5);
    auto first = make("cuda", first_options);
    const auto a = run(*first, s.data, pop);
    auto other = make("cuda", other_options);
    const auto b = run(*other, s.data, pop);
    expect_same_trees(a, b);
    said = {first->describe().value(key, nlohmann::ordered_json()), other->describe().value(key, nlohmann::ordered_json())};
    EXPECT_FALSE(said.first.is_null()) << key;
    EXPECT_NE(said.first, said.second) << key;
  }
  return said;
}

// The best individual of a whole EA run on the fast path (model file and fitness).
std::pair<std::string, double> fast_ea_run(const Dataset& d, const GmtParams& p, const EvalOptions& o = fast_options()) {
  auto e = make("cuda", o);
  e->prepare(d);
  PhaseTimer t;
  GmtEA ea(p, *e, d, t);
  const Individual best = ea.run();
  return {to_json(best.tree, d).dump(), best.fitness};
}

// Whole EA runs on the fast path (6 attributes, population 16, 40 iterations, `seed`), one with
// each of `options`: the same best model and fitness bit for bit.
void expect_same_ea_run(std::uint64_t seed, const std::vector<EvalOptions>& options) {
  const Dataset d = gmt_test::make_dataset(20000, 6, 23, gmt_test::piecewise, 0.1);
  GmtParams p;
  p.population = 16;
  p.iterations = 40;
  p.seed = seed;
  const auto first = fast_ea_run(d, p, options.at(0));
  for (std::size_t k = 1; k < options.size(); ++k) EXPECT_EQ(first, fast_ea_run(d, p, options[k])) << "options " << k;
}

// The stats pass's grid chunk-fastest or tree-fastest (fast_stats_grid; both with the heaviest
// trees' blocks first): the same bits.
TEST(GmtCuda, StatsGridEitherWayGivesTheSameTrees) {
  GMT_REQUIRE_CUDA();
  EvalOptions chunk = fast_options(), tree = fast_options();
  chunk.fast_stats_grid = EvalOptions::StatsGrid::kChunk;
  tree.fast_stats_grid = EvalOptions::StatsGrid::kTree;
  expect_option_keeps_trees(chunk, tree, "stats_grid");
  expect_same_ea_run(11, {chunk, tree});
}

// A merge grid of a few blocks each looping over many stat leaves (fast_merge_grid; by default the
// grid is the blocks resident at once, which the tests' small calls rarely exceed): every sum is
// one thread's chain in a fixed order, so the same trees and the same run bit for bit. The
// 16-attribute set's models straddle the shared-memory solve's 12 values; Year-shaped's are wider
// (the global work space).
TEST(GmtCuda, MergeGridGivesTheSameTrees) {
  GMT_REQUIRE_CUDA();
  EvalOptions few = fast_options();
  few.fast_merge_grid = 3;
  const auto grid = expect_option_keeps_trees(fast_options(), few, "merge_grid_max", armchair_year_and_16_attributes());
  EXPECT_GT(grid.first, 3);
  EXPECT_EQ(grid.second, 3);
  EvalOptions two = fast_options();
  two.fast_merge_grid = 2;
  expect_same_ea_run(17, {fast_options(), two});
}

// The evaluator's host pool: its size and polling are options (host_threads, host_spin_us), and
// neither changes a run (the EA's operators draw per individual; the pool's tasks depend only on
// their index).
TEST(GmtCuda, HostThreadsAndSpinKeepTheRun) {
  GMT_REQUIRE_CUDA();
  EvalOptions one = fast_options(), many = fast_options();
  one.host_threads = 1;
  one.host_spin_us = 0;
  many.host_threads = 7;
  many.host_spin_us = 200;
  auto e = make("cuda", many);
  const Dataset d = gmt_test::make_dataset(2000, 3, 5, gmt_test::piecewise, 0.1);
  e->prepare(d);
  EXPECT_EQ(e->describe().value("host_threads", 0), 7);
  EXPECT_EQ(e->describe().value("host_spin_us", -1), 200);
  expect_same_ea_run(19, {one, many, fast_options()});
}

TEST(GmtCuda, FloatFaithfulPathWithinItsTolerance) {
  GMT_REQUIRE_CUDA();
  const Dataset d = gmt_test::make_dataset(20000, 5, 31, gmt_test::piecewise, 0.2);
  const Batch pop = population(d, 10, 6, 3.0, 3);
  auto seq = make("sequential", EvalOptions{});
  auto f = make("cuda", faithful_options(EvalOptions::GpuPrecision::kFloat));
  EXPECT_EQ(f->sse_tolerance(), 1e-3);
  // Counts and dipoles exact; errors within 1e-3 (ranks may differ only on nearly dependent columns: none here).
  expect_equivalent(d, run(*f, d, pop), run(*seq, d, pop), 1e-3, 1e-3, "faithful float");
}

// Where cuSOLVER's 32-bit ormqr workspace query fails (a 10M-row leaf of Armchair 10M on the H100,
// results/h100/README.md), Q^T y comes from geqrf of [A | y]. ormqr_max_rows = 1 sends every leaf
// there: the same answers as the sequential backend (and so as ormqr) in double and float.
TEST(GmtCuda, FaithfulQtyFromGeqrfOfAugmentedMatrixMatchesOrmqr) {
  GMT_REQUIRE_CUDA();
  const Dataset d = gmt_test::make_dataset(20000, 5, 37, gmt_test::piecewise, 0.2);
  const Batch pop = population(d, 8, 5, 3.0, 5);
  auto seq = make("sequential", EvalOptions{});
  const auto ref = run(*seq, d, pop);
  for (const auto p : {EvalOptions::GpuPrecision::kDouble, EvalOptions::GpuPrecision::kFloat}) {
    EvalOptions o = faithful_options(p);
    o.ormqr_max_rows = 1;
    auto augmented = make("cuda", o);
    const bool f32 = p == EvalOptions::GpuPrecision::kFloat;
    expect_equivalent(d, run(*augmented, d, pop), ref, f32 ? 1e-3 : kCoefTol, f32 ? 1e-3 : kErrTol,
                      f32 ? "Q^T y from geqrf of [A | y], float" : "Q^T y from geqrf of [A | y], double");
  }
}

// Issue 23: trees deeper than 20 levels (the fast path walks any depth; the faithful path's flat
// array takes 24 levels) and with 500+ leaves (512 stat leaves in one tree: the shared-memory sort
// tables at size), beside a small one.
TEST(GmtCuda, DeepAndBushyTrees) {
  GMT_REQUIRE_CUDA();
  const Dataset d = gmt_test::make_dataset(40000, 4, 17, gmt_test::piecewise, 0.3);
  Rng rng(4);
  Batch b;
  b.trees.push_back(chain(22, 3));   // 22 levels
  b.trees.push_back(full(10, 4, rng));  // 512 leaves
  b.trees.push_back(full(3, 4, rng));
  b.salts = {40, 41, 42};
  ASSERT_EQ(b.trees[0].levels(), 22);
  ASSERT_EQ(b.trees[1].n_leaves(), 512);
  auto seq = make("sequential", EvalOptions{});
  const auto want = run(*seq, d, b);
  auto fast = make("cuda", fast_options());
  expect_equivalent(d, run(*fast, d, b), want, kCoefTol, kErrTol, "fast");
  auto faithful = make("cuda", faithful_options());
  expect_equivalent(d, run(*faithful, d, b), want, kCoefTol, kErrTol, "faithful");
  EXPECT_EQ(faithful->describe().value("estimate_errors_tables", ""), "shared");  // the last tree is small
  Batch deep;
  deep.trees = {b.trees[0]};
  deep.salts = {7};
  expect_equivalent(d, run(*faithful, d, deep), run(*seq, d, deep), kCoefTol, kErrTol, "faithful deep");
  EXPECT_EQ(faithful->describe().value("estimate_errors_tables", ""), "global");  // 2^22 slots: global tables
}

TEST(GmtCuda, QuirksEmptyLeavesFewRowsConstantColumnsNaN) {
  GMT_REQUIRE_CUDA();
  // Constant column, NaN cells (routed right; intercept-only models), tiny leaves (fewer rows
  // than model columns), an empty leaf.
  Dataset d = gmt_test::make_dataset(3000, 5, 8, gmt_test::piecewise, 0.1);
  for (std::size_t r = 0; r < d.rows(); ++r) d.at(r, 4) = 3.25f;
  Dataset nan = gmt_test::make_dataset(3000, 4, 9, gmt_test::piecewise, 0.1);
  Rng rng(9);
  for (std::size_t r = 0; r < nan.rows(); ++r)
    if (rng.bernoulli(0.05)) nan.set_missing(r, rng.below(nan.cols()));
  const Dataset tiny = gmt_test::make_dataset(60, 6, 5, gmt_test::piecewise, 0.5);
  struct Case {
    const char* name;
    const Dataset* data;
    int depth;
    double attrs;
  } cases[] = {{"constant column", &d, 6, 4.0}, {"nan routing", &nan, 6, 0.0}, {"tiny leaves", &tiny, 8, 5.0}};
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    Batch pop = population(*c.data, 10, c.depth, c.attrs, 21);
    // An empty leaf: a test that sends every row right (NaN included, so the left leaf is empty
    // on every dataset).
    pop.trees.push_back(Tree::join(0, -1e30f, Tree::leaf(c.attrs > 0 ? std::vector<int>{0, 1} : std::vector<int>{}),
                                   Tree::leaf(c.attrs > 0 ? std::vector<int>{1} : std::vector<int>{})));
    pop.salts.push_back(77);
    auto seq = make("sequential", EvalOptions{});
    const auto want = run(*seq, *c.data, pop);
    for (const EvalOptions& o : {fast_options(), faithful_options()}) {
      auto e = make("cuda", o);
      expect_equivalent(*c.data, run(*e, *c.data, pop), want, kCoefTol, kErrTol,
                        std::string(c.name) + " " + e->describe().value("path", "?"));
    }
    EXPECT_EQ(want.back().node(1).stats.count, 0);  // the empty left leaf
    EXPECT_EQ(want.back().node(2).stats.count, static_cast<std::int64_t>(c.data->rows()));
  }
}

TEST(GmtCuda, ModelsWiderThanTheBatchedSolverTakeTheExactSolver) {
  GMT_REQUIRE_CUDA();
  const Dataset d = gmt_test::make_dataset(3000, 130, 2, gmt_test::piecewise, 0.2);
  std::vector<int> all(130);
  for (int a = 0; a < 130; ++a) all[static_cast<std::size_t>(a)] = a;
  Batch b;
  b.trees.push_back(Tree::join(0, 5.0f, Tree::leaf(all), Tree::leaf({0, 5})));  // 131 values > kMaxKv
  b.salts = {3};
  auto seq = make("sequential", EvalOptions{});
  auto fast = make("cuda", fast_options());
  expect_equivalent(d, run(*fast, d, b), run(*seq, d, b), kCoefTol, kErrTol, "wide");
  EXPECT_GE(fast->describe().value("exact_solver_leaves", 0), 1);
}

// Issue 23 item 4: leaves whose Gram the fast path cannot decide (exactly collinear attributes:
// x3 = 2 x1, x4 = x1 + x2) are solved together in one launch (exact_batch.cuh, the CPU's rank rule)
// and must give the sequential backend's ranks, kept attributes and counts exactly, coefficients and
// SSE within the tolerances (the target's noise keeps the fits far from exact); the per-leaf cuSOLVER solver (exact_batch_max_rows 0) too. Leaves of
// every size from 0 rows up, several per tree, several trees per call, with and without graphs.
TEST(GmtCuda, CollinearLeavesSolvedInOneBatchMatchSequential) {
  GMT_REQUIRE_CUDA();
  for (const std::size_t rows : {std::size_t{700}, std::size_t{20000}}) {
    SCOPED_TRACE(rows);
    Dataset d = gmt_test::make_dataset(rows, 5, 31, gmt_test::piecewise, 0.3);
    for (std::size_t r = 0; r < rows; ++r) {  // x1, x2 on a 1/256 grid: every sum below is exact in float
      d.at(r, 0) = std::round(d.at(r, 0) * 256.0f) / 256.0f;
      d.at(r, 1) = std::round(d.at(r, 1) * 256.0f) / 256.0f;
      d.at(r, 2) = 2.0f * d.at(r, 0);
      d.at(r, 3) = d.at(r, 0) + d.at(r, 1);
    }
    Batch b;
    const std::vector<int> dep{0, 2}, dep3{0, 1, 3}, mixed{0, 1, 2, 3, 4};
    b.trees.push_back(Tree::join(0, 5.0f, Tree::leaf(dep), Tree::leaf(dep3)));
    b.trees.push_back(Tree::join(1, 2.0f, Tree::join(4, 7.0f, Tree::leaf(mixed), Tree::leaf(dep)), Tree::leaf({1, 4})));
    b.trees.push_back(Tree::join(0, -1e30f, Tree::leaf(dep), Tree::leaf(mixed)));  // an empty flagged leaf
    b.trees.push_back(Tree::leaf(mixed));
    b.salts = {1, 2, 3, 4};
    auto seq = make("sequential", EvalOptions{});
    const auto want = run(*seq, d, b);
    for (const bool graphs : {true, false})
      for (const long long batch_rows : {1LL << 18, 0LL}) {
        EvalOptions o = fast_options(graphs);
        o.exact_batch_max_rows = batch_rows;
        auto fast = make("cuda", o);
        PhaseTimer phases;
        const auto got = run(*fast, d, b, true, &phases);
        const std::string what = std::string(graphs ? "graphs" : "direct") + (batch_rows ? " batched" : " per leaf");
        expect_equivalent(d, got, want, kRealCoefTol, kErrTol, what);  // ranks and kept attributes exactly
        EXPECT_GT(phases.seconds("exact_solver"), 0.0) << what;  // the solve is in the breakdown
        const auto info = fast->describe();
        EXPECT_GE(info.value("exact_solver_leaves", 0), 4) << what;  // the case is what it claims
        if (batch_rows) {
          EXPECT_EQ(info.value("exact_solver_batched_leaves", 0), info.value("exact_solver_leaves", -1)) << what;
          EXPECT_EQ(info.value("exact_solver_batch_launches", 0), 1) << what;
        } else {
          EXPECT_EQ(info.value("exact_solver_batched_leaves", -1), 0) << what;
        }
      }
  }
}

// Issue 23: repairs are folded into the call. Trees evaluated once (clean leaves with known SSE),
// then changed as the EA changes them (thresholds moved near the edge of their node, models
// changed, subtrees pruned) so that some children hold fewer than min_leaf_rows rows: the fast
// path decides the repairs from its counts and its stray rows, solves the repaired leaves on the
// host, and must give the sequential backend's trees, counts, dipoles and models; likewise the
// faithful path, for promote and collapse.
TEST(GmtCuda, RepairsFoldedIntoTheCallMatchSequential) {
  GMT_REQUIRE_CUDA();
  for (const std::size_t rows : {std::size_t{3000}, std::size_t{60000}}) {
    const Dataset d = gmt_test::make_dataset(rows, 4, 23, gmt_test::piecewise, 0.2);
    auto seq = make("sequential", EvalOptions{});
    seq->prepare(d);
    for (const RepairMode mode : {RepairMode::promote, RepairMode::collapse}) {
      SCOPED_TRACE(std::string(mode == RepairMode::promote ? "promote " : "collapse ") + std::to_string(rows));
      Batch b = population(d, 24, 6, 2.0, 31);
      b.repair = RepairSpec{5, mode};
      // a first evaluation (repairs and all): every leaf clean with a known SSE
      {
        EvalBatch eb;
        for (Tree& t : b.trees) eb.trees.push_back(&t);
        eb.salts = b.salts;
        eb.repair = b.repair;
        PhaseTimer t;
        seq->evaluate(eb, t);
      }
      // then changes that leave small children
      Rng rng(99);
      int small = 0;
      for (Tree& t : b.trees) {
        for (int i = 0; i < t.size(); ++i) {
          TreeNode& n = t.node(i);
          if (n.is_leaf() || !rng.bernoulli(0.5)) continue;
          // move the threshold next to the smallest or largest value of its attribute in the node
          const std::int64_t r = rng.bernoulli(0.5) ? n.stats.dipole_lo : n.stats.dipole_hi;
          if (r < 0) continue;
          n.threshold = d.at(static_cast<std::size_t>(r), static_cast<std::size_t>(n.attr)) + (rng.bernoulli(0.5) ? 1e-4f : -1e-4f);
          t.mark_dirty(i);
          ++small;
        }
      }
      ASSERT_GT(small, 0);
      b.clean_sse_known = true;
      for (std::uint64_t& s : b.salts) s += 1000;
      const auto want = run(*seq, d, b, false);
      int repaired = 0;
      for (std::size_t k = 0; k < want.size(); ++k) repaired += want[k].size() != b.trees[k].size() ? 1 : 0;
      EXPECT_GT(repaired, 0) << "the case must repair some trees";
      auto fast = make("cuda", fast_options());
      expect_equivalent(d, run(*fast, d, b), want, kCoefTol, kErrTol, "fast");
      EXPECT_GT(fast->counters().repairs, 0);
      auto faithful = make("cuda", faithful_options());
      expect_equivalent(d, run(*faithful, d, b), want, kCoefTol, kErrTol, "faithful");
    }
  }
}

// A near-exact fit (target linear in x1, x2 up to float rounding, offset 100): the SSE from the
// statistics (C_yy - |L^-1 C_Sy|^2) would keep few digits of an SSE ~1e-13 of C_yy; the fast path
// marks such leaves and sums their residuals (the residual pass), so every leaf's SSE must match
// the sequential backend's within 1e-8 relative, with no absolute slack. Leaves solved on the
// device, leaves with given coefficients, and a repaired leaf (solved after a second pass).
double near_linear(const std::vector<double>& x) { return 100.0 + 3.0 * x[0] - 2.0 * x[1]; }

TEST(GmtCuda, NearExactFitsTakeTheirSseFromTheResiduals) {
  GMT_REQUIRE_CUDA();
  const Dataset d = gmt_test::make_dataset(20000, 3, 41, near_linear, 0.0);
  Batch b;
  b.trees.push_back(Tree::join(2, 5.0f, Tree::leaf({0, 1}), Tree::leaf({0, 1, 2})));
  b.trees.push_back(Tree::join(0, 3.0f, Tree::leaf({0, 1}), Tree::join(1, 6.0f, Tree::leaf({0, 1}), Tree::leaf({1}))));
  Tree given = Tree::join(2, 4.0f, Tree::leaf({0, 1}), Tree::leaf({0, 1}));
  for (int n = 0; n < given.size(); ++n)
    if (given.node(n).is_leaf()) given.set_fit(n, {0, 1}, {100.0, 3.0, -2.0}, -1);
  b.trees.push_back(given);
  // a child of ~0.1 % of the rows, under the repair limit
  b.trees.push_back(Tree::join(0, 0.01f, Tree::leaf({0, 1}), Tree::leaf({0, 1})));
  b.salts = {1, 2, 3, 4};
  b.repair = RepairSpec{50, RepairMode::promote};
  auto seq = make("sequential", EvalOptions{});
  const auto want = run(*seq, d, b);
  auto fast = make("cuda", fast_options());
  const auto got = run(*fast, d, b);
  ASSERT_EQ(got.size(), want.size());
  int near_exact = 0;
  for (std::size_t t = 0; t < want.size(); ++t) {
    ASSERT_EQ(got[t].size(), want[t].size()) << "tree " << t;
    for (int n = 0; n < want[t].size(); ++n) {
      if (!want[t].node(n).is_leaf()) continue;
      const double w = want[t].node(n).stats.sse, g = got[t].node(n).stats.sse;
      EXPECT_NEAR(g, w, 1e-8 * w) << "tree " << t << " leaf " << n;
      if (want[t].attrs(n).size() > 0 && w < 1e-8 * static_cast<double>(want[t].node(n).stats.count)) ++near_exact;
    }
  }
  EXPECT_GE(near_exact, 6);  // the case is what it claims: near-exact fits
  EXPECT_GT(fast->describe().value("second_passes", 0), 0) << "the repaired leaf's SSE comes from the second pass";
}

TEST(GmtCuda, EmptyBatchAndTooLittleDeviceMemory) {
  GMT_REQUIRE_CUDA();
  const Dataset d = gmt_test::make_dataset(5000, 3, 2, gmt_test::piecewise, 0.1);
  for (const EvalOptions& base : {fast_options(), faithful_options()}) {
    auto e = make("cuda", base);
    e->prepare(d);
    PhaseTimer t;
    e->evaluate(EvalBatch{}, t);
    EvalOptions small = base;
    small.device_memory_limit = 1000;  // bytes: less than the dataset
    e->configure(small);
    try {
      e->prepare(d);
      FAIL() << "prepare() with 1000 bytes of device memory must fail";
    } catch (const Unavailable& ex) {
      const std::string m = ex.what();
      EXPECT_NE(m.find("needs"), std::string::npos) << m;
      EXPECT_NE(m.find("bytes of device memory"), std::string::npos) << m;
      EXPECT_NE(m.find("free"), std::string::npos) << m;
      EXPECT_EQ(m.find('\n'), std::string::npos) << m;
    }
    // Enough for the dataset, not for the generation's work buffers.
    small.device_memory_limit = 5000.0 * 3 * 4 + 65536;
    e->configure(small);
    e->prepare(d);
    Batch pop = population(d, 8, 5, 2.0, 1);
    EXPECT_THROW(run(*e, d, pop, false), Unavailable);
  }
}

// The same seed gives the same run on the fast path (fixed summation orders throughout).
TEST(GmtCuda, SameSeedSameRunOnTheFastPath) {
  GMT_REQUIRE_CUDA();
  const Dataset d = gmt_test::make_dataset(20000, 3, 19, gmt_test::piecewise, 0.1);
  GmtParams p;
  p.population = 16;
  p.iterations = 40;
  p.seed = 5;
  std::string first;
  for (int run_i = 0; run_i < 2; ++run_i) {
    auto e = make("cuda", fast_options());
    e->prepare(d);
    PhaseTimer t;
    GmtEA ea(p, *e, d, t);
    const Individual best = ea.run();
    const std::string model = to_json(best.tree, d).dump();
    if (run_i == 0) first = model;
    else EXPECT_EQ(model, first);
    EXPECT_LE(ea.summary().evaluate_calls, p.iterations + 1) << "one evaluator call per generation at most";
    EXPECT_GE(ea.summary().evaluate_calls, p.iterations / 2);
  }
}

TEST(GmtCuda, FamilyRecordsOnTheGpuAndReplaysOnCpuAndFaithful) {
  GMT_REQUIRE_CUDA();
  auto fam = make_gmt_family();
  nlohmann::json params = nlohmann::json::object();
  for (const auto& p : fam->params()) params[p.name] = p.default_value;
  params["iterations"] = 12;
  params["population"] = 16;
  const std::string file = (std::filesystem::temp_directory_path() / "gmt_cuda_test_{dataset}_{seed}.bin").string();
  params["batch_sample_file"] = file;
  gmt_test::PiecewiseProvider provider(8000);
  auto ctx_for = [&](const std::string& backend, const nlohmann::json& extra) {
    CaseContext ctx;
    ctx.family = "gmt";
    ctx.experiment_id = "gmt_cuda_test";
    ctx.backend = backend;
    ctx.dataset = "piecewise";
    ctx.params = params;
    ctx.params.update(extra);
    ctx.seed = 3;
    ctx.warmup = 0;
    ctx.repetitions = 1;
    ctx.registry = &gmt_test::registry();
    ctx.datasets = &provider;
    return ctx;
  };
  CaseResult rec = fam->run_case(ctx_for("cuda", {{"batch_sample_every", 3}}));
  ASSERT_EQ(rec.status, "ok") << rec.reason;
  EXPECT_TRUE(rec.validation["passed"].get<bool>()) << rec.validation.dump();
  EXPECT_GE(rec.metrics["batch_sample_batches"].get<int>(), 3);  // generations 3, 6, 9, 12: one call each
  EXPECT_LE(rec.metrics["batch_sample_batches"].get<int>(), 4);
  EXPECT_LE(rec.metrics["evaluate_calls"].get<long long>(), 13);
  for (const char* ph : {"redistribute", "calc_models", "transfers"}) {
    EXPECT_GT(rec.breakdown.seconds(ph), 0.0) << ph;
    for (const auto& p : rec.breakdown.phases())
      if (p.name == ph) {
        EXPECT_EQ(p.clock, PhaseClock::device) << ph;
      }
  }
  // ("reduction" only where the exact solver fitted leaves: the other trees propagate in "repair")
  for (const char* ph : {"cpu_ea", "flattening", "repair"}) EXPECT_GT(rec.breakdown.seconds(ph), 0.0) << ph;
  std::string checksum;
  for (const auto& [backend, extra] : std::vector<std::pair<std::string, nlohmann::json>>{
           {"sequential", {{"replay_from", "sample"}}},
           {"cuda", {{"replay_from", "sample"}, {"gpu_path", "faithful"}}},
           {"cuda", {{"replay_from", "sample"}}}}) {
    CaseResult r = fam->run_case(ctx_for(backend, extra));
    ASSERT_EQ(r.status, "ok") << backend << ": " << r.reason;
    EXPECT_TRUE(r.metrics["estimated"].get<bool>());
    EXPECT_TRUE(r.validation["passed"].get<bool>()) << backend << " " << r.validation.dump();
    EXPECT_GT(r.timing.median(), 0.0);
    if (checksum.empty()) checksum = r.checksum;
    EXPECT_EQ(r.checksum, checksum) << "node counts of the replayed trees differ on " << backend;
  }
  std::filesystem::remove(expand_sample_path(file, "gmt_cuda_test", "piecewise", 3));
}
