#include "algorithms/gmt/ea.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <numeric>

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

FitnessKind parse_fitness_kind(const std::string& s, std::size_t rows) {
  if (s == "bic") return FitnessKind::bic;
  if (s == "weighted") return FitnessKind::weighted;
  if (s == "auto") return rows < 1000000 ? FitnessKind::bic : FitnessKind::weighted;
  throw Error("gmt: params.fitness must be \"bic\", \"weighted\" or \"auto\", got \"" + s + "\"");
}

BicK parse_bic_k(const std::string& s) {
  if (s == "2(Q+W)") return BicK::two_q_plus_w;
  if (s == "Q+W") return BicK::q_plus_w;
  if (s == "W+3Q-2") return BicK::w_plus_3q_minus_2;
  if (s == "I+W") return BicK::internal_plus_w;
  throw Error("gmt: params.bic_k must be one of \"2(Q+W)\", \"Q+W\", \"W+3Q-2\", \"I+W\", got \"" + s + "\"");
}

RepairMode parse_repair_mode(const std::string& s) {
  if (s == "promote") return RepairMode::promote;
  if (s == "collapse") return RepairMode::collapse;
  throw Error("gmt: params.repair must be \"promote\" or \"collapse\", got \"" + s + "\"");
}

ShiftTarget parse_shift_target(const std::string& s) {
  if (s == "node_row") return ShiftTarget::node_row;
  if (s == "dipole") return ShiftTarget::dipole;
  throw Error("gmt: params.shift_target must be \"node_row\" or \"dipole\", got \"" + s + "\"");
}

GmtEA::GmtEA(const GmtParams& p, ModelTreeEvaluator& eval, const Dataset& train, PhaseTimer& timer)
    : p_(p), eval_(eval), data_(train), timer_(timer), fit_(p.fitness) {
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

std::unique_ptr<Node> GmtEA::grow(std::vector<std::size_t>& rows, int depth, Rng& rng) {
  auto leaf = [&] {
    auto n = std::make_unique<Node>();
    n->make_leaf(random_model(rng));
    return n;
  };
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
    auto n = std::make_unique<Node>();
    n->attr = attr;
    n->threshold = thr;
    n->left = grow(l, depth + 1, rng);
    n->right = grow(r, depth + 1, rng);
    return n;
  }
  return leaf();
}

std::unique_ptr<Node> GmtEA::init_tree(Rng& rng) {
  const std::size_t n = data_.rows();
  std::size_t m = static_cast<std::size_t>(p_.init_sample_fraction * static_cast<double>(n));
  m = std::min<std::size_t>(std::max<std::size_t>(m, static_cast<std::size_t>(p_.init_sample_min)),
                            static_cast<std::size_t>(p_.init_sample_max));
  m = std::min(m, n);
  // Partial Fisher-Yates over row ids: a subsample of m distinct rows.
  std::vector<std::size_t> ids(n);
  std::iota(ids.begin(), ids.end(), std::size_t{0});
  for (std::size_t i = 0; i < m; ++i) std::swap(ids[i], ids[i + rng.below(n - i)]);
  ids.resize(m);
  std::sort(ids.begin(), ids.end());
  return grow(ids, 0, rng);
}

double GmtEA::fitness_of(const Individual& ind) const {
  return fitness_value(fit_, ind.sse, static_cast<std::int64_t>(data_.rows()), count_leaves(ind.root.get()),
                       count_internal(ind.root.get()), count_model_attributes(ind.root.get()));
}

bool GmtEA::repair(Node* n) {
  if (n->is_leaf()) return false;
  const std::int64_t min_rows = p_.min_leaf_rows;
  if (n->left->stats.count < min_rows || n->right->stats.count < min_rows) {
    const bool left_big = n->left->stats.count >= n->right->stats.count;
    Node* big = left_big ? n->left.get() : n->right.get();
    const Node* small = left_big ? n->right.get() : n->left.get();
    if (p_.repair == RepairMode::promote && !big->is_leaf() && big->stats.count >= min_rows) {
      // Remove the test: the populated child's subtree takes the node's place and also receives
      // the few rows of the other side (its leaves are refit at the next evaluation).
      (void)small;
      std::unique_ptr<Node> keep = std::move(left_big ? n->left : n->right);
      *n = std::move(*keep);
      mark_subtree_dirty(n);
      return true;
    }
    // Keep the model attributes of the larger child when it is a leaf; otherwise a constant leaf.
    std::vector<int> attrs = big->is_leaf() ? big->model_attrs : std::vector<int>{};
    n->make_leaf(std::move(attrs));
    return true;
  }
  const bool a = repair(n->left.get());
  const bool b = repair(n->right.get());
  return a || b;
}

