// The CUDA GMT evaluator against the sequential oracle (ctest label gpu; every test skips with
// the registry's reason where no GPU is usable). Fixed populations (initial trees of the EA, some
// keeping their leaf models) on every shared regression dataset found through GPUDM_DATA_DIR,
// generated Armchair (with noise attributes) and shape surrogates: identical node counts,
// dipoles (leaf assignment) and rank decisions; coefficients within 1e-8 x the leaf's largest
// (1e-6 for the fast path on real data: see kRealCoefTol), SSE/SAE within 1e-8 relative
// (+ 1e-12 x sum y^2). Both paths (fast: both Gram engines, graphs on
// and off; faithful: double, and float with its own tolerance), deep trees (global node tables),
// bushy trees (leaf groups), leaves too wide for the batched solver, quirks (empty leaves, fewer
// rows than columns, constant columns, NaN routing), the out-of-memory message, and the family
// end to end (batch samples recorded on the GPU, replayed on the CPU and the faithful path).
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
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

EvalOptions fast_options(EvalOptions::GramEngine engine = EvalOptions::GramEngine::kFp64, bool graphs = true) {
  EvalOptions o;
  o.gpu_path = EvalOptions::GpuPath::kFast;
  o.gram_engine = engine;
  o.cuda_graphs = graphs;
  return o;
}
EvalOptions faithful_options(EvalOptions::GpuPrecision p = EvalOptions::GpuPrecision::kDouble) {
  EvalOptions o;
  o.gpu_path = EvalOptions::GpuPath::kFaithful;
  o.gpu_precision = p;
  return o;
}

struct Population {
  std::vector<std::unique_ptr<Node>> roots;
  std::vector<FlatTree> flats;
  std::vector<const FlatTree*> ptrs() const {
    std::vector<const FlatTree*> v;
    for (const auto& f : flats) v.push_back(&f);
    return v;
  }
};

// Initial EA trees (dipolar tests on subsamples) and two trees whose leaves keep given models.
Population population(const Dataset& d, int trees, int depth, double model_attrs, std::uint64_t seed) {
  Population p;
  PhaseTimer t;
  auto seq = make("sequential", EvalOptions{});
  GmtParams gp;
  gp.init_max_depth = depth;
  gp.init_model_attrs = model_attrs;
  gp.max_depth = std::max(depth, 12);
  GmtEA ea(gp, *seq, d, t);
  Rng rng(seed);
  p.flats.resize(static_cast<std::size_t>(trees));
  for (int i = 0; i < trees; ++i) {
    p.roots.push_back(ea.init_tree(rng));
    flatten(p.roots.back().get(), static_cast<int>(d.cols()), seed * 100 + static_cast<std::uint64_t>(i), p.flats[static_cast<std::size_t>(i)]);
  }
  for (int i : {1, trees - 2}) {
    if (i < 0 || i >= trees) continue;
    FlatTree& f = p.flats[static_cast<std::size_t>(i)];
    for (int l = 0; l < f.n_leaves(); ++l) {
      f.refit[static_cast<std::size_t>(l)] = 0;
      for (int k = 0; k <= f.cols; ++k) f.coef[static_cast<std::size_t>(l * (f.cols + 1) + k)] = 0.25 * (k + 1) - 0.5 * l;
    }
  }
  return p;
}

double sum_y2(const Dataset& d) {
  double s = 0;
  for (std::size_t r = 0; r < d.rows(); ++r) s += double(d.target(r)) * d.target(r);
  return s;
}

