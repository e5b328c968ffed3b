#pragma once
// An independent small reference of the streaming forest for the equivalence tests, written from
// the paper (Marron, Bifet, De Francisci Morales, ECAI 2014, Sec. 3: VFDT leaves, online bagging,
// one ADWIN per tree, majority vote) and from MOA's HoeffdingTree, ADWIN and ADWINChangeDetector
// as ../shared/reference/streaming_trees.md describes them: pointer trees, per-leaf n_ijk tables,
// ADWIN as rows of bucket queues, one instance after the other. It shares nothing with the CPU
// engine (algorithms/vfdt/cpu_forest.*). From vfdt_math.hpp it takes only
//   * the random draws: poisson1 (a tree's weight of an instance), root_key / child_key and
//     draw_subset (a leaf's attributes) — they define which forest is grown; writing them again
//     would copy the same bits;
//   * xlog2x_fixed (x log2 x in 2^-20 fixed point through det_log2) and, for ADWIN's
//     dd = ln(2 ln W / delta), adwin_check_constants (det_ln): std::log2 / std::log may round
//     differently, and a gain or a bound one ulp apart can flip a split or a cut.
// The rest (gains and their admissibility, best and second best, the Hoeffding bound, the cut
// test, the drift rule) is written here; where it is floating point it uses the same operations in
// the same order as MOA's formulas, so the bits agree.
//
// Mini-batches as forest.hpp defines them: batch_order "deferred" (predict the batch, learn it, feed
// ADWIN, then reset or split-check at the batch end) and "stream" (each tree predicts, learns and
// feeds ADWIN instance by instance and is reset at once; split checks at the batch end). Majority-
// class leaves only (leaf_prediction "mc").
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <deque>
#include <memory>
#include <vector>

#include "algorithms/vfdt/forest.hpp"
#include "algorithms/vfdt/vfdt_math.hpp"

namespace gpudm::vfdt::testing {

// MOA's ADWIN on a 0/1 stream: row r holds buckets of 2^r inputs (oldest first), at most M of them;
// a row that reaches M + 1 merges its two oldest into one bucket of the next row. Every 32 inputs,
// once the window holds more than 10, the oldest bucket is dropped while some boundary between an
// older part W0 and a newer part W1 (both longer than 6) has |mu0 - mu1| > sqrt(2 m v dd) + 2/3 dd m,
// m = 1/(n0 - 4) + 1/(n1 - 4), v = the window's variance, dd = ln(2 ln W / delta).
class ReferenceAdwin {
 public:
  // Feeds one input; true when the window was cut and the drift rule signals (ADWINChangeDetector:
  // the error estimate rose; with `any_cut`, River's rule: every cut).
  bool update(int x, double delta, bool any_cut) {
    const std::uint64_t width_before = width_, ones_before = ones_;
    ++time_;
    insert(static_cast<std::uint64_t>(x));
    bool cut = false;
    if (time_ % 32 == 0 && width_ > 10)
      while (width_ > 0 && some_boundary_cuts(delta)) {
        cut = true;
        drop_oldest();
      }
    if (!cut) return false;
    if (any_cut) return true;
    // estimate after > estimate before, compared exactly: ones/width > ones_before/width_before
    if (width_before == 0) return ones_ > 0;
    return ones_ * width_before > ones_before * width_;
  }

 private:
  struct Bucket {
    std::uint64_t size, ones;
  };
  void insert(std::uint64_t x) {
    width_ += 1;
    ones_ += x;
    if (rows_.empty()) rows_.emplace_back();
    rows_[0].push_back({1, x});
    for (std::size_t r = 0; r < rows_.size() && rows_[r].size() > 5; ++r) {
      const Bucket a = rows_[r].front();
      rows_[r].pop_front();
      const Bucket b = rows_[r].front();
      rows_[r].pop_front();
      if (r + 1 == rows_.size()) rows_.emplace_back();
      rows_[r + 1].push_back({a.size + b.size, a.ones + b.ones});
    }
  }
  void drop_oldest() {
    auto& row = rows_.back();
    width_ -= row.front().size;
    ones_ -= row.front().ones;
    row.pop_front();
    if (row.empty()) rows_.pop_back();
  }
  bool some_boundary_cuts(double delta) const {
    const double w = static_cast<double>(width_);
    const double p = static_cast<double>(ones_) / w;
    const double v = p * (1.0 - p);  // variance of 0/1 inputs (MOA keeps it incrementally)
    const double dd = adwin_check_constants(width_, ones_, delta).dd;
    std::uint64_t n0 = 0, u0 = 0;
    for (std::size_t r = rows_.size(); r-- > 0;)
      for (const Bucket& b : rows_[r]) {
        n0 += b.size;
        u0 += b.ones;
        if (n0 >= width_) return false;  // no boundary after the newest bucket
        const std::uint64_t n1 = width_ - n0, u1 = ones_ - u0;
        if (n0 <= 6 || n1 <= 6) continue;
        const double m = 1.0 / static_cast<double>(n0 - 4) + 1.0 / static_cast<double>(n1 - 4);
        const double eps = std::sqrt(2.0 * m * v * dd) + 2.0 / 3.0 * dd * m;
        const double mu0 = static_cast<double>(u0) / static_cast<double>(n0);
        const double mu1 = static_cast<double>(u1) / static_cast<double>(n1);
        if (std::fabs(mu0 - mu1) > eps) return true;
      }
    return false;
  }