void GmtEA::evaluate(const std::vector<Individual*>& inds) {
  std::vector<Individual*> todo = inds;
  std::vector<FlatTree> flats;
  std::vector<EvalOutput> outs;
  for (int pass = 0; pass < 8 && !todo.empty(); ++pass) {
    flats.resize(todo.size());
    {
      auto s = timer_.scope("flattening");
      for (std::size_t k = 0; k < todo.size(); ++k) flatten(todo[k]->root.get(), static_cast<int>(data_.cols()), ++salt_counter_, flats[k]);
    }
    std::vector<const FlatTree*> ptrs(todo.size());
    for (std::size_t k = 0; k < todo.size(); ++k) ptrs[k] = &flats[k];
    if (observer_) observer_(generation_, ptrs);
    eval_.evaluate(ptrs, outs, timer_);
    summary_.evaluations += static_cast<std::int64_t>(todo.size());
    std::vector<Individual*> again;
    auto s = timer_.scope("cpu_ea");
    for (std::size_t k = 0; k < todo.size(); ++k) {
      Individual* ind = todo[k];
      apply_evaluation(ind->root.get(), flats[k], outs[k]);
      ind->sse = outs[k].nodes[0].sse;
      ind->sae = outs[k].nodes[0].sae;
      ind->evaluated = true;
      ind->fitness = fitness_of(*ind);
      if (p_.min_leaf_rows > 0 && repair(ind->root.get())) again.push_back(ind);
    }
    todo.swap(again);
  }
}

bool GmtEA::mutate_new_test(Node* n, Rng& rng) {
  if (n->is_leaf() || n->stats.count < 2) return false;
  const std::int64_t a = n->stats.dipole_rand;
  if (a < 0) return false;
  const float ya = data_.target(static_cast<std::size_t>(a));
  const std::int64_t lo = n->stats.dipole_lo, hi = n->stats.dipole_hi;
  if (lo < 0 || hi < 0) return false;
  const std::int64_t b = std::fabs(data_.target(static_cast<std::size_t>(hi)) - ya) >=
                                 std::fabs(data_.target(static_cast<std::size_t>(lo)) - ya)
                             ? hi
                             : lo;
  int attr;
  float thr;
  if (!dipolar_test(a, b, rng, &attr, &thr)) return false;
  n->attr = attr;
  n->threshold = thr;
  mark_subtree_dirty(n);
  return true;
}

bool GmtEA::mutate_shift_threshold(Node* n, Rng& rng) {
  if (n->is_leaf()) return false;
  const std::int64_t cands[3] = {n->stats.dipole_rand, n->stats.dipole_lo, n->stats.dipole_hi};
  const std::int64_t r = p_.shift_target == ShiftTarget::node_row ? cands[0] : cands[rng.below(3)];
  if (r < 0) return false;
  const float x = data_.at(static_cast<std::size_t>(r), static_cast<std::size_t>(n->attr));
  if (!std::isfinite(x) || x == n->threshold) return false;
  const float t = static_cast<float>(n->threshold + rng.uniform() * (static_cast<double>(x) - n->threshold));
  if (t == n->threshold) return false;
  n->threshold = t;
  mark_subtree_dirty(n);
  return true;
}

bool GmtEA::mutate_swap_test(Node* n, Rng& rng) {
  if (n->is_leaf()) return false;
  std::vector<Node*> below;
  for (const auto& r : collect_nodes(n))
    if (r.node != n && !r.node->is_leaf()) below.push_back(r.node);
  if (below.empty()) return false;
  Node* d = below[rng.below(below.size())];
  if (d->attr == n->attr && d->threshold == n->threshold) return false;
  std::swap(n->attr, d->attr);
  std::swap(n->threshold, d->threshold);
  mark_subtree_dirty(n);
  return true;
}

bool GmtEA::mutate_prune(Node* n, Rng& rng) {
  if (n->is_leaf()) return false;
  // The new leaf's model starts from the largest leaf's attributes below it.
  const Node* best = nullptr;
  std::vector<NodeRef> below = collect_nodes(n);
  for (const auto& r : below)
    if (r.node->is_leaf() && (!best || r.node->stats.count > best->stats.count)) best = r.node;
  std::vector<int> attrs = best ? best->model_attrs : std::vector<int>{};
  (void)rng;
  n->make_leaf(std::move(attrs));
  return true;
}

