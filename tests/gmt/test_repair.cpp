// The repair rule folded into one evaluator call (algorithms/gmt/repair.*) against the iterated
// procedure, written here by hand and independently of repair.cpp: evaluate without
// repairs, one top-down repair pass from the evaluated counts (the topmost
// nodes with a child under min_rows; promote the populated child's subtree or make the node a
// leaf), evaluate the repaired tree in full, repeat until no node needs a repair. And repair_tree's
// bookkeeping (which rows each leaf of the repaired tree holds) against routing every row.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <functional>

#include "algorithms/core/rng.hpp"
#include "algorithms/gmt/ea.hpp"
#include "algorithms/gmt/eval_steps.hpp"
#include "algorithms/gmt/repair.hpp"
#include "common.hpp"

using namespace gpudm;
using namespace gpudm::gmt;

namespace {

// One top-down pass over an evaluated tree (its stats.count): the repaired tree, or false when no
// node has a child under min_rows. `repaired` counts the nodes repaired.
bool old_repair_pass(const Tree& t, const RepairSpec& spec, Tree& out, int& repaired) {
  const std::int64_t min_rows = spec.min_rows;
  bool any = false;
  std::function<Tree(int)> rebuild = [&](int i) -> Tree {
    const TreeNode& n = t.node(i);
    if (n.is_leaf()) return t.extract(i);
    const std::int64_t cl = t.node(n.left).stats.count, cr = t.node(n.left + 1).stats.count;
    if (cl < min_rows || cr < min_rows) {
      any = true;
      ++repaired;
      const int big = cl >= cr ? n.left : n.left + 1;
      if (spec.mode == RepairMode::promote && !t.node(big).is_leaf() && t.node(big).stats.count >= min_rows) {
        Tree s = t.extract(big);  // the populated subtree takes the node's place, refit
        s.mark_dirty(0);
        return s;
      }
      std::vector<int> attrs;  // a leaf: the big child's model attributes when it is a leaf
      if (t.node(big).is_leaf()) attrs.assign(t.attrs(big).begin(), t.attrs(big).end());
      return Tree::leaf(attrs);
    }
    const Tree l = rebuild(n.left), r = rebuild(n.left + 1);
    return Tree::join(n.attr, n.threshold, l, r);
  };
  out = rebuild(0);
  return any;
}

struct OldResult {
  Tree tree;
  int passes = 0, repaired = 0;
};

// The iterated procedure, with no cap on the passes: full evaluations between the passes.
// undo_drops: before each pass, the leaves the evaluation refit get back the model attributes the
// rank rule dropped (dirty: refit again at the next evaluation), as if the intermediate trees had
// not been fitted (what the folded call does: one fit, on the final rows).
OldResult old_procedure(ModelTreeEvaluator& eval, const Tree& input, std::uint64_t salt, const RepairSpec& spec,
                        bool undo_drops = false) {
  OldResult r;
  r.tree = input;
  PhaseTimer t;
  for (;;) {
    std::vector<std::vector<int>> given(static_cast<std::size_t>(r.tree.size()));
    for (int i = 0; i < r.tree.size(); ++i)
      if (r.tree.node(i).is_leaf() && r.tree.leaf_needs_refit(i)) given[static_cast<std::size_t>(i)].assign(r.tree.attrs(i).begin(), r.tree.attrs(i).end());
    eval.evaluate(single(r.tree, salt), t);
    Tree before_pass = r.tree;
    if (undo_drops)
      for (int i = 0; i < before_pass.size(); ++i)
        if (before_pass.node(i).is_leaf() && before_pass.attrs(i).size() < given[static_cast<std::size_t>(i)].size())
          before_pass.set_model(i, given[static_cast<std::size_t>(i)]);
    Tree next;
    if (!old_repair_pass(before_pass, spec, next, r.repaired)) break;
    ++r.passes;
    r.tree = std::move(next);
  }
  return r;
}

// Everything about two evaluated trees, bit for bit: structure, models, ranks, flags, statistics.
void expect_identical(const Tree& a, const Tree& b) {
  ASSERT_EQ(a.size(), b.size());
  EXPECT_TRUE(a.same_model(b));
  for (int i = 0; i < a.size(); ++i) {
    const TreeNode &x = a.node(i), &y = b.node(i);
    EXPECT_EQ(x.attr, y.attr) << "node " << i;
    EXPECT_EQ(x.threshold, y.threshold) << "node " << i;
    EXPECT_EQ(x.left, y.left) << "node " << i;
    EXPECT_EQ(x.stats.count, y.stats.count) << "node " << i;
    EXPECT_EQ(x.stats.sse, y.stats.sse) << "node " << i;
    EXPECT_EQ(x.stats.sae, y.stats.sae) << "node " << i;
    EXPECT_EQ(x.stats.dipole_lo, y.stats.dipole_lo) << "node " << i;
    EXPECT_EQ(x.stats.dipole_hi, y.stats.dipole_hi) << "node " << i;
    EXPECT_EQ(x.stats.dipole_rand, y.stats.dipole_rand) << "node " << i;
    if (x.is_leaf()) {
      EXPECT_EQ(std::vector<int>(a.attrs(i).begin(), a.attrs(i).end()), std::vector<int>(b.attrs(i).begin(), b.attrs(i).end()))
          << "leaf " << i;
      EXPECT_EQ(std::vector<double>(a.coef(i).begin(), a.coef(i).end()), std::vector<double>(b.coef(i).begin(), b.coef(i).end()))
          << "leaf " << i;
      EXPECT_EQ(x.rank, y.rank) << "leaf " << i;
      EXPECT_EQ(x.dirty, y.dirty) << "leaf " << i;
      EXPECT_EQ(x.has_coef, y.has_coef) << "leaf " << i;
    }
  }
}

// Only the shape: tests, thresholds, children.
void expect_same_shape(const Tree& a, const Tree& b) {
  ASSERT_EQ(a.size(), b.size());
  for (int i = 0; i < a.size(); ++i) {
    EXPECT_EQ(a.node(i).attr, b.node(i).attr) << "node " << i;
    EXPECT_EQ(a.node(i).left, b.node(i).left) << "node " << i;
    if (!a.node(i).is_leaf()) {
      EXPECT_EQ(a.node(i).threshold, b.node(i).threshold) << "node " << i;
    }
  }
}

// Routing counts by routing every row: leaves' counts (internal entries hold garbage: repair_tree
// must not read them) and the rows of the leaves with 0 < count < min_rows.
RoutedCounts brute_routed(const Dataset& d, const Tree& t, int min_rows) {
  const auto rows = gmt_test::rows_per_node(d, t);
  RoutedCounts rc;
  rc.reset(t.size());
  for (int i = 0; i < t.size(); ++i) {
    const auto I = static_cast<std::size_t>(i);
    if (!t.node(i).is_leaf()) {
      rc.count[I] = -777;
      continue;
    }
    rc.count[I] = static_cast<std::int64_t>(rows[I].size());
    if (rc.count[I] > 0 && rc.count[I] < min_rows) {
      rc.small_begin[I] = static_cast<std::int32_t>(rc.small_rows.size());
      for (std::size_t r : rows[I]) rc.small_rows.push_back(static_cast<std::int64_t>(r));
    }
  }
  return rc;
}

// A pool of trees with small leaves: initial trees grown down to 1-row subsamples, the same trees
// evaluated and then mutated / crossed (their clean leaves kept).
std::vector<Tree> trees_with_small_leaves(const Dataset& d, ModelTreeEvaluator& eval, std::uint64_t seed, double model_attrs) {
  PhaseTimer t;
  GmtParams p;
  p.min_leaf_rows = 1;         // initial trees split down to 2-row subsamples
  p.init_max_depth = 9;
  p.init_sample_fraction = 0.5;
  p.init_model_attrs = model_attrs;
  p.max_depth = 14;
  GmtEA ea(p, eval, d, t);
  Rng rng(seed);
  std::vector<Tree> out;
  std::vector<Individual> pop(12);
  for (auto& ind : pop) {
    ind.tree = ea.init_tree(rng);
    out.push_back(ind.tree);
  }
  std::vector<Individual*> ptrs;
  for (auto& ind : pop) ptrs.push_back(&ind);
  ea.evaluate(ptrs);  // min_leaf_rows 1: repairs only empty sides
  for (int round = 0; round < 3; ++round)
    for (std::size_t k = 0; k < pop.size(); ++k) {
      Individual a = pop[k], b = pop[(k + 1) % pop.size()];
      for (int m = 0; m < 3; ++m) ea.mutate(a, rng);
      if (ea.crossover(a, b, rng) != 0) out.push_back(b.tree);
      out.push_back(a.tree);
    }
  return out;
}

struct Setting {
  const char* name;
  RepairSpec spec;
  std::size_t cols;
  double model_attrs;
};

}  // namespace