  std::vector<std::deque<Bucket>> rows_;  // rows_[r]: buckets of 2^r inputs, oldest first
  std::uint64_t width_ = 0, ones_ = 0, time_ = 0;
};

class ReferenceForest {
 public:
  ReferenceForest(const EncodedStream& s, const ForestParams& p)
      : s_(s), p_(p), k_(p.features_for(s.attributes)), trees_(static_cast<std::size_t>(p.trees)) {
    const double r = std::log2(static_cast<double>(s.classes));
    hb_numer_ = r * r * std::log(1.0 / p.delta);  // R^2 ln(1/delta), R = log2(classes)
    for (int t = 0; t < p.trees; ++t) fresh_tree(t, 0);
  }

  // The prequential predictions of the forest over the whole stream.
  std::vector<std::int32_t> run() {
    std::vector<std::int32_t> out(s_.rows);
    const std::size_t B = static_cast<std::size_t>(p_.batch);
    std::vector<std::vector<int>> votes(trees_.size(), std::vector<int>(B));
    for (std::size_t b0 = 0; b0 < s_.rows; b0 += B) {
      const std::size_t b1 = std::min(s_.rows, b0 + B);
      for (std::size_t t = 0; t < trees_.size(); ++t) {
        if (p_.stream_order()) {
          for (std::size_t i = b0; i < b1; ++i) {
            Node* leaf = route(t, i);
            votes[t][i - b0] = majority(leaf->class_counts);
            learn(t, i, leaf);
            if (p_.adwin && trees_[t].adwin.update(votes[t][i - b0] != s_.labels[i], p_.adwin_delta, p_.reset_on_any_cut()))
              reset(t);
          }
          continue;
        }
        std::vector<Node*> leaves;
        for (std::size_t i = b0; i < b1; ++i) {
          leaves.push_back(route(t, i));
          votes[t][i - b0] = majority(leaves.back()->class_counts);
        }
        for (std::size_t i = b0; i < b1; ++i) learn(t, i, leaves[i - b0]);
        if (p_.adwin)
          for (std::size_t i = b0; i < b1 && !trees_[t].drift; ++i)
            trees_[t].drift = trees_[t].adwin.update(votes[t][i - b0] != s_.labels[i], p_.adwin_delta, p_.reset_on_any_cut());
      }
      for (std::size_t i = b0; i < b1; ++i) {
        std::vector<std::uint64_t> tally(static_cast<std::size_t>(s_.classes), 0);
        for (std::size_t t = 0; t < trees_.size(); ++t) ++tally[static_cast<std::size_t>(votes[t][i - b0])];
        out[i] = majority(tally);
      }
      for (std::size_t t = 0; t < trees_.size(); ++t) {
        if (trees_[t].drift) reset(t);  // deferred order: the tree's ADWIN fired in this batch
        else check_splits(t);
      }
    }
    return out;
  }

  long long splits() const { return splits_; }
  long long resets() const { return resets_; }