// got == want: integers exactly, floats within the tolerances (err_tol relative + 1e-4 x err_tol x sum y^2).
void expect_equivalent(const Dataset& d, const std::vector<const FlatTree*>& trees, const std::vector<EvalOutput>& got,
                       const std::vector<EvalOutput>& want, double coef_tol, double err_tol, bool same_ranks,
                       const std::string& what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  const double tss = sum_y2(d);
  for (std::size_t k = 0; k < trees.size(); ++k) {
    SCOPED_TRACE(what + ", tree " + std::to_string(k));
    const FlatTree& f = *trees[k];
    ASSERT_EQ(got[k].nodes.size(), want[k].nodes.size());
    ASSERT_EQ(got[k].coef.size(), want[k].coef.size());
    ASSERT_EQ(got[k].rank.size(), want[k].rank.size());
    if (same_ranks) {
      EXPECT_EQ(got[k].rank, want[k].rank);
    }
    for (std::size_t i = 0; i < want[k].nodes.size(); ++i) {
      const NodeStats &g = got[k].nodes[i], &e = want[k].nodes[i];
      if (f.attr[i] == kAbsentNode) {
        EXPECT_EQ(g.count, 0) << "absent node " << i;
        continue;
      }
      EXPECT_EQ(g.count, e.count) << "node " << i;
      EXPECT_EQ(g.dipole_lo, e.dipole_lo) << "node " << i;
      EXPECT_EQ(g.dipole_hi, e.dipole_hi) << "node " << i;
      EXPECT_EQ(g.dipole_rand, e.dipole_rand) << "node " << i;
      EXPECT_NEAR(g.sse, e.sse, err_tol * (std::fabs(e.sse) + 1e-4 * tss)) << "node " << i;
      EXPECT_NEAR(g.sae, e.sae, err_tol * (std::fabs(e.sae) + 1e-4 * std::sqrt(tss))) << "node " << i;
    }
    if (!same_ranks) continue;
    const std::size_t w = static_cast<std::size_t>(f.cols) + 1;
    for (int l = 0; l < f.n_leaves(); ++l) {
      double scale = 1e-300;
      for (std::size_t j = 0; j < w; ++j) scale = std::max(scale, std::fabs(want[k].coef[static_cast<std::size_t>(l) * w + j]));
      for (std::size_t j = 0; j < w; ++j) {
        const double g = got[k].coef[static_cast<std::size_t>(l) * w + j], e = want[k].coef[static_cast<std::size_t>(l) * w + j];
        if (e == 0.0) {
          EXPECT_EQ(g, 0.0) << "leaf " << l << " coef " << j << " (dropped column)";
        } else {
          EXPECT_NEAR(g, e, coef_tol * scale) << "leaf " << l << " coef " << j;
        }
      }
    }
  }
}

// Outputs poisoned before every call: the evaluator must rewrite every field.
std::vector<EvalOutput> poisoned(std::size_t n) {
  EvalOutput p;
  NodeStats s;
  s.count = -7;
  s.sse = s.sae = std::nan("");
  s.dipole_lo = s.dipole_hi = s.dipole_rand = 123456789;
  p.nodes.assign(3, s);
  p.coef.assign(5, std::nan(""));
  p.rank.assign(2, 99);
  return std::vector<EvalOutput>(n, p);
}

std::vector<EvalOutput> run(ModelTreeEvaluator& e, const Dataset& d, const std::vector<const FlatTree*>& trees) {
  e.prepare(d);
  PhaseTimer t;
  std::vector<EvalOutput> out = poisoned(trees.size() + 2);
  e.evaluate(trees, out, t);
  return out;
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
    const Population pop = population(s.data, 10, 6, 3.0, ++seed);
    const auto trees = pop.ptrs();
    const auto want = run(*seq, s.data, trees);
    expect_equivalent(s.data, trees, run(*fast, s.data, trees), want, kRealCoefTol, kErrTol, true, "fast " + s.name);
    expect_equivalent(s.data, trees, run(*faithful, s.data, trees), want, kCoefTol, kErrTol, true, "faithful " + s.name);
  }
}