// Folded (one call) == iterated (old_procedure), on trees whose leaf models cannot lose an
// attribute in the intermediate evaluations: constant models, or one-attribute models on data
// where every leaf of two rows or more determines its slope. (With richer models the iterated
// procedure can refit a leaf on its rows of an intermediate tree, where the rank rule drops an
// attribute the final rows would keep; see FoldedRepairsMatchIteratedRepairsInShapeAndCounts.)
TEST(GmtRepair, FoldedRepairsEqualIteratedRepairsBitForBit) {
  const Setting settings[] = {
      {"promote 5, constant models", {5, RepairMode::promote}, 3, 0.0},
      {"collapse 5, constant models", {5, RepairMode::collapse}, 3, 0.0},
      {"promote 12, constant models", {12, RepairMode::promote}, 2, 0.0},
      {"collapse 3, constant models", {3, RepairMode::collapse}, 2, 0.0},
  };
  int repaired_trees = 0, multi_pass = 0;
  for (const Setting& s : settings) {
    SCOPED_TRACE(s.name);
    const Dataset d = gmt_test::make_dataset(400, s.cols, 13, gmt_test::piecewise, 0.2);
    auto eval = gmt_test::registry().create<ModelTreeEvaluator>("gmt", "sequential");
    EvalOptions o;
    o.chunk_rows = 64;
    eval->configure(o);
    eval->prepare(d);
    const std::vector<Tree> trees = trees_with_small_leaves(d, *eval, 21, s.model_attrs);
    for (std::size_t k = 0; k < trees.size(); ++k) {
      SCOPED_TRACE("tree " + std::to_string(k));
      const std::uint64_t salt = 1000 + k;
      const OldResult old = old_procedure(*eval, trees[k], salt, s.spec);
      Tree folded = trees[k];
      PhaseTimer t;
      const EvalCounters before = eval->counters();
      eval->evaluate(single(folded, salt, s.spec), t);
      const EvalCounters& after = eval->counters();
      EXPECT_EQ(after.repairs - before.repairs, old.repaired);
      EXPECT_EQ(after.repaired_trees - before.repaired_trees, old.repaired > 0 ? 1 : 0);
      EXPECT_EQ(after.calls - before.calls, 1);
      expect_identical(folded, old.tree);
      EXPECT_EQ(gmt_test::layout_error(folded, static_cast<int>(d.cols())), "");
      repaired_trees += old.passes > 0;
      multi_pass += old.passes > 1;
    }
  }
  EXPECT_GT(repaired_trees, 100);
  EXPECT_GT(multi_pass, 10) << "the trees must need several passes";
}