bool GmtEA::mutate_change_model(Node* n, Rng& rng) {
  if (!n->is_leaf()) return false;
  const int cols = static_cast<int>(data_.cols());
  std::vector<int>& m = n->model_attrs;
  std::vector<int> absent;
  for (int c = 0; c < cols; ++c)
    if (!std::binary_search(m.begin(), m.end(), c)) absent.push_back(c);
  // add, remove or replace one attribute, each with equal probability where applicable
  std::vector<int> ops;
  if (!absent.empty()) ops.push_back(0);
  if (!m.empty()) ops.push_back(1);
  if (!absent.empty() && !m.empty()) ops.push_back(2);
  if (ops.empty()) return false;
  const int op = ops[rng.below(ops.size())];
  if (op == 1 || op == 2) m.erase(m.begin() + static_cast<std::ptrdiff_t>(rng.below(m.size())));
  if (op == 0 || op == 2) {
    m.push_back(absent[rng.below(absent.size())]);
    std::sort(m.begin(), m.end());
  }
  n->dirty = true;
  return true;
}

bool GmtEA::mutate_expand(Node* n, int depth, Rng& rng) {
  if (!n->is_leaf() || depth + 2 > p_.max_depth) return false;
  if (n->stats.count < 2 * std::max<std::int64_t>(p_.min_leaf_rows, 1)) return false;
  const std::int64_t a = n->stats.dipole_rand;
  const std::int64_t lo = n->stats.dipole_lo, hi = n->stats.dipole_hi;
  if (a < 0 || lo < 0 || hi < 0) return false;
  const float ya = data_.target(static_cast<std::size_t>(a));
  const std::int64_t b = std::fabs(data_.target(static_cast<std::size_t>(hi)) - ya) >=
                                 std::fabs(data_.target(static_cast<std::size_t>(lo)) - ya)
                             ? hi
                             : lo;
  int attr;
  float thr;
  if (!dipolar_test(a, b, rng, &attr, &thr)) return false;
  const std::vector<int> attrs = n->model_attrs;
  n->attr = attr;
  n->threshold = thr;
  n->model_attrs.clear();
  n->coef.clear();
  n->left = std::make_unique<Node>();
  n->left->make_leaf(attrs);
  n->right = std::make_unique<Node>();
  n->right->make_leaf(attrs);
  return true;
}

bool GmtEA::mutate(Individual& ind, Rng& rng) {
  std::vector<NodeRef> nodes = collect_nodes(ind.root.get());
  std::vector<NodeRef> leaves, internal;
  for (const auto& r : nodes) (r.node->is_leaf() ? leaves : internal).push_back(r);
  for (int attempt = 0; attempt < 4; ++attempt) {
    const bool pick_leaf = internal.empty() || rng.bernoulli(0.5);
    std::vector<NodeRef> list = pick_leaf ? leaves : internal;
    if (pick_leaf) {
      // Higher error first.
      std::stable_sort(list.begin(), list.end(), [](const NodeRef& x, const NodeRef& y) { return x.node->stats.sse > y.node->stats.sse; });
    } else {
      // Deeper and higher-error internal nodes first: sum of the two ranks.
      std::vector<std::size_t> idx(list.size());
      std::iota(idx.begin(), idx.end(), std::size_t{0});
      std::vector<std::size_t> rank_level(list.size()), rank_err(list.size());
      std::stable_sort(idx.begin(), idx.end(), [&](std::size_t x, std::size_t y) { return list[x].depth > list[y].depth; });
      for (std::size_t k = 0; k < idx.size(); ++k) rank_level[idx[k]] = k;
      std::iota(idx.begin(), idx.end(), std::size_t{0});
      std::stable_sort(idx.begin(), idx.end(), [&](std::size_t x, std::size_t y) { return list[x].node->stats.sse > list[y].node->stats.sse; });
      for (std::size_t k = 0; k < idx.size(); ++k) rank_err[idx[k]] = k;
      std::iota(idx.begin(), idx.end(), std::size_t{0});
      std::stable_sort(idx.begin(), idx.end(), [&](std::size_t x, std::size_t y) { return rank_level[x] + rank_err[x] < rank_level[y] + rank_err[y]; });
      std::vector<NodeRef> sorted;
      for (std::size_t k : idx) sorted.push_back(list[k]);
      list.swap(sorted);
    }
    const NodeRef& target = list[rank_select(list.size(), rng)];
    bool ok = false;
    if (pick_leaf) {
      const double w[2] = {p_.mut_change_model, p_.mut_expand};
      const double u = rng.uniform() * (w[0] + w[1]);
      ok = u < w[0] ? mutate_change_model(target.node, rng) : mutate_expand(target.node, target.depth, rng);
    } else {
      const double w[4] = {p_.mut_new_test, p_.mut_shift_threshold, p_.mut_swap_test, p_.mut_prune};
      const double u = rng.uniform() * (w[0] + w[1] + w[2] + w[3]);
      if (u < w[0]) ok = mutate_new_test(target.node, rng);
      else if (u < w[0] + w[1]) ok = mutate_shift_threshold(target.node, rng);
      else if (u < w[0] + w[1] + w[2]) ok = mutate_swap_test(target.node, rng);
      else ok = mutate_prune(target.node, rng);
    }
    if (ok) return true;
  }
  return false;
}