TEST(GmtCuda, GramEnginesGraphsAndRepeatsAgree) {
  GMT_REQUIRE_CUDA();
  datasets::CatalogProvider provider;
  std::vector<Named> sets;
  sets.push_back({"armchair", *provider.get("armchair", {{"rows", 50000}})});
  sets.push_back({"year-shaped", *provider.get("year_prediction_msd", {{"rows", 30000}})});
  auto seq = make("sequential", EvalOptions{});
  for (const Named& s : sets) {
    SCOPED_TRACE(s.name);
    const Population pop = population(s.data, 16, 6, s.data.cols() > 10 ? 40.0 : 2.0, 5);
    const auto trees = pop.ptrs();
    const auto want = run(*seq, s.data, trees);
    auto fp64 = make("cuda", fast_options(EvalOptions::GramEngine::kFp64, true));
    auto nograph = make("cuda", fast_options(EvalOptions::GramEngine::kFp64, false));
    const auto a = run(*fp64, s.data, trees);
    expect_equivalent(s.data, trees, a, want, kCoefTol, kErrTol, true, "fp64 " + s.name);
    // The fast path's sums have a fixed order: graphs or not, first call or later, bit for bit.
    const auto b = run(*nograph, s.data, trees);
    PhaseTimer t;
    std::vector<EvalOutput> c = poisoned(1);
    fp64->evaluate(trees, c, t);
    for (std::size_t k = 0; k < trees.size(); ++k) {
      EXPECT_EQ(a[k].coef, b[k].coef) << "graphs on/off, tree " << k;
      EXPECT_EQ(a[k].coef, c[k].coef) << "repeat, tree " << k;
      for (std::size_t i = 0; i < a[k].nodes.size(); ++i) {
        EXPECT_EQ(a[k].nodes[i].sse, b[k].nodes[i].sse);
        EXPECT_EQ(a[k].nodes[i].sse, c[k].nodes[i].sse);
        EXPECT_EQ(a[k].nodes[i].sae, c[k].nodes[i].sae);
      }
    }
    auto dmma = make("cuda", fast_options(EvalOptions::GramEngine::kDmma, true));
    expect_equivalent(s.data, trees, run(*dmma, s.data, trees), want, kCoefTol, kErrTol, true, "dmma " + s.name);
    EXPECT_EQ(dmma->describe().value("gram_engine", ""), "dmma");
  }
}

TEST(GmtCuda, FloatFaithfulPathWithinItsTolerance) {
  GMT_REQUIRE_CUDA();
  const Dataset d = gmt_test::make_dataset(20000, 5, 31, gmt_test::piecewise, 0.2);
  const Population pop = population(d, 10, 6, 3.0, 3);
  const auto trees = pop.ptrs();
  auto seq = make("sequential", EvalOptions{});
  auto f = make("cuda", faithful_options(EvalOptions::GpuPrecision::kFloat));
  EXPECT_EQ(f->sse_tolerance(), 1e-3);
  // Counts and dipoles exact; errors within 1e-3 (ranks may differ only on nearly dependent columns: none here).
  expect_equivalent(d, trees, run(*f, d, trees), run(*seq, d, trees), 1e-3, 1e-3, true, "faithful float");
}

// Where cuSOLVER's 32-bit ormqr workspace query fails (a 10M-row leaf of Armchair 10M on the H100,
// results/h100/README.md), Q^T y comes from geqrf of [A | y]. ormqr_max_rows = 1 sends every leaf
// there: the same answers as the sequential backend (and so as ormqr) in double and float.
TEST(GmtCuda, FaithfulQtyFromGeqrfOfAugmentedMatrixMatchesOrmqr) {
  GMT_REQUIRE_CUDA();
  const Dataset d = gmt_test::make_dataset(20000, 5, 37, gmt_test::piecewise, 0.2);
  const Population pop = population(d, 8, 5, 3.0, 5);
  const auto trees = pop.ptrs();
  auto seq = make("sequential", EvalOptions{});
  const auto ref = run(*seq, d, trees);
  for (const auto p : {EvalOptions::GpuPrecision::kDouble, EvalOptions::GpuPrecision::kFloat}) {
    EvalOptions o = faithful_options(p);
    o.ormqr_max_rows = 1;
    auto augmented = make("cuda", o);
    const bool f32 = p == EvalOptions::GpuPrecision::kFloat;
    expect_equivalent(d, trees, run(*augmented, d, trees), ref, f32 ? 1e-3 : kCoefTol, f32 ? 1e-3 : kErrTol, true,
                      f32 ? "Q^T y from geqrf of [A | y], float" : "Q^T y from geqrf of [A | y], double");
  }
}