// With models of several attributes: the same shape, counts and dipoles always; the models too,
// except where the iterated procedure's intermediate refits dropped attributes (counted, and explained:
// the iterated procedure with those drops undone gives the folded result bit for bit).
TEST(GmtRepair, FoldedRepairsMatchIteratedRepairsInShapeAndCounts) {
  const Setting settings[] = {
      {"promote 5", {5, RepairMode::promote}, 3, 2.0},
      {"collapse 5", {5, RepairMode::collapse}, 3, 2.0},
      {"promote 8, 5 columns", {8, RepairMode::promote}, 5, 3.0},
      {"collapse 8, 5 columns", {8, RepairMode::collapse}, 5, 3.0},
  };
  int repaired_trees = 0, differing = 0;
  for (const Setting& s : settings) {
    SCOPED_TRACE(s.name);
    const Dataset d = gmt_test::make_dataset(400, s.cols, 17, gmt_test::piecewise, 0.2);
    auto eval = gmt_test::registry().create<ModelTreeEvaluator>("gmt", "sequential");
    EvalOptions o;
    o.chunk_rows = 64;
    o.qr_block_rows = 16;
    eval->configure(o);
    eval->prepare(d);
    const std::vector<Tree> trees = trees_with_small_leaves(d, *eval, 5, s.model_attrs);
    for (std::size_t k = 0; k < trees.size(); ++k) {
      SCOPED_TRACE("tree " + std::to_string(k));
      const std::uint64_t salt = 7 + k;
      const OldResult old = old_procedure(*eval, trees[k], salt, s.spec);
      Tree folded = trees[k];
      PhaseTimer t;
      const std::int64_t repairs0 = eval->counters().repairs;
      eval->evaluate(single(folded, salt, s.spec), t);
      EXPECT_EQ(eval->counters().repairs - repairs0, old.repaired);
      expect_same_shape(folded, old.tree);
      for (int i = 0; i < std::min(folded.size(), old.tree.size()); ++i) {
        EXPECT_EQ(folded.node(i).stats.count, old.tree.node(i).stats.count) << "node " << i;
        EXPECT_EQ(folded.node(i).stats.dipole_lo, old.tree.node(i).stats.dipole_lo) << "node " << i;
        EXPECT_EQ(folded.node(i).stats.dipole_hi, old.tree.node(i).stats.dipole_hi) << "node " << i;
        EXPECT_EQ(folded.node(i).stats.dipole_rand, old.tree.node(i).stats.dipole_rand) << "node " << i;
      }
      repaired_trees += old.passes > 0;
      // The iterated procedure without its intermediate attribute drops: the folded result, bit for bit.
      const OldResult undone = old_procedure(*eval, trees[k], salt, s.spec, true);
      EXPECT_EQ(undone.repaired, old.repaired);
      expect_identical(folded, undone.tree);
      if (folded.same_model(old.tree)) {
        expect_identical(folded, old.tree);
        continue;
      }
      ++differing;
      // Every differing leaf: the iterated result's attributes a strict subset of the folded model's.
      for (int i = 0; i < folded.size(); ++i) {
        if (!folded.node(i).is_leaf()) continue;
        const std::vector<int> fa(folded.attrs(i).begin(), folded.attrs(i).end()), oa(old.tree.attrs(i).begin(), old.tree.attrs(i).end());
        if (fa == oa) continue;
        EXPECT_TRUE(std::includes(fa.begin(), fa.end(), oa.begin(), oa.end()) && oa.size() < fa.size()) << "leaf " << i;
      }
    }
  }
  EXPECT_GT(repaired_trees, 100);
  EXPECT_GT(differing, 0) << "the settings must show the intermediate refits' effect";
  // (how many trees the intermediate refits changed: reported)
  std::printf("[ info ] %d repaired trees, %d with models changed by the old procedure's intermediate refits\n", repaired_trees, differing);
}

