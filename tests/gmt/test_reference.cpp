// Every registered GMT evaluator against the independent reference (tests/gmt/reference.hpp:
// modified Gram-Schmidt in long double, row-by-row errors) and against the reference backend:
// identical node counts, leaf assignment (through counts and dipoles), rank decisions and
// dipoles; coefficients and SSE/SAE within a stated tolerance. Data: piecewise-linear targets,
// NaN cells (routed right), a constant column (dropped by the rank rule), small leaves with fewer
// rows than model columns, leaves that keep their model (clean), and trees deeper than 20 levels
// with hundreds of leaves.
#include <gtest/gtest.h>

#include <cmath>

#include "algorithms/core/rng.hpp"
#include "algorithms/gmt/ea.hpp"
#include "algorithms/gmt/tree.hpp"
#include "common.hpp"
#include "reference.hpp"
#include "tests/common/equivalence.hpp"

using namespace gpudm;
using namespace gpudm::gmt;

namespace {

struct GmtTraits {
  using Interface = ModelTreeEvaluator;
  static constexpr const char* kFamily = "gmt";
  static void register_backends(Registry& r) { register_gmt(r); }
};
using GmtEquivalence = gpudm::testing::IsEquivalentToRef<GmtTraits>;

// Coefficients: relative to the largest coefficient of the leaf (data in [0, 10], targets of
// order 10: the fits are well conditioned, so double Householder and long-double Gram-Schmidt
// agree to ~1e-12; 1e-8 leaves room for float32 device paths' inputs, which are the same floats).
constexpr double kCoefTol = 1e-8;
// SSE/SAE: relative to the node's error plus 1e-12 x the dataset's sum of squared targets (an
// exact fit has SSE ~ 1e-25 on either side, which no relative test can compare).
constexpr double kErrTol = 1e-8;

struct Case {
  std::string name;
  Dataset data;
  int depth;
  double model_attrs;
};

Dataset with_quirks(Dataset d, std::uint64_t seed, bool nan, bool constant_col) {
  Rng rng(seed);
  if (constant_col)
    for (std::size_t r = 0; r < d.rows(); ++r) d.at(r, d.cols() - 1) = 3.25f;
  if (nan)
    for (std::size_t r = 0; r < d.rows(); ++r)
      if (rng.bernoulli(0.03)) d.set_missing(r, rng.below(d.cols()));
  return d;
}

std::vector<Case> cases() {
  std::vector<Case> v;
  v.push_back({"piecewise 20000x5", gmt_test::make_dataset(20000, 5, 31, gmt_test::piecewise, 0.2), 6, 3});
  v.push_back({"nan routing 5000x4",
               with_quirks(gmt_test::make_dataset(5000, 4, 8, gmt_test::piecewise, 0.1), 9, true, false), 6, 0});
  // NaN only routes (models are intercepts: a NaN model input makes a NaN model on every backend)
  v.push_back({"constant column 5000x4", with_quirks(gmt_test::make_dataset(5000, 4, 8, gmt_test::piecewise, 0.1), 9, false, true), 6, 3});
  v.push_back({"small leaves 60x6", gmt_test::make_dataset(60, 6, 5, gmt_test::piecewise, 0.5), 8, 5});
  return v;
}

EvalOptions options() {
  EvalOptions o;
  o.chunk_rows = 1000;
  o.qr_block_rows = 700;
  o.threads = 3;
  return o;
}

// Evaluates copies of `inputs` (salts 1, 2, ...) on `eval` and on the reference backend, and
// checks both against the independent reference. Returns the leaves with fewer rows than columns.
int check_against_reference(ModelTreeEvaluator& eval, ModelTreeEvaluator& ref_backend, const Dataset& data,
                            const std::vector<Tree>& inputs) {
  const EvalOptions o = eval.options();
  std::vector<Tree> got = inputs, want = inputs;
  PhaseTimer t, t_ref;  // one each: a device backend's 'transfers' is on the device clock, the reference's on the host's
  eval.evaluate(gmt_test::batch_of(got, 1), t);
  ref_backend.evaluate(gmt_test::batch_of(want, 1), t_ref);
  const double tss = gmt_test::target_ss(data);
  gmt_test::ReferenceTolerance tol;
  tol.coef = kCoefTol;
  tol.err = kErrTol;
  tol.sae_may_be_nan = eval.capabilities().device();
  int small_leaves = 0;
  for (std::size_t k = 0; k < inputs.size(); ++k) {
    SCOPED_TRACE("tree " + std::to_string(k));
    EXPECT_EQ(gmt_test::layout_error(got[k], static_cast<int>(data.cols())), "");
    const gmt_test::ReferenceResult ind = gmt_test::reference_evaluate(data, inputs[k], k + 1, o);
    small_leaves += gmt_test::expect_matches_reference(got[k], inputs[k], ind, tss, static_cast<int>(data.cols()), tol);
    // the reference backend itself: bit-identical integers, same arithmetic family
    EXPECT_EQ(got[k].size(), want[k].size());
    for (int i = 0; i < std::min(got[k].size(), want[k].size()); ++i) {
      EXPECT_EQ(got[k].node(i).stats.count, want[k].node(i).stats.count) << "node " << i;
      EXPECT_EQ(got[k].node(i).stats.dipole_rand, want[k].node(i).stats.dipole_rand) << "node " << i;
    }
  }
  return small_leaves;
}

TEST_P(GmtEquivalence, EveryBackendMatchesTheIndependentReference) {
  auto eval = backend();
  auto ref_backend = reference();
  for (const Case& c : cases()) {
    SCOPED_TRACE(c.name);
    eval->configure(options());
    ref_backend->configure(options());
    eval->prepare(c.data);
    ref_backend->prepare(c.data);
    PhaseTimer t;
    GmtParams p;
    p.init_max_depth = c.depth;
    p.init_model_attrs = c.model_attrs;
    GmtEA ea(p, *ref_backend, c.data, t);
    Rng rng(77);
    std::vector<Tree> trees;
    for (int i = 0; i < 10; ++i) trees.push_back(ea.init_tree(rng));
    // Two trees keep their leaf models (clean leaves): their coefficients must pass through.
    for (int i : {3, 7}) gmt_test::make_clean(trees[static_cast<std::size_t>(i)]);
    const int small_leaves = check_against_reference(*eval, *ref_backend, c.data, trees);
    if (c.name.rfind("small leaves", 0) == 0) {
      EXPECT_GT(small_leaves, 0) << "the case must produce leaves with fewer rows than columns";
    }
  }
}

// ---- deep and wide trees ---------------------------------------------------------------------

// A random model over `model_cols` (each with probability 1/2).
std::vector<int> random_model(Rng& rng, const std::vector<int>& model_cols) {
  std::vector<int> a;
  for (int c : model_cols)
    if (rng.bernoulli(0.5)) a.push_back(c);
  return a;
}

// A balanced subtree of `levels` levels over `rows`: random test attributes, thresholds at a random
// row's value (5 where that is NaN or there are no rows).
Tree balanced(const Dataset& d, const std::vector<std::size_t>& rows, int levels, Rng& rng, const std::vector<int>& model_cols) {
  if (levels <= 1) return Tree::leaf(random_model(rng, model_cols));
  const int attr = rng.below_int(static_cast<int>(d.cols()));
  float thr = rows.empty() ? 5.0f : d.at(rows[rng.below(rows.size())], static_cast<std::size_t>(attr));
  if (std::isnan(thr)) thr = 5.0f;
  std::vector<std::size_t> l, r;
  for (std::size_t row : rows) (d.at(row, static_cast<std::size_t>(attr)) <= thr ? l : r).push_back(row);
  const Tree lt = balanced(d, l, levels - 1, rng, model_cols);
  const Tree rt = balanced(d, r, levels - 1, rng, model_cols);
  return Tree::join(attr, thr, lt, rt);
}

// A chain of `chain` tests down the right side, each sending about 15 % of its rows left into a
// balanced subtree of `sub_levels` levels; the chain ends in one more balanced subtree.
Tree deep_tree(const Dataset& d, std::vector<std::size_t> rows, int chain, int sub_levels, Rng& rng,
               const std::vector<int>& model_cols) {
  if (chain == 0) return balanced(d, rows, sub_levels, rng, model_cols);
  const int attr = rng.below_int(4);  // not the constant column (the chain must go on)
  std::vector<float> v;
  for (std::size_t r : rows)
    if (!std::isnan(d.at(r, static_cast<std::size_t>(attr)))) v.push_back(d.at(r, static_cast<std::size_t>(attr)));
  std::sort(v.begin(), v.end());
  const float thr = v.empty() ? 5.0f : v[static_cast<std::size_t>(0.15 * double(v.size() - 1))];
  std::vector<std::size_t> l, r;
  for (std::size_t row : rows) (d.at(row, static_cast<std::size_t>(attr)) <= thr ? l : r).push_back(row);
  const Tree lt = balanced(d, l, sub_levels, rng, model_cols);
  const Tree rt = deep_tree(d, r, chain - 1, sub_levels, rng, model_cols);
  return Tree::join(attr, thr, lt, rt);
}

TEST_P(GmtEquivalence, DeepWideTreesMatchTheIndependentReference) {
  // 30000 rows x 6: NaN cells in x1 and x2 (tests only), x6 constant; models over x3 .. x6.
  Dataset d = gmt_test::make_dataset(30000, 6, 41, gmt_test::piecewise, 0.3);
  {
    Rng rng(5);
    for (std::size_t r = 0; r < d.rows(); ++r) {
      d.at(r, 5) = 3.25f;
      for (std::size_t c : {0, 1})
        if (rng.bernoulli(0.03)) d.set_missing(r, c);
    }
  }
  const std::vector<int> model_cols{2, 3, 4, 5};
  std::vector<std::size_t> all(d.rows());
  for (std::size_t r = 0; r < d.rows(); ++r) all[r] = r;
  Rng rng(99);
  std::vector<Tree> trees;
  trees.push_back(deep_tree(d, all, 24, 6, rng, model_cols));  // 25 x 32 leaves, 30 levels
  trees.push_back(deep_tree(d, all, 21, 6, rng, model_cols));  // 22 x 32 leaves, 27 levels
  trees.push_back(trees[0]);  // the same tree with clean leaves
  gmt_test::make_clean(trees[2]);
  trees.push_back(trees[1]);  // every other leaf clean
  {
    Tree& t = trees[3];
    gmt_test::make_clean(t);
    int l = 0;
    for (int i = 0; i < t.size(); ++i)
      if (t.node(i).is_leaf() && (l++ % 2 == 0)) t.mark_dirty(i);
  }
  for (const Tree& t : trees) {
    ASSERT_EQ(gmt_test::layout_error(t, 6), "");
    EXPECT_GT(t.levels(), 20);
    EXPECT_GE(t.n_leaves(), 500);
  }
  auto eval = backend();
  auto ref_backend = reference();
  eval->configure(options());
  ref_backend->configure(options());
  eval->prepare(d);
  ref_backend->prepare(d);
  const int small_leaves = check_against_reference(*eval, *ref_backend, d, trees);
  EXPECT_GT(small_leaves, 20) << "the trees must have leaves with fewer rows than columns";
  // Empty leaves and leaves where the constant column (or few rows) drops an attribute.
  int empty = 0, dropped = 0;
  std::vector<Tree> again = {trees[0]};
  PhaseTimer t;
  eval->evaluate(gmt_test::batch_of(again, 1), t);
  for (int i = 0; i < again[0].size(); ++i) {
    if (!again[0].node(i).is_leaf()) continue;
    empty += again[0].node(i).stats.count == 0;
    dropped += again[0].attrs(i).size() < trees[0].attrs(i).size();
  }
  EXPECT_GT(empty, 0);
  EXPECT_GT(dropped, 50);
}

GPUDM_INSTANTIATE_EQUIVALENCE(GmtEquivalence, GmtTraits);

}  // namespace