namespace {
// A left-deep chain of `levels` levels (x1 <= 9, <= 8, ...) with linear leaves: 2^levels - 1 slots.
std::unique_ptr<Node> chain(int levels, int attrs) {
  auto root = std::make_unique<Node>();
  Node* n = root.get();
  for (int l = 0; l + 1 < levels; ++l) {
    n->attr = 0;
    n->threshold = 9.5f - 0.75f * static_cast<float>(l);
    n->right = std::make_unique<Node>();
    std::vector<int> m;
    for (int a = 0; a < attrs; ++a) m.push_back(a);
    n->right->make_leaf(m);
    n->left = std::make_unique<Node>();
    n = n->left.get();
  }
  n->make_leaf({1});
  return root;
}
// A full tree of `levels` levels with random tests.
std::unique_ptr<Node> full(int levels, int cols, Rng& rng) {
  auto n = std::make_unique<Node>();
  if (levels <= 1) {
    std::vector<int> m;
    for (int a = 0; a < cols; ++a)
      if (rng.bernoulli(0.5)) m.push_back(a);
    n->make_leaf(m);
    return n;
  }
  n->attr = rng.below_int(cols);
  n->threshold = static_cast<float>(rng.uniform(2.0, 8.0));
  n->left = full(levels - 1, cols, rng);
  n->right = full(levels - 1, cols, rng);
  return n;
}
}  // namespace

TEST(GmtCuda, DeepAndBushyTreesTakeTheGlobalAndGroupedPaths) {
  GMT_REQUIRE_CUDA();
  const Dataset d = gmt_test::make_dataset(40000, 4, 17, gmt_test::piecewise, 0.3);
  std::vector<std::unique_ptr<Node>> roots;
  roots.push_back(chain(12, 3));  // 4095 slots: 131 KB of node tables > 48 KB -> global memory
  Rng rng(4);
  roots.push_back(full(8, 4, rng));  // 128 leaves: several estimate_errors groups
  roots.push_back(full(3, 4, rng));
  std::vector<FlatTree> flats(roots.size());
  std::vector<const FlatTree*> trees;
  for (std::size_t i = 0; i < roots.size(); ++i) {
    flatten(roots[i].get(), 4, 40 + i, flats[i]);
    trees.push_back(&flats[i]);
  }
  ASSERT_EQ(flats[0].n_nodes(), 4095);
  auto seq = make("sequential", EvalOptions{});
  const auto want = run(*seq, d, trees);
  auto faithful = make("cuda", faithful_options());
  expect_equivalent(d, trees, run(*faithful, d, trees), want, kCoefTol, kErrTol, true, "faithful");
  EXPECT_EQ(faithful->describe().value("estimate_errors_tables", ""), "shared");  // the last tree is small
  const std::vector<const FlatTree*> deep{trees[0]};
  expect_equivalent(d, deep, run(*faithful, d, deep), run(*seq, d, deep), kCoefTol, kErrTol, true, "faithful deep");
  EXPECT_EQ(faithful->describe().value("estimate_errors_tables", ""), "global");
  auto fast = make("cuda", fast_options());
  expect_equivalent(d, trees, run(*fast, d, trees), want, kCoefTol, kErrTol, true, "fast");
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
    Population pop = population(*c.data, 10, c.depth, c.attrs, 21);
    // An empty leaf: a test that sends every row left.
    auto root = std::make_unique<Node>();
    root->attr = 0;
    root->threshold = 100.0f;
    root->left = std::make_unique<Node>();
    root->left->make_leaf(c.attrs > 0 ? std::vector<int>{0, 1} : std::vector<int>{});  // NaN data: intercepts only
    root->right = std::make_unique<Node>();
    root->right->make_leaf(c.attrs > 0 ? std::vector<int>{1} : std::vector<int>{});
    pop.flats.emplace_back();
    flatten(root.get(), static_cast<int>(c.data->cols()), 77, pop.flats.back());
    pop.roots.push_back(std::move(root));
    const auto trees = pop.ptrs();
    auto seq = make("sequential", EvalOptions{});
    const auto want = run(*seq, *c.data, trees);
    for (const EvalOptions& o : {fast_options(), fast_options(EvalOptions::GramEngine::kDmma), faithful_options()}) {
      auto e = make("cuda", o);
      expect_equivalent(*c.data, trees, run(*e, *c.data, trees), want, kCoefTol, kErrTol, true,
                        std::string(c.name) + " " + e->describe().value("path", "?"));
    }
    if (c.attrs > 0) {  // on the NaN data, rows with x1 = NaN go right
      EXPECT_EQ(want.back().nodes[2].count, 0);
    }
  }
}