// repair_tree's outcome against routing every row through the original and the repaired tree:
// the counts of every node, and each leaf's rows as (origin, extra).
TEST(GmtRepair, RepairOutcomeAccountsForEveryRow) {
  int checked = 0, with_extra = 0, origin_new = 0, origin_mixed = 0;
  for (RepairMode mode : {RepairMode::promote, RepairMode::collapse})
    for (int min_rows : {2, 5, 9}) {
      SCOPED_TRACE(std::string(mode == RepairMode::promote ? "promote " : "collapse ") + std::to_string(min_rows));
      const RepairSpec spec{min_rows, mode};
      const Dataset d = gmt_test::make_dataset(300, 3, 29, gmt_test::piecewise, 0.2);
      auto eval = gmt_test::registry().create<ModelTreeEvaluator>("gmt", "sequential");
      eval->prepare(d);
      const std::vector<Tree> trees = trees_with_small_leaves(d, *eval, 31 + static_cast<std::uint64_t>(min_rows), 2.0);
      for (std::size_t k = 0; k < trees.size(); ++k) {
        SCOPED_TRACE("tree " + std::to_string(k));
        const Tree& t = trees[k];
        const RoutedCounts rc = brute_routed(d, t, min_rows);
        // The evaluator's routing gives the same counts and small rows.
        {
          EvalWork w;
          EvalOptions o;
          o.chunk_rows = 37;
          w.begin(d, t, o, 1);
          for (int c = 0; c < w.n_chunks(); ++c) w.redistribute_chunk(c);
          w.separate_offsets();
          for (int c = 0; c < w.n_chunks(); ++c) w.separate_chunk(c);
          RoutedCounts ev;
          w.routed_counts(min_rows, ev);
          for (int i = 0; i < t.size(); ++i) {
            const auto I = static_cast<std::size_t>(i);
            if (!t.node(i).is_leaf()) continue;
            EXPECT_EQ(ev.count[I], rc.count[I]) << "node " << i;
            ASSERT_EQ(ev.small_begin[I] >= 0, rc.small_begin[I] >= 0) << "node " << i;
            if (rc.small_begin[I] < 0) continue;
            for (std::int64_t q = 0; q < rc.count[I]; ++q)
              EXPECT_EQ(ev.small_rows[static_cast<std::size_t>(ev.small_begin[I] + q)], rc.small_rows[static_cast<std::size_t>(rc.small_begin[I] + q)]);
          }
        }
        // Does any node need a repair (counts summed by hand)?
        const auto rows_t = gmt_test::rows_per_node(d, t);
        bool need = false;
        for (int i = 0; i < t.size(); ++i)
          if (!t.node(i).is_leaf())
            need = need || std::int64_t(rows_t[static_cast<std::size_t>(t.node(i).left)].size()) < min_rows ||
                   std::int64_t(rows_t[static_cast<std::size_t>(t.node(i).left + 1)].size()) < min_rows;
        std::vector<std::int64_t> leaf_count(rc.count);
        EXPECT_EQ(needs_repair(t, spec, leaf_count), need);
        Tree r = t;
        const RepairOutcome o = repair_tree(r, spec, rc, d);
        EXPECT_TRUE(o.complete);
        if (!need) {
          EXPECT_EQ(o.repairs, 0);
          EXPECT_EQ(o.passes, 0);
          EXPECT_TRUE(r.same_model(t));
          continue;
        }
        // The repaired tree: the iterated passes' shape (those depend on the counts only).
        {
          Tree cur = t;
          for (int i = 0; i < cur.size(); ++i) cur.node(i).stats.count = std::int64_t(rows_t[static_cast<std::size_t>(i)].size());
          int repaired = 0, passes = 0;
          for (;;) {
            Tree next;
            if (!old_repair_pass(cur, spec, next, repaired)) break;
            ++passes;
            cur = std::move(next);
            const auto rows_c = gmt_test::rows_per_node(d, cur);
            for (int i = 0; i < cur.size(); ++i) cur.node(i).stats.count = std::int64_t(rows_c[static_cast<std::size_t>(i)].size());
          }
          expect_same_shape(r, cur);
          EXPECT_EQ(o.repairs, repaired);
          EXPECT_EQ(o.passes, passes);
        }
        ASSERT_EQ(gmt_test::layout_error(r, 3), "");
        const auto rows_r = gmt_test::rows_per_node(d, r);
        ASSERT_EQ(o.count.size(), static_cast<std::size_t>(r.size()));
        ASSERT_EQ(o.origin.size(), static_cast<std::size_t>(r.size()));
        ASSERT_EQ(o.extra.size(), static_cast<std::size_t>(r.size()));
        // Original leaf of every row.
        std::vector<int> leaf_t(d.rows());
        for (int i = 0; i < t.size(); ++i)
          if (t.node(i).is_leaf())
            for (std::size_t row : rows_t[static_cast<std::size_t>(i)]) leaf_t[row] = i;
        for (int i = 0; i < r.size(); ++i) {
          const auto I = static_cast<std::size_t>(i);
          EXPECT_EQ(o.count[I], static_cast<std::int64_t>(rows_r[I].size())) << "node " << i;
          if (!r.node(i).is_leaf()) continue;
          ++checked;
          const auto& extra = o.extra[I];
          EXPECT_TRUE(std::is_sorted(extra.begin(), extra.end()));
          std::vector<std::int64_t> want(rows_r[I].begin(), rows_r[I].end());
          const int origin = o.origin[I];
          if (origin >= 0) {
            ASSERT_LT(origin, t.size());
            EXPECT_TRUE(t.node(origin).is_leaf()) << "node " << i << " origin " << origin;
            std::vector<std::int64_t> have(rows_t[static_cast<std::size_t>(origin)].begin(), rows_t[static_cast<std::size_t>(origin)].end());
            have.insert(have.end(), extra.begin(), extra.end());
            std::sort(have.begin(), have.end());
            EXPECT_TRUE(std::adjacent_find(have.begin(), have.end()) == have.end()) << "node " << i << ": extra rows of the origin";
            EXPECT_EQ(have, want) << "node " << i << " origin " << origin;
            with_extra += !extra.empty();
          } else if (origin == -1) {
            EXPECT_EQ(extra, want) << "node " << i;
            ++origin_new;
          } else {
            EXPECT_EQ(origin, -2) << "node " << i;
            EXPECT_TRUE(extra.empty());
            // whole original leaves
            for (std::size_t row : rows_r[I])
              for (std::size_t other : rows_t[static_cast<std::size_t>(leaf_t[row])])
                EXPECT_TRUE(std::binary_search(rows_r[I].begin(), rows_r[I].end(), other)) << "node " << i;
            ++origin_mixed;
          }
          // A leaf whose rows changed refits (what EvalBatch::clean_sse_known relies on).
          const bool same_rows = origin >= 0 && extra.empty() && rows_t[static_cast<std::size_t>(origin)].size() == rows_r[I].size();
          if (!same_rows) {
            EXPECT_TRUE(r.leaf_needs_refit(i)) << "node " << i;
          }
        }
      }
    }
  EXPECT_GT(checked, 1000);
  EXPECT_GT(with_extra, 20);
  EXPECT_GT(origin_new, 5);
  EXPECT_GT(origin_mixed, 5);
}

