// Every registered GMT evaluator against the independent reference (tests/gmt/reference.hpp:
// modified Gram-Schmidt in long double, row-by-row errors) and against the reference backend:
// identical node counts, leaf assignment (through counts and dipoles), rank decisions and
// dipoles; coefficients and SSE/SAE within a stated tolerance. Data: piecewise-linear targets,
// NaN cells (routed right), a constant column (dropped by the rank rule), small leaves with fewer
// rows than model columns, and leaves that keep their model (refit = 0).
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

TEST_P(GmtEquivalence, EveryBackendMatchesTheIndependentReference) {
  auto eval = backend();
  auto ref_backend = reference();
  for (const Case& c : cases()) {
    SCOPED_TRACE(c.name);
    EvalOptions o;
    o.chunk_rows = 1000;
    o.qr_block_rows = 700;
    o.threads = 3;
    eval->configure(o);
    ref_backend->configure(o);
    eval->prepare(c.data);
    ref_backend->prepare(c.data);
    PhaseTimer t;
    GmtParams p;
    p.init_max_depth = c.depth;
    p.init_model_attrs = c.model_attrs;
    GmtEA ea(p, *ref_backend, c.data, t);
    Rng rng(77);
    std::vector<std::unique_ptr<Node>> trees;
    std::vector<FlatTree> flats(10);
    std::vector<const FlatTree*> ptrs;
    for (int i = 0; i < 10; ++i) {
      trees.push_back(ea.init_tree(rng));
      flatten(trees.back().get(), static_cast<int>(c.data.cols()), static_cast<std::uint64_t>(i + 1), flats[static_cast<std::size_t>(i)]);
      ptrs.push_back(&flats[static_cast<std::size_t>(i)]);
    }
    // Two trees keep their leaf models (refit = 0): their coefficients must pass through.
    for (int i : {3, 7}) {
      FlatTree& f = flats[static_cast<std::size_t>(i)];
      for (int l = 0; l < f.n_leaves(); ++l) {
        f.refit[static_cast<std::size_t>(l)] = 0;
        for (int k = 0; k <= f.cols; ++k) f.coef[static_cast<std::size_t>(l * (f.cols + 1) + k)] = 0.5 * (k + 1) - l;
      }
    }
    double tss = 0;
    for (std::size_t r = 0; r < c.data.rows(); ++r) tss += double(c.data.target(r)) * c.data.target(r);
    std::vector<EvalOutput> got, want;
    PhaseTimer t_ref;  // its own: a device backend's 'transfers' is on the device clock, the reference's on the host's
    eval->evaluate(ptrs, got, t);
    ref_backend->evaluate(ptrs, want, t_ref);
    ASSERT_EQ(got.size(), ptrs.size());
    int small_leaves = 0;
    for (std::size_t k = 0; k < ptrs.size(); ++k) {
      SCOPED_TRACE("tree " + std::to_string(k));
      const EvalOutput ind = gmt_test::reference_evaluate(c.data, *ptrs[k], o);
      const FlatTree& f = *ptrs[k];
      ASSERT_EQ(got[k].nodes.size(), ind.nodes.size());
      ASSERT_EQ(got[k].rank, ind.rank);  // identical rank decisions (refit = 0 leaves: -1)
      for (std::size_t i = 0; i < ind.nodes.size(); ++i) {
        if (f.attr[i] == kAbsentNode) continue;
        const NodeStats &g = got[k].nodes[i], &e = ind.nodes[i];
        EXPECT_EQ(g.count, e.count) << "node " << i;
        EXPECT_EQ(g.dipole_lo, e.dipole_lo) << "node " << i;
        EXPECT_EQ(g.dipole_hi, e.dipole_hi) << "node " << i;
        EXPECT_EQ(g.dipole_rand, e.dipole_rand) << "node " << i;
        EXPECT_NEAR(g.sse, e.sse, kErrTol * (e.sse + 1e-4 * tss)) << "node " << i;
        EXPECT_NEAR(g.sae, e.sae, kErrTol * (e.sae + 1e-4 * std::sqrt(tss))) << "node " << i;
        // the reference backend itself: bit-identical integers, same arithmetic family
        EXPECT_EQ(g.count, want[k].nodes[i].count);
      }
      for (int l = 0; l < f.n_leaves(); ++l) {
        const auto L = static_cast<std::size_t>(l);
        if (ind.nodes[static_cast<std::size_t>(f.leaf_node[L])].count < f.cols + 1) ++small_leaves;
        double scale = 1e-300;
        for (int j = 0; j <= f.cols; ++j) scale = std::max(scale, std::fabs(ind.coef[L * (f.cols + 1) + j]));
        for (int j = 0; j <= f.cols; ++j)
          EXPECT_NEAR(got[k].coef[L * (f.cols + 1) + j], ind.coef[L * (f.cols + 1) + j], kCoefTol * scale)
              << "leaf " << l << " coef " << j;
      }
    }
    if (c.name.rfind("small leaves", 0) == 0) EXPECT_GT(small_leaves, 0) << "the case must produce leaves with fewer rows than columns";
  }
}

GPUDM_INSTANTIATE_EQUIVALENCE(GmtEquivalence, GmtTraits);

}  // namespace