  // The trees in ForestSnapshot form (children numbered contiguously, breadth first; a leaf's
  // slot is its own index), to compare with a backend through ForestSnapshot::diff.
  ForestSnapshot snapshot() const {
    ForestSnapshot snap;
    snap.layout = ForestLayout::make(s_, p_);
    const std::size_t N = static_cast<std::size_t>(snap.layout.nodes), C = static_cast<std::size_t>(s_.classes);
    snap.node_attr.assign(trees_.size() * N, -1);
    snap.node_child.assign(trees_.size() * N, 0);
    snap.node_depth.assign(trees_.size() * N, 0);
    snap.slot_class.assign(trees_.size() * N * C, 0);
    for (const auto& c : s_.coding) snap.attr_values.push_back(c.values);
    for (std::size_t t = 0; t < trees_.size(); ++t) {
      std::vector<const Node*> order{trees_[t].root.get()};
      for (std::size_t q = 0; q < order.size(); ++q) {
        const Node* n = order[q];
        const std::size_t at = t * N + q;
        snap.node_attr[at] = n->attr;
        snap.node_depth[at] = n->depth;
        if (n->attr < 0) {
          snap.node_child[at] = static_cast<std::int32_t>(q);
          for (std::size_t c = 0; c < C; ++c) snap.slot_class[at * C + c] = static_cast<std::uint32_t>(n->class_counts[c]);
        } else {
          snap.node_child[at] = static_cast<std::int32_t>(order.size());
          for (const auto& child : n->children) order.push_back(child.get());
        }
      }
      snap.n_nodes.push_back(static_cast<std::int32_t>(order.size()));
      snap.generation.push_back(trees_[t].generation);
    }
    snap.splits = splits_;
    snap.resets = resets_;
    return snap;
  }

 private:
  struct Node {
    int attr = -1;   // split attribute; -1: a leaf
    int depth = 0;
    int index = 0;   // creation order in its tree (the root 0, children appended in value order)
    std::vector<std::unique_ptr<Node>> children;  // one per value of attr
    // a leaf's statistics
    std::vector<std::uint64_t> class_counts;  // inherited from the parent's branch + learned
    std::vector<std::uint64_t> learned;       // learned since the leaf was created
    std::uint64_t seen = 0, seen_at_check = 0;
    std::uint64_t key = 0;
    std::vector<int> subset;                  // the attributes it may split on
    std::vector<std::vector<std::uint64_t>> n_ijk;  // [subset position][value * classes + class]
  };
  struct Tree {
    std::unique_ptr<Node> root;
    int nodes = 0;
    std::uint32_t generation = 0;
    ReferenceAdwin adwin;
    bool drift = false;
  };

  static int majority(const std::vector<std::uint64_t>& counts) {
    int best = 0;  // ties and all-zero: the lowest class (MOA's Utils.maxIndex)
    for (std::size_t c = 1; c < counts.size(); ++c)
      if (counts[c] > counts[static_cast<std::size_t>(best)]) best = static_cast<int>(c);
    return best;
  }

  std::unique_ptr<Node> make_leaf(Tree& tree, std::uint64_t key, int depth, std::vector<std::uint64_t> counts) {
    auto n = std::make_unique<Node>();
    n->depth = depth;
    n->index = tree.nodes++;
    n->key = key;
    n->class_counts = std::move(counts);
    n->learned.assign(static_cast<std::size_t>(s_.classes), 0);
    std::vector<std::int16_t> sub(static_cast<std::size_t>(std::max(k_, 1)));
    draw_subset(key, s_.attributes, k_, sub.data());
    for (int p = 0; p < std::min(k_, s_.attributes); ++p) {
      const int a = sub[static_cast<std::size_t>(p)];
      n->subset.push_back(a);
      n->n_ijk.emplace_back(static_cast<std::size_t>(s_.coding[static_cast<std::size_t>(a)].values * s_.classes), 0);
    }
    return n;
  }

  void fresh_tree(int t, std::uint32_t generation) {
    Tree& tree = trees_[static_cast<std::size_t>(t)];
    tree.nodes = 0;
    tree.generation = generation;
    tree.root = make_leaf(tree, root_key(p_.seed, static_cast<std::uint32_t>(t), generation), 0,
                          std::vector<std::uint64_t>(static_cast<std::size_t>(s_.classes), 0));
    tree.adwin = ReferenceAdwin();
    tree.drift = false;
  }
  void reset(std::size_t t) {
    fresh_tree(static_cast<int>(t), trees_[t].generation + 1);
    ++resets_;
  }

  Node* route(std::size_t t, std::size_t i) const {
    Node* n = trees_[t].root.get();
    while (n->attr >= 0) n = n->children[s_.code(i, n->attr)].get();
    return n;
  }

  void learn(std::size_t t, std::size_t i, Node* leaf) {
    const std::uint64_t w = p_.bagging ? static_cast<std::uint64_t>(poisson1(p_.seed, static_cast<std::uint32_t>(t), i)) : 1;
    if (w == 0) return;
    const std::size_t y = s_.labels[i], C = static_cast<std::size_t>(s_.classes);
    leaf->class_counts[y] += w;
    leaf->learned[y] += w;
    leaf->seen += w;
    for (std::size_t p = 0; p < leaf->subset.size(); ++p) leaf->n_ijk[p][s_.code(i, leaf->subset[p]) * C + y] += w;
  }