// Routing counts of leaves under min_rows with no rows (empty leaves, not recorded) are known to be
// empty: a split with an empty side is repaired, never "could not find a small leaf's rows".
TEST(GmtRepair, EmptyLeavesNeedNoRecordedRows) {
  const Dataset d = gmt_test::make_dataset(100, 2, 3, gmt_test::piecewise, 0.1);
  auto eval = gmt_test::registry().create<ModelTreeEvaluator>("gmt", "sequential");
  eval->prepare(d);
  for (RepairMode mode : {RepairMode::promote, RepairMode::collapse}) {
    // x1 <= 100 ? (x2 <= -1 ? LM() : LM(x1)) : (x2 <= 5 ? LM(x2) : LM()): the right side and one
    // leaf on the left are empty
    Tree t = Tree::join(0, 100.0f, Tree::join(1, -1.0f, Tree::leaf({}), Tree::leaf({0})),
                        Tree::join(1, 5.0f, Tree::leaf({1}), Tree::leaf({})));
    const RoutedCounts rc = brute_routed(d, t, 5);
    Tree r = t;
    const RepairOutcome o = repair_tree(r, {5, mode}, rc, d);
    EXPECT_TRUE(o.complete);
    ASSERT_EQ(r.size(), 1);  // root repaired (right side empty), and the left side's empty leaf too
    EXPECT_EQ(o.count[0], 100);
    PhaseTimer timer;
    Tree e = t;
    eval->evaluate(single(e, 1, {5, mode}), timer);
    EXPECT_EQ(e.size(), 1);
    EXPECT_EQ(e.node(0).stats.count, 100);
  }
}
