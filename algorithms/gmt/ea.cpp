#include "algorithms/core/comm.hpp"
#include "algorithms/gmt/ea.hpp"
#include "algorithms/gmt/leaf_stats.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <unordered_map>

namespace gpudm {
namespace gmt {

double fitness_value(const FitnessSpec& f, double sse, std::int64_t n, int leaves, int internal, int w) {
  const double nn = static_cast<double>(std::max<std::int64_t>(n, 1));
  if (f.kind == FitnessKind::weighted) {
    // Eq. (2): [1 - 1/(1 + SSE/n)] + alpha * k(T), k(T) = internal nodes + model attributes.
    return (1.0 - 1.0 / (1.0 + sse / nn)) + f.alpha * static_cast<double>(internal + w);
  }
  double k = 0.0;
  switch (f.bic_k) {
    case BicK::two_q_plus_w: k = 2.0 * (leaves + w); break;
    case BicK::q_plus_w: k = leaves + w; break;
    case BicK::w_plus_3q_minus_2: k = w + 3.0 * leaves - 2.0; break;
    case BicK::internal_plus_w: k = internal + w; break;
  }
  const double mse = std::max(sse / nn, f.mse_floor);
  constexpr double kLn2Pi = 1.8378770664093453;
  return nn * (kLn2Pi + std::log(mse) + 1.0) + std::log(nn) * k;
}

std::vector<std::size_t> sample_distinct_rows(std::size_t n, std::size_t m, Rng& rng) {
  m = std::min(m, n);
  // Partial Fisher-Yates over row ids 0..n-1. Sparse: only the positions a swap moved are kept (a
  // position i < m is final once step i took it), so a sample costs O(m), not an n-row id array
  // (64 trees x 10M rows: 5 GB written at initialisation). Same draws, same sample as the dense array.
  std::unordered_map<std::size_t, std::size_t> moved;
  moved.reserve(2 * m);
  auto id_at = [&](std::size_t k) {
    const auto it = moved.find(k);
    return it == moved.end() ? k : it->second;
  };
  std::vector<std::size_t> ids(m);
  for (std::size_t i = 0; i < m; ++i) {
    const std::size_t j = i + rng.below(n - i);
    const std::size_t at_i = id_at(i);
    ids[i] = id_at(j);
    moved[j] = at_i;
  }
  return ids;
}

GmtEA::GmtEA(const GmtParams& p, ModelTreeEvaluator& eval, const Dataset& train, PhaseTimer& timer)
    : p_(p), eval_(eval), data_(train), timer_(timer), fit_(p.fitness),
      pool_(eval.host_pool() ? *eval.host_pool() : own_pool_) {
  GPUDM_REQUIRE(train.task() == Task::regression, "gmt: dataset '" + train.name() + "' is not a regression dataset");
  GPUDM_REQUIRE(train.rows() >= 2, "gmt: dataset '" + train.name() + "' has fewer than 2 rows");
  GPUDM_REQUIRE(train.cols() >= 1, "gmt: dataset '" + train.name() + "' has no attributes");
  GPUDM_REQUIRE(p.population >= 2, "gmt: params.population must be >= 2");
  GPUDM_REQUIRE(p.elitism >= 0 && p.elitism < p.population, "gmt: params.elitism must be in [0, population)");
  GPUDM_REQUIRE(p.max_depth >= 1 && p.max_depth <= 20, "gmt: params.max_depth must be in [1, 20]");
  GPUDM_REQUIRE(p.ranking_pressure >= 1.0 && p.ranking_pressure <= 2.0, "gmt: params.ranking_pressure must be in [1, 2]");
  for (std::size_t r = 0; r < train.rows(); ++r)
    if (!std::isfinite(train.target(r)))
      throw Error("gmt: dataset '" + train.name() + "' row " + std::to_string(r) +
                  " has a non-finite target; remove or impute it before training");
  double mean = 0.0, m2 = 0.0;
  for (std::size_t r = 0; r < train.rows(); ++r) {
    const double d = train.target(r) - mean;
    mean += d / double(r + 1);
    m2 += d * (train.target(r) - mean);
  }
  const double var = m2 / double(train.rows());
  fit_.mse_floor = std::max(1e-12 * var, 1e-300);
}

std::size_t GmtEA::rank_select(std::size_t n, Rng& rng) const {
  if (n <= 1) return 0;
  // P(i) = (eta+ - (eta+ - eta-) * i/(n-1)) / n, eta- = 2 - eta+; sampled by inversion.
  const double ep = p_.ranking_pressure, em = 2.0 - ep;
  const double u = rng.uniform() * static_cast<double>(n);
  double acc = 0.0;
  for (std::size_t i = 0; i < n; ++i) {
    acc += ep - (ep - em) * static_cast<double>(i) / static_cast<double>(n - 1);
    if (u < acc) return i;
  }
  return n - 1;
}

std::vector<int> GmtEA::random_model(Rng& rng) const {
  std::vector<int> a;
  const int cols = static_cast<int>(data_.cols());
  const double prob = std::min(1.0, p_.init_model_attrs / cols);
  for (int c = 0; c < cols; ++c)
    if (rng.bernoulli(prob)) a.push_back(c);
  return a;
}

bool GmtEA::dipolar_test(std::int64_t a, std::int64_t b, Rng& rng, int* attr, float* threshold) const {
  if (a < 0 || b < 0 || a == b) return false;
  const int cols = static_cast<int>(data_.cols());
  const int start = rng.below_int(cols);
  // A random attribute first, then the next ones in order, until the dipole's values differ.
  for (int k = 0; k < cols; ++k) {
    const int c = (start + k) % cols;
    const float xa = data_.at(static_cast<std::size_t>(a), static_cast<std::size_t>(c));
    const float xb = data_.at(static_cast<std::size_t>(b), static_cast<std::size_t>(c));
    if (!std::isfinite(xa) || !std::isfinite(xb) || xa == xb) continue;
    float t = static_cast<float>(0.5 * (static_cast<double>(xa) + xb));
    const float lo = std::min(xa, xb);
    if (!(t >= lo && t < std::max(xa, xb))) t = lo;  // float rounding: keep the dipole split
    *attr = c;
    *threshold = t;
    return true;
  }
  return false;
}

Tree GmtEA::grow(std::vector<std::size_t>& rows, int depth, Rng& rng) {
  auto leaf = [&] { return Tree::leaf(random_model(rng)); };
  const std::size_t min_rows = static_cast<std::size_t>(std::max(p_.min_leaf_rows, 1));
  if (depth + 1 >= std::min(p_.init_max_depth, p_.max_depth) || rows.size() < 2 * min_rows) return leaf();
  for (int attempt = 0; attempt < 3; ++attempt) {
    // Dipole: a random row, then a far one by linear ranking over |y - y_a| (descending).
    const std::size_t a = rows[rng.below(rows.size())];
    const float ya = data_.target(a);
    std::vector<std::size_t> others;
    others.reserve(rows.size());
    for (std::size_t r : rows)
      if (r != a) others.push_back(r);
    std::stable_sort(others.begin(), others.end(), [&](std::size_t x, std::size_t y) {
      return std::fabs(data_.target(x) - ya) > std::fabs(data_.target(y) - ya);
    });
    const std::size_t b = others[rank_select(others.size(), rng)];
    if (data_.target(b) == ya) return leaf();  // no target variation left here
    int attr;
    float thr;
    if (!dipolar_test(static_cast<std::int64_t>(a), static_cast<std::int64_t>(b), rng, &attr, &thr)) continue;
    std::vector<std::size_t> l, r;
    for (std::size_t row : rows) (data_.at(row, static_cast<std::size_t>(attr)) <= thr ? l : r).push_back(row);
    if (l.size() < min_rows || r.size() < min_rows) continue;
    const Tree lt = grow(l, depth + 1, rng);
    const Tree rt = grow(r, depth + 1, rng);
    return Tree::join(attr, thr, lt, rt);
  }
  return leaf();
}

Tree GmtEA::init_tree(Rng& rng) {
  const std::size_t n = data_.rows();
  std::size_t m = static_cast<std::size_t>(p_.init_sample_fraction * static_cast<double>(n));
  m = std::min<std::size_t>(std::max<std::size_t>(m, static_cast<std::size_t>(p_.init_sample_min)),
                            static_cast<std::size_t>(p_.init_sample_max));
  m = std::min(m, n);
  std::vector<std::size_t> ids = sample_distinct_rows(n, m, rng);
  std::sort(ids.begin(), ids.end());
  return grow(ids, 0, rng);
}

double GmtEA::fitness_of(const Individual& ind, int model_attributes) const {
  return fitness_value(fit_, ind.sse, static_cast<std::int64_t>(data_.rows()), ind.tree.n_leaves(), ind.tree.n_internal(), model_attributes);
}

void GmtEA::evaluate(const std::vector<Individual*>& inds) {
  if (inds.empty()) return;
  EvalBatch batch;
  batch.repair.min_rows = p_.min_leaf_rows;
  batch.repair.mode = p_.repair;
  batch.clean_sse_known = true;
  for (Individual* ind : inds) {
    batch.trees.push_back(&ind->tree);
    batch.salts.push_back(++salt_counter_);
  }
  if (observer_) observer_(generation_, batch);
  // The fitness of an evaluated individual: the backend may run it in the task that finishes the
  // tree (EvalBatch::after_tree); the rest here. The same values either way (each reads and writes
  // only its own individual).
  const std::function<void(std::size_t)> fit = [&](std::size_t i) {
    Individual* ind = inds[i];
    const NodeStats& root = ind->tree.node(0).stats;
    ind->sse = root.sse;
    ind->sae = root.sae;
    ind->evaluated = true;
    const int w = ind->tree.model_attributes();  // (one pass over the nodes for both)
    ind->fitness = fitness_of(*ind, w);
    ind->tree.compact_pools(w);
  };
  fitted_.assign(inds.size(), 0);
  batch.after_tree = &fit;
  batch.after_tree_done = fitted_.data();
  const std::int64_t repairs0 = eval_.counters().repairs;
  eval_.evaluate(batch, timer_);
  summary_.evaluations += static_cast<std::int64_t>(inds.size());
  ++summary_.evaluate_calls;
  summary_.repairs += eval_.counters().repairs - repairs0;
  auto s = timer_.scope("cpu_ea");
  rest_.clear();
  std::size_t nodes = 0;
  for (std::size_t i = 0; i < inds.size(); ++i)
    if (!fitted_[i]) {
      rest_.push_back(i);
      nodes += static_cast<std::size_t>(inds[i]->tree.size());
    }
  parallel_for_nodes(pool_, rest_.size(), nodes, [&](std::size_t k) { fit(rest_[k]); });
}

namespace {
// The farther of the node's two extreme-target rows from row a's target.
std::int64_t far_end(const Dataset& d, const NodeStats& s, std::int64_t a) {
  const float ya = d.target(static_cast<std::size_t>(a));
  return std::fabs(d.target(static_cast<std::size_t>(s.dipole_hi)) - ya) >= std::fabs(d.target(static_cast<std::size_t>(s.dipole_lo)) - ya)
             ? s.dipole_hi
             : s.dipole_lo;
}
}  // namespace

bool GmtEA::mutate_new_test(Tree& t, int n, Rng& rng) {
  const TreeNode& nd = t.node(n);
  if (nd.is_leaf() || nd.stats.count < 2) return false;
  const std::int64_t a = nd.stats.dipole_rand;
  if (a < 0 || nd.stats.dipole_lo < 0 || nd.stats.dipole_hi < 0) return false;
  const std::int64_t b = far_end(data_, nd.stats, a);
  int attr;
  float thr;
  if (!dipolar_test(a, b, rng, &attr, &thr)) return false;
  t.node(n).attr = attr;
  t.node(n).threshold = thr;
  t.mark_dirty(n);
  return true;
}

bool GmtEA::mutate_shift_threshold(Tree& t, int n, Rng& rng) {
  const TreeNode& nd = t.node(n);
  if (nd.is_leaf()) return false;
  const std::int64_t cands[3] = {nd.stats.dipole_rand, nd.stats.dipole_lo, nd.stats.dipole_hi};
  const std::int64_t r = p_.shift_target == ShiftTarget::node_row ? cands[0] : cands[rng.below(3)];
  if (r < 0) return false;
  const float x = data_.at(static_cast<std::size_t>(r), static_cast<std::size_t>(nd.attr));
  if (!std::isfinite(x) || x == nd.threshold) return false;
  const float th = static_cast<float>(nd.threshold + rng.uniform() * (static_cast<double>(x) - nd.threshold));
  if (th == nd.threshold) return false;
  t.node(n).threshold = th;
  t.mark_dirty(n);
  return true;
}

bool GmtEA::mutate_swap_test(Tree& t, int n, Rng& rng) {
  if (t.node(n).is_leaf()) return false;
  std::vector<int> below;
  for (int k : t.subtree(n))
    if (k != n && !t.node(k).is_leaf()) below.push_back(k);
  if (below.empty()) return false;
  TreeNode& d = t.node(below[rng.below(below.size())]);
  TreeNode& m = t.node(n);
  if (d.attr == m.attr && d.threshold == m.threshold) return false;
  std::swap(m.attr, d.attr);
  std::swap(m.threshold, d.threshold);
  t.mark_dirty(n);
  return true;
}

bool GmtEA::mutate_prune(Tree& t, int n, Rng& rng) {
  if (t.node(n).is_leaf()) return false;
  // The new leaf's model starts from the largest leaf's attributes below it.
  int best = -1;
  for (int k : t.subtree(n))
    if (t.node(k).is_leaf() && (best < 0 || t.node(k).stats.count > t.node(best).stats.count)) best = k;
  std::vector<int> attrs;
  if (best >= 0) {
    const auto a = t.attrs(best);
    attrs.assign(a.begin(), a.end());
  }
  (void)rng;
  const NodeStats keep = t.node(n).stats;
  t.make_leaf(n, attrs);
  t.node(n).stats = keep;
  return true;
}

bool GmtEA::mutate_change_model(Tree& t, int n, Rng& rng) {
  if (!t.node(n).is_leaf()) return false;
  const int cols = static_cast<int>(data_.cols());
  const auto cur = t.attrs(n);
  std::vector<int> m(cur.begin(), cur.end());
  std::vector<int> absent;
  for (int c = 0; c < cols; ++c)
    if (!std::binary_search(m.begin(), m.end(), c)) absent.push_back(c);
  // add, remove or replace one attribute, each with equal probability where applicable. Adding is
  // not applicable to a model at its leaf's limit of parameters (the leaf rule, rows_per_param, on
  // the rows the leaf had at its last evaluation): the refit would drop the attribute again.
  const long long max_params = leafstats::max_leaf_params(t.node(n).stats.count, eval_.options().rows_per_param);
  std::vector<int> ops;
  if (!absent.empty() && static_cast<long long>(m.size()) + 2 <= max_params) ops.push_back(0);
  if (!m.empty()) ops.push_back(1);
  if (!absent.empty() && !m.empty()) ops.push_back(2);
  if (ops.empty()) return false;
  const int op = ops[rng.below(ops.size())];
  if (op == 1 || op == 2) m.erase(m.begin() + static_cast<std::ptrdiff_t>(rng.below(m.size())));
  if (op == 0 || op == 2) {
    m.push_back(absent[rng.below(absent.size())]);
    std::sort(m.begin(), m.end());
  }
  t.set_model(n, m);
  return true;
}

bool GmtEA::mutate_expand(Tree& t, int n, Rng& rng) {
  const TreeNode& nd = t.node(n);
  if (!nd.is_leaf() || nd.depth + 2 > p_.max_depth) return false;
  if (nd.stats.count < 2 * std::max<std::int64_t>(p_.min_leaf_rows, 1)) return false;
  const std::int64_t a = nd.stats.dipole_rand;
  if (a < 0 || nd.stats.dipole_lo < 0 || nd.stats.dipole_hi < 0) return false;
  const std::int64_t b = far_end(data_, nd.stats, a);
  int attr;
  float thr;
  if (!dipolar_test(a, b, rng, &attr, &thr)) return false;
  const auto cur = t.attrs(n);
  const Tree child = Tree::leaf(std::vector<int>(cur.begin(), cur.end()));
  const NodeStats keep = nd.stats;
  t.replace(n, Tree::join(attr, thr, child, child));
  t.node(n).stats = keep;
  return true;
}

namespace {
// Levels of the subtree at i (a leaf: 1).
int subtree_levels(const Tree& t, int i) {
  thread_local std::vector<int> stack;
  stack.assign(1, i);
  const int d0 = t.node(i).depth;
  int deepest = d0;
  while (!stack.empty()) {
    const int k = stack.back();
    stack.pop_back();
    const TreeNode& n = t.node(k);
    deepest = std::max(deepest, n.depth);
    if (!n.is_leaf()) {
      stack.push_back(n.left);
      stack.push_back(n.left + 1);
    }
  }
  return deepest - d0 + 1;
}

// Stable order of `list` by integer key (ascending), keys in [0, range): a counting sort, the same
// permutation std::stable_sort gives, without a comparison sort or an allocation per call.
void stable_by_key(std::vector<int>& list, const std::vector<int>& key, int range, std::vector<int>& start, std::vector<int>& out) {
  start.assign(static_cast<std::size_t>(range) + 1, 0);
  for (int k : key) ++start[static_cast<std::size_t>(k) + 1];
  for (int v = 0; v < range; ++v) start[static_cast<std::size_t>(v) + 1] += start[static_cast<std::size_t>(v)];
  out.resize(list.size());
  for (std::size_t i = 0; i < list.size(); ++i) out[static_cast<std::size_t>(start[static_cast<std::size_t>(key[i])]++)] = list[i];
  list.swap(out);
}

// Higher error first, ties by the second member (a position, unique and ascending in the list as
// built): the permutation std::stable_sort by error alone gives, from std::sort, which needs no
// temporary buffer (stable_sort allocates one per call: ~2 sorts per mutation, on every host thread).
// (A function object, not a function: std::sort and std::nth_element inline its calls; through
// a function pointer each comparison is a call, measured 8 % of a mutation on Elnino's 300-leaf trees.)
struct HigherErrorFirst {
  bool operator()(const std::pair<double, int>& x, const std::pair<double, int>& y) const {
    return x.first > y.first || (x.first == y.first && x.second < y.second);
  }
};
constexpr HigherErrorFirst higher_error_first{};
}  // namespace

bool GmtEA::mutate(Individual& ind, Rng& rng) {
  Tree& t = ind.tree;
  // Per-thread scratch (mutate runs for ~80 % of a generation's individuals, on the host threads).
  thread_local std::vector<int> leaves, internal, ranked_internal, key, start, out, rank_sum;
  thread_local std::vector<std::pair<double, int>> keyed, keyed_leaves;
  // Both lists in one pass without a branch per node (leaves and internal nodes alternate
  // unpredictably: the branch mispredicted about half the time on large trees).
  const auto N = static_cast<std::size_t>(t.size());
  leaves.resize(N);
  internal.resize(N);
  std::size_t nl = 0, ni = 0;
  for (std::size_t i = 0; i < N; ++i) {
    const bool leaf = t.node(static_cast<int>(i)).is_leaf();
    leaves[nl] = internal[ni] = static_cast<int>(i);
    nl += leaf ? 1 : 0;
    ni += leaf ? 0 : 1;
  }
  leaves.resize(nl);
  internal.resize(ni);
  auto sse = [&](int i) { return t.node(i).stats.sse; };
  // The ranked lists are the same in every attempt (a failed variant leaves the tree as it was):
  // each is built once, when first drawn.
  bool have_leaves = false, have_internal = false;
  for (int attempt = 0; attempt < 4; ++attempt) {
    const bool pick_leaf = internal.empty() || rng.bernoulli(0.5);
    if (pick_leaf && !have_leaves) {
      // Higher error first (the stable order of the node ids by sse): only the drawn rank's leaf
      // is needed, so it is selected (nth_element, linear) instead of the whole list sorted. The
      // order is total (ties by node id), so the leaf at a rank is the one the sorted list has there.
      keyed_leaves.clear();
      for (int i : leaves) keyed_leaves.emplace_back(sse(i), i);
      have_leaves = true;
    }
    if (!pick_leaf && !have_internal) {
      // Deeper and higher-error internal nodes first: by the sum of the two ranks (each rank the
      // position in a stable order: deeper first, higher error first), ties in node order.
      const std::size_t n = internal.size();
      int max_depth = 0;
      for (int i : internal) max_depth = std::max(max_depth, t.node(i).depth);
      // position of each node (by its index in `internal`) in the stable deeper-first order
      std::vector<int>& by_level = ranked_internal;  // (reused below)
      by_level.resize(n);
      for (std::size_t k = 0; k < n; ++k) by_level[k] = static_cast<int>(k);
      key.resize(n);
      for (std::size_t k = 0; k < n; ++k) key[k] = max_depth - t.node(internal[k]).depth;
      stable_by_key(by_level, key, max_depth + 1, start, out);
      rank_sum.assign(n, 0);
      for (std::size_t k = 0; k < n; ++k) rank_sum[static_cast<std::size_t>(by_level[k])] += static_cast<int>(k);
      keyed.clear();
      for (std::size_t k = 0; k < n; ++k) keyed.emplace_back(sse(internal[k]), static_cast<int>(k));
      std::sort(keyed.begin(), keyed.end(), higher_error_first);
      for (std::size_t k = 0; k < n; ++k) rank_sum[static_cast<std::size_t>(keyed[k].second)] += static_cast<int>(k);
      // stable order by the rank sum (in [0, 2n - 2]), then the nodes themselves
      by_level.resize(n);
      for (std::size_t k = 0; k < n; ++k) by_level[k] = static_cast<int>(k);
      stable_by_key(by_level, rank_sum, static_cast<int>(2 * n), start, out);
      for (std::size_t k = 0; k < n; ++k) by_level[k] = internal[static_cast<std::size_t>(by_level[k])];
      have_internal = true;
    }
    int target;
    if (pick_leaf) {
      const std::size_t r = rank_select(keyed_leaves.size(), rng);
      std::nth_element(keyed_leaves.begin(), keyed_leaves.begin() + static_cast<std::ptrdiff_t>(r), keyed_leaves.end(), higher_error_first);
      target = keyed_leaves[r].second;
    } else {
      target = ranked_internal[rank_select(ranked_internal.size(), rng)];
    }
    bool ok = false;
    if (pick_leaf) {
      const double w[2] = {p_.mut_change_model, p_.mut_expand};
      const double u = rng.uniform() * (w[0] + w[1]);
      ok = u < w[0] ? mutate_change_model(t, target, rng) : mutate_expand(t, target, rng);
    } else {
      const double w[4] = {p_.mut_new_test, p_.mut_shift_threshold, p_.mut_swap_test, p_.mut_prune};
      const double u = rng.uniform() * (w[0] + w[1] + w[2] + w[3]);
      if (u < w[0]) ok = mutate_new_test(t, target, rng);
      else if (u < w[0] + w[1]) ok = mutate_shift_threshold(t, target, rng);
      else if (u < w[0] + w[1] + w[2]) ok = mutate_swap_test(t, target, rng);
      else ok = mutate_prune(t, target, rng);
    }
    if (ok) return true;
  }
  return false;
}

int GmtEA::crossover(Individual& a, Individual& b, Rng& rng) {
  Tree& ta = a.tree;
  Tree& tb = b.tree;
  const double w[4] = {p_.cx_subtrees, p_.cx_tests, p_.cx_branches, p_.cx_asymmetric};
  const double u = rng.uniform() * (w[0] + w[1] + w[2] + w[3]);
  const int variant = u < w[0] ? 0 : u < w[0] + w[1] ? 1 : u < w[0] + w[1] + w[2] ? 2 : 3;
  int x = rng.below_int(ta.size());
  int y = rng.below_int(tb.size());
  if (variant == 1 || variant == 2) {
    // Tests and branches need two internal nodes.
    std::vector<int> ia, ib;
    for (int i = 0; i < ta.size(); ++i)
      if (!ta.node(i).is_leaf()) ia.push_back(i);
    for (int i = 0; i < tb.size(); ++i)
      if (!tb.node(i).is_leaf()) ib.push_back(i);
    if (ia.empty() || ib.empty()) return 0;
    x = ia[rng.below(ia.size())];
    y = ib[rng.below(ib.size())];
  }
  int changed = 0;
  // Every variant but 1 moves a subtree: the result is too deep when a moved subtree is, at its
  // new place (both trees are within max_depth before, so nothing else can be). Decided before the
  // edit, so no copy of the two trees is needed to undo it; trees already too deep keep the undo.
  const bool within = variant == 1 || (ta.levels() <= p_.max_depth && tb.levels() <= p_.max_depth);
  if (variant != 1 && within) {
    const int at_x = ta.node(x).depth + subtree_levels(tb, y);  // tb's subtree y at ta's x
    const int at_y = tb.node(y).depth + subtree_levels(ta, x);
    bool too_deep = at_x > p_.max_depth || at_y > p_.max_depth;
    if (variant == 3) {  // one direction only: the lower-error subtree replaces the other
      const NodeStats &sx = ta.node(x).stats, &sy = tb.node(y).stats;
      if (sx.count > 0 && sy.count > 0) {
        const double ex = sx.sse / double(sx.count), ey = sy.sse / double(sy.count);
        too_deep = ex < ey ? at_y > p_.max_depth : at_x > p_.max_depth;
      }
    }
    if (too_deep) return 0;  // (what undoing the edit would give)
  }
  const Tree backup_a = within ? Tree() : ta, backup_b = within ? Tree() : tb;
  switch (variant) {
    case 0: {  // exchange subtrees (a subtree keeps its statistics where it goes)
      if (x == 0 && y == 0) return 0;
      const Tree sa = ta.extract(x), sb = tb.extract(y);
      ta.replace(x, sb);
      tb.replace(y, sa);
      ta.mark_dirty(x);
      tb.mark_dirty(y);
      changed = 3;
      break;
    }
    case 1: {  // exchange tests
      TreeNode &nx = ta.node(x), &ny = tb.node(y);
      std::swap(nx.attr, ny.attr);
      std::swap(nx.threshold, ny.threshold);
      ta.mark_dirty(x);
      tb.mark_dirty(y);
      changed = 3;
      break;
    }
    case 2: {  // exchange branches (the tests stay, the subtrees below them move)
      const TreeNode nx = ta.node(x), ny = tb.node(y);
      const Tree xa = Tree::join(nx.attr, nx.threshold, tb.extract(ny.left), tb.extract(ny.left + 1));
      const Tree yb = Tree::join(ny.attr, ny.threshold, ta.extract(nx.left), ta.extract(nx.left + 1));
      ta.replace(x, xa);
      tb.replace(y, yb);
      ta.node(x).stats = nx.stats;
      tb.node(y).stats = ny.stats;
      ta.mark_dirty(x);
      tb.mark_dirty(y);
      changed = 3;
      break;
    }
    default: {  // asymmetric: the lower-error subtree (per row) replaces the higher-error one
      const NodeStats &sx = ta.node(x).stats, &sy = tb.node(y).stats;
      if (sx.count <= 0 || sy.count <= 0) return 0;
      const double ex = sx.sse / double(sx.count);
      const double ey = sy.sse / double(sy.count);
      if (ex == ey) return 0;
      if (ex < ey) {
        tb.replace(y, ta.extract(x));
        tb.mark_dirty(y);
        changed = 2;
      } else {
        ta.replace(x, tb.extract(y));
        ta.mark_dirty(x);
        changed = 1;
      }
    }
  }
  if (!within && (ta.levels() > p_.max_depth || tb.levels() > p_.max_depth)) {  // both back as they were
    ta = backup_a;
    tb = backup_b;
    return 0;
  }
  return changed;
}

Individual GmtEA::run(const std::function<void(int, const Individual&)>& on_iteration) {
  Rng rng(p_.seed);
  summary_ = RunSummary{};
  generation_ = 0;
  std::vector<Individual> pop(static_cast<std::size_t>(p_.population));
  {
    auto s = timer_.scope("cpu_ea");
    for (auto& ind : pop) ind.tree = init_tree(rng);
  }
  {
    std::vector<Individual*> all;
    for (auto& ind : pop) all.push_back(&ind);
    evaluate(all);
  }
  auto by_fitness = [](const Individual& x, const Individual& y) { return x.fitness < y.fitness; };
  std::vector<Individual> next;
  std::vector<std::size_t> sel;
  std::vector<std::uint64_t> cx_seed, mut_seed;
  std::vector<char> cx_on, mut_on, mod;
  std::vector<std::size_t> last_pick, order;  // order: a step's tasks, largest first (largest_first)
  {
    auto s = timer_.scope("cpu_ea");
    std::stable_sort(pop.begin(), pop.end(), by_fitness);
  }
  double best = pop[0].fitness;
  int stall = 0;
  summary_.stop_reason = "iterations";
  const auto loop_start = std::chrono::steady_clock::now();
  for (int it = 1; it <= p_.iterations; ++it) {
    generation_ = it;
    std::vector<Individual*> modified;
    {
      auto s = timer_.scope("cpu_ea");
      // The generation's random decisions come from the main stream, in order: the selections,
      // then per pair (first, first + 1), (first + 2, first + 3), ... whether it is crossed and its
      // operator stream's seed, then per individual whether it is mutated and its stream's seed.
      // The operators then run per task (a pair, or the last unpaired individual) on the host
      // threads: crossover of the pair, then the mutation of each member, each from its own
      // stream, so the result does not depend on the number of threads.
      const std::size_t n = pop.size();
      const std::size_t first = static_cast<std::size_t>(p_.elitism);
      sel.resize(n);
      for (std::size_t i = 0; i < n; ++i) sel[i] = i < first ? i : rank_select(n, rng);
      cx_seed.assign(n, 0);
      mut_seed.assign(n, 0);
      cx_on.assign(n, 0);
      mut_on.assign(n, 0);
      for (std::size_t i = first; i + 1 < n; i += 2)
        if (rng.bernoulli(p_.crossover)) {
          cx_on[i] = 1;
          cx_seed[i] = rng.next();
        }
      for (std::size_t i = first; i < n; ++i)
        if (rng.bernoulli(p_.mutation)) {
          mut_on[i] = 1;
          mut_seed[i] = rng.next();
        }
      // next[i] = pop[sel[i]]: a parent's earlier selections copy it (into the previous
      // generation's individuals, whose vectors' capacity is reused), then its last selection takes
      // the parent itself (a swap: pop is not read again this generation; the slot keeps next[i]'s
      // old vectors for the next generation's copies). Same individuals as copying every one.
      next.resize(n);
      mod.assign(n, 0);
      last_pick.assign(n, n);
      for (std::size_t i = 0; i < n; ++i) last_pick[sel[i]] = i;
      const std::size_t copy_nodes = largest_first(order, n, [&](std::size_t i) {
        return last_pick[sel[i]] != i ? static_cast<std::size_t>(pop[sel[i]].tree.size()) : 0;
      });
      auto copy_one = [&](std::size_t i) {
        if (last_pick[sel[i]] != i) next[i] = pop[sel[i]];
      };
      parallel_for_nodes(pool_, n, copy_nodes, copy_one, order.data());  // (small trees: on the calling thread; Armchair ~25 copies of ~1 KB)
      for (std::size_t i = 0; i < n; ++i)
        if (last_pick[sel[i]] == i) std::swap(next[i], pop[sel[i]]);
      const std::size_t tasks = (n - first + 1) / 2;  // pairs after the elite (the last may be single)
      // (the step's threads scale with its nodes; the largest tasks are claimed first)
      const std::size_t vary_nodes = largest_first(order, tasks, [&](std::size_t task) {
        const std::size_t i = first + 2 * task;
        std::size_t c = 0;
        for (std::size_t j = i; j < std::min(i + 2, n); ++j)
          if (cx_on[i] || mut_on[j]) c += static_cast<std::size_t>(next[j].tree.size());
        return c;
      });
      parallel_for_work(pool_, tasks, vary_nodes, [&](std::size_t task) {
        const std::size_t i = first + 2 * task;
        const bool pair = i + 1 < n;
        if (pair && cx_on[i]) {
          Rng r(cx_seed[i]);
          const int c = crossover(next[i], next[i + 1], r);
          if (c & 1) mod[i] = 1;
          if (c & 2) mod[i + 1] = 1;
        }
        for (std::size_t j = i; j < (pair ? i + 2 : i + 1); ++j)
          if (mut_on[j]) {
            Rng r(mut_seed[j]);
            if (mutate(next[j], r)) mod[j] = 1;
          }
      }, order.data());
      for (std::size_t i = 0; i < n; ++i)
        if (mod[i]) modified.push_back(&next[i]);
    }
    evaluate(modified);
    {
      auto s = timer_.scope("cpu_ea");
      std::stable_sort(next.begin(), next.end(), by_fitness);
      pop.swap(next);
    }
    summary_.iterations = it;
    if (pop[0].fitness < best) {
      best = pop[0].fitness;
      summary_.best_found_at = it;
      stall = 0;
    } else {
      ++stall;
    }
    summary_.best_history.push_back(best);
    if (on_iteration) on_iteration(it, pop[0]);
    if (p_.stall_iterations > 0 && stall >= p_.stall_iterations) {
      summary_.stop_reason = "stall";
      break;
    }
    // (the slowest rank's clock: an MPI run's ranks stop at the same iteration)
    if (p_.max_seconds > 0 && it < p_.iterations &&
        world().max(std::chrono::duration<double>(std::chrono::steady_clock::now() - loop_start).count(), "gmt: the EA's time budget") >=
            p_.max_seconds) {
      summary_.stop_reason = "time";
      break;
    }
  }
  summary_.loop_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - loop_start).count();
  summary_.best_fitness = pop[0].fitness;
  return std::move(pop[0]);
}

}  // namespace gmt
}  // namespace gpudm