  // Every leaf that has learned >= n_min weight since its last check, in creation order (when the
  // node pool is full the earlier leaf gets the room).
  void check_splits(std::size_t t) {
    std::vector<Node*> due;
    std::vector<Node*> stack{trees_[t].root.get()};
    while (!stack.empty()) {
      Node* n = stack.back();
      stack.pop_back();
      if (n->attr >= 0) {
        for (auto& c : n->children) stack.push_back(c.get());
      } else if (n->seen - n->seen_at_check >= static_cast<std::uint64_t>(p_.grace)) {
        due.push_back(n);
      }
    }
    std::sort(due.begin(), due.end(), [](const Node* a, const Node* b) { return a->index < b->index; });
    for (Node* leaf : due) try_split(trees_[t], leaf);
  }

  // x log2 x in 2^-20 fixed point; n * H(class) = F(n) - sum_c F(n_c).
  static std::int64_t F(std::uint64_t x) { return xlog2x_fixed(x); }

  void try_split(Tree& tree, Node* leaf) {
    leaf->seen_at_check = leaf->seen;
    if (leaf->depth >= p_.max_depth) return;
    const std::size_t C = static_cast<std::size_t>(s_.classes);
    std::uint64_t n = 0;
    int present = 0;
    std::int64_t n_h_class = 0;
    for (std::uint64_t c : leaf->learned) {
      n += c;
      present += c > 0;
      n_h_class -= F(c);
    }
    if (present < 2) return;  // a pure leaf is not split
    n_h_class += F(n);
    // n * information gain of each attribute, -1 when fewer than two branches hold > 1% of n
    std::int64_t best = -1, second = -1;
    int best_p = -1;
    for (std::size_t p = 0; p < leaf->subset.size(); ++p) {
      const int values = s_.coding[static_cast<std::size_t>(leaf->subset[p])].values;
      int branches = 0;
      std::int64_t n_h_given = 0;  // sum_v n_v H(class | v)
      for (int v = 0; v < values; ++v) {
        std::uint64_t nv = 0;
        for (std::size_t c = 0; c < C; ++c) {
          const std::uint64_t x = leaf->n_ijk[p][static_cast<std::size_t>(v) * C + c];
          nv += x;
          n_h_given -= F(x);
        }
        n_h_given += F(nv);
        branches += nv * 100 > n;
      }
      const std::int64_t merit = branches < 2 ? -1 : std::max<std::int64_t>(0, n_h_class - n_h_given);
      if (merit > best) {
        second = best;
        best = merit;
        best_p = static_cast<int>(p);
      } else if (merit > second) {
        second = merit;
      }
    }
    if (best <= 0) return;
    // Hoeffding bound sqrt(R^2 ln(1/delta) / (2 n)): n learned since the leaf was created, or with
    // bound_weight "total" its whole class count (MOA's weightSeen, inherited counts included)
    std::uint64_t n_bound = n;
    if (p_.bound_total()) {
      n_bound = 0;
      for (std::uint64_t c : leaf->class_counts) n_bound += c;
    }
    const double hb = std::sqrt(hb_numer_ / (2.0 * static_cast<double>(n_bound)));
    const double gap = static_cast<double>(best - std::max<std::int64_t>(second, 0)) / static_cast<double>(1u << 20) /
                       static_cast<double>(n);
    if (!(gap > hb || hb < p_.tau)) return;
    const int a = leaf->subset[static_cast<std::size_t>(best_p)];
    const int values = s_.coding[static_cast<std::size_t>(a)].values;
    if (tree.nodes + values > p_.max_nodes) return;  // the node pool is full
    const std::vector<std::uint64_t> branch = leaf->n_ijk[static_cast<std::size_t>(best_p)];
    leaf->attr = a;
    for (int j = 0; j < values; ++j) {
      // children start with their branch's class counts (MOA's resultingClassDistributionFromSplit)
      std::vector<std::uint64_t> counts(branch.begin() + static_cast<std::ptrdiff_t>(static_cast<std::size_t>(j) * C),
                                        branch.begin() + static_cast<std::ptrdiff_t>(static_cast<std::size_t>(j + 1) * C));
      leaf->children.push_back(make_leaf(tree, child_key(leaf->key, static_cast<std::uint32_t>(j)), leaf->depth + 1, counts));
    }
    leaf->learned.clear();
    leaf->n_ijk.clear();
    ++splits_;
  }

  const EncodedStream& s_;
  ForestParams p_;
  int k_;  // attributes per leaf
  double hb_numer_ = 0;
  std::vector<Tree> trees_;
  long long splits_ = 0, resets_ = 0;
};

}  // namespace gpudm::vfdt::testing