int GmtEA::crossover(Individual& a, Individual& b, Rng& rng) {
  std::vector<NodeRef> na = collect_nodes(a.root.get()), nb = collect_nodes(b.root.get());
  const double w[4] = {p_.cx_subtrees, p_.cx_tests, p_.cx_branches, p_.cx_asymmetric};
  const double u = rng.uniform() * (w[0] + w[1] + w[2] + w[3]);
  const int variant = u < w[0] ? 0 : u < w[0] + w[1] ? 1 : u < w[0] + w[1] + w[2] ? 2 : 3;
  NodeRef x = na[rng.below(na.size())];
  NodeRef y = nb[rng.below(nb.size())];
  if (variant == 1 || variant == 2) {
    // Tests and branches need two internal nodes.
    std::vector<NodeRef> ia, ib;
    for (auto& r : na)
      if (!r.node->is_leaf()) ia.push_back(r);
    for (auto& r : nb)
      if (!r.node->is_leaf()) ib.push_back(r);
    if (ia.empty() || ib.empty()) return 0;
    x = ia[rng.below(ia.size())];
    y = ib[rng.below(ib.size())];
  }
  Individual backup_a = a.clone(), backup_b = b.clone();
  int changed = 0;
  switch (variant) {
    case 0:  // exchange subtrees
      if (x.parent == nullptr && y.parent == nullptr) return 0;
      std::swap(*x.node, *y.node);
      mark_subtree_dirty(x.node);
      mark_subtree_dirty(y.node);
      changed = 3;
      break;
    case 1:  // exchange tests
      std::swap(x.node->attr, y.node->attr);
      std::swap(x.node->threshold, y.node->threshold);
      mark_subtree_dirty(x.node);
      mark_subtree_dirty(y.node);
      changed = 3;
      break;
    case 2:  // exchange branches (the tests stay, the subtrees below them move)
      std::swap(x.node->left, y.node->left);
      std::swap(x.node->right, y.node->right);
      mark_subtree_dirty(x.node);
      mark_subtree_dirty(y.node);
      changed = 3;
      break;
    default: {  // asymmetric: the lower-error subtree (per row) replaces the higher-error one
      if (x.node->stats.count <= 0 || y.node->stats.count <= 0) return 0;
      const double ex = x.node->stats.sse / double(x.node->stats.count);
      const double ey = y.node->stats.sse / double(y.node->stats.count);
      if (ex == ey) return 0;
      if (ex < ey) {
        *y.node = std::move(*x.node->clone());
        mark_subtree_dirty(y.node);
        changed = 2;
      } else {
        *x.node = std::move(*y.node->clone());
        mark_subtree_dirty(x.node);
        changed = 1;
      }
    }
  }
  if (tree_depth(a.root.get()) > p_.max_depth || tree_depth(b.root.get()) > p_.max_depth) {
    a = std::move(backup_a);
    b = std::move(backup_b);
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
    for (auto& ind : pop) ind.root = init_tree(rng);
  }
  {
    std::vector<Individual*> all;
    for (auto& ind : pop) all.push_back(&ind);
    evaluate(all);
  }
  auto by_fitness = [](const Individual& x, const Individual& y) { return x.fitness < y.fitness; };
  std::vector<Individual> next;
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
      next.clear();
      for (int e = 0; e < p_.elitism; ++e) next.push_back(pop[static_cast<std::size_t>(e)].clone());
      while (next.size() < pop.size()) next.push_back(pop[rank_select(pop.size(), rng)].clone());
      std::vector<char> mod(next.size(), 0);
      const std::size_t first = static_cast<std::size_t>(p_.elitism);
      for (std::size_t i = first; i + 1 < next.size(); i += 2) {
        if (!rng.bernoulli(p_.crossover)) continue;
        const int c = crossover(next[i], next[i + 1], rng);
        if (c & 1) mod[i] = 1;
        if (c & 2) mod[i + 1] = 1;
      }
      for (std::size_t i = first; i < next.size(); ++i)
        if (rng.bernoulli(p_.mutation) && mutate(next[i], rng)) mod[i] = 1;
      for (std::size_t i = 0; i < next.size(); ++i)
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
    if (p_.max_seconds > 0 && it < p_.iterations &&
        std::chrono::duration<double>(std::chrono::steady_clock::now() - loop_start).count() >= p_.max_seconds) {
      summary_.stop_reason = "time";
      break;
    }
  }
  summary_.best_fitness = pop[0].fitness;
  return std::move(pop[0]);
}

}  // namespace gmt
}  // namespace gpudm