TEST(GmtCuda, ModelsWiderThanTheBatchedSolverTakeTheExactSolver) {
  GMT_REQUIRE_CUDA();
  const Dataset d = gmt_test::make_dataset(3000, 130, 2, gmt_test::piecewise, 0.2);
  auto root = std::make_unique<Node>();
  root->attr = 0;
  root->threshold = 5.0f;
  root->left = std::make_unique<Node>();
  std::vector<int> all(130);
  for (int a = 0; a < 130; ++a) all[static_cast<std::size_t>(a)] = a;
  root->left->make_leaf(all);  // width 132 > kMaxWidth
  root->right = std::make_unique<Node>();
  root->right->make_leaf({0, 5});
  FlatTree f;
  flatten(root.get(), 130, 3, f);
  const std::vector<const FlatTree*> trees{&f};
  auto seq = make("sequential", EvalOptions{});
  auto fast = make("cuda", fast_options());
  expect_equivalent(d, trees, run(*fast, d, trees), run(*seq, d, trees), kCoefTol, kErrTol, true, "wide");
  EXPECT_GE(fast->describe().value("exact_solver_leaves", 0), 1);
}

TEST(GmtCuda, EmptyBatchAndTooLittleDeviceMemory) {
  GMT_REQUIRE_CUDA();
  const Dataset d = gmt_test::make_dataset(5000, 3, 2, gmt_test::piecewise, 0.1);
  for (const EvalOptions& base : {fast_options(), faithful_options()}) {
    auto e = make("cuda", base);
    e->prepare(d);
    std::vector<EvalOutput> out = poisoned(3);
    PhaseTimer t;
    e->evaluate({}, out, t);
    EXPECT_TRUE(out.empty());
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
    const Population pop = population(d, 8, 5, 2.0, 1);
    EXPECT_THROW(e->evaluate(pop.ptrs(), out, t), Unavailable);
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
  EXPECT_GE(rec.metrics["batch_sample_batches"].get<int>(), 3);  // generations 3, 6, 9, 12 (+ repair passes)
  for (const char* ph : {"redistribute", "separate", "calc_models", "estimate_errors", "reduction", "transfers"}) {
    EXPECT_GT(rec.breakdown.seconds(ph), 0.0) << ph;
    for (const auto& p : rec.breakdown.phases())
      if (p.name == ph) {
        EXPECT_EQ(p.clock, PhaseClock::device) << ph;
      }
  }
  EXPECT_GT(rec.breakdown.seconds("cpu_ea"), 0.0);
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
