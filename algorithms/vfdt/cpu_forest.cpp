#include "algorithms/vfdt/cpu_forest.hpp"

#include <algorithm>
#include <cmath>

#include "algorithms/core/stopwatch.hpp"

namespace gpudm::vfdt {

void CpuForest::parallel_trees(int trees, const std::function<void(int)>& fn) {
  tasks_->run(static_cast<std::size_t>(trees), [&](std::size_t t) { fn(static_cast<int>(t)); }, {TaskSchedule::Kind::fixed, 1});
}
// The vote: one range below 256 instances, else 4 ranges per thread.
void CpuForest::parallel_instances(std::size_t n, const std::function<void(std::size_t, std::size_t)>& fn) {
  tasks_->ranges(n, 256, 4, fn);
}

void CpuForest::prepare(const EncodedStream& stream) {
  const ForestParams& params = options();
  params.validate(stream);
  s_ = &stream;
  first_ = 0;
  p_ = params;
  stream_order_ = params.stream_order();
  naive_bayes_ = params.naive_bayes();
  bound_total_ = params.bound_total();
  reset_any_ = params.reset_on_any_cut();
  L_ = ForestLayout::make(stream, params);
  const double r = std::log2(static_cast<double>(L_.classes));
  hb_numer_ = r * r * std::log(1.0 / p_.delta);
  attr_values_.resize(stream.attributes);
  for (int a = 0; a < stream.attributes; ++a) attr_values_[a] = stream.coding[a].values;
  const std::size_t T = L_.trees, N = L_.nodes;
  n_nodes_.assign(T, 0);
  n_slots_.assign(T, 0);
  generation_.assign(T, 0);
  drift_.assign(T, 0);
  adwin_.resize(T);
  splits_.assign(T, 0);
  resets_.assign(T, 0);
  node_attr_.assign(T * N, -1);
  node_child_.assign(T * N, 0);
  node_depth_.assign(T * N, 0);
  slot_class_.assign(T * N * L_.classes, 0);
  slot_seen_.assign(T * N, 0);
  slot_last_.assign(T * N, 0);
  slot_key_.assign(T * N, 0);
  slot_depth_.assign(T * N, 0);
  slot_subset_.assign(T * N * L_.features, 0);
  counters_.assign(T * N * L_.counters_per_slot(), 0);
  slot_node_.assign(T * N, 0);
  slot_due_.assign(T * N, 0);
  due_.assign(T, {});
  leaf_.assign(T * std::size_t(p_.batch), 0);
  tree_pred_.assign(T * std::size_t(p_.batch), 0);
  reset();
}

void CpuForest::init_slot(int t, int slot, std::uint64_t key, int depth) {
  const std::size_t si = slot_index(t, slot);
  std::fill_n(slot_class_.begin() + si * L_.classes, L_.classes, 0u);
  slot_seen_[si] = slot_last_[si] = 0;
  slot_key_[si] = key;
  slot_depth_[si] = depth;
  draw_subset(key, L_.attributes, L_.features, slot_subset_.data() + si * L_.features);
  std::fill_n(counters(t, slot), L_.counters_per_slot(), 0u);
}

void CpuForest::init_tree(int t, std::uint32_t generation) {
  generation_[t] = generation;
  n_nodes_[t] = 1;
  n_slots_[t] = 1;
  node_attr_[node_index(t, 0)] = -1;
  node_child_[node_index(t, 0)] = 0;
  node_depth_[node_index(t, 0)] = 0;
  init_slot(t, 0, root_key(p_.seed, global(t), generation), 0);
  slot_node_[slot_index(t, 0)] = 0;
  for (const int s : due_[t]) slot_due_[slot_index(t, s)] = 0;
  due_[t].clear();
  adwin_init(adwin_[t]);
  drift_[t] = 0;
}

void CpuForest::reset_tree(int t) {
  init_tree(t, generation_[t] + 1);
  ++resets_[t];
}

void CpuForest::reset() {
  for (int t = 0; t < L_.trees; ++t) {
    init_tree(t, 0);
    splits_[t] = resets_[t] = 0;
  }
}

int CpuForest::route(int t, std::size_t i) const {
  const std::int32_t* attr = node_attr_.data() + node_index(t, 0);
  const std::int32_t* child = node_child_.data() + node_index(t, 0);
  const std::uint8_t* x = s_->codes.data() + i * s_->attributes;
  int node = 0;
  while (attr[node] >= 0) node = child[node] + x[attr[node]];
  return child[node];
}

std::uint8_t CpuForest::leaf_vote(int t, int slot, std::size_t i) {
  const std::size_t si = slot_index(t, slot);
  const std::uint32_t* cls = slot_class_.data() + si * L_.classes;
  if (!naive_bayes_) return static_cast<std::uint8_t>(majority(cls, L_.classes));
  return static_cast<std::uint8_t>(naive_bayes_vote(cls, counters(t, slot), slot_subset_.data() + si * L_.features,
                                                    attr_values_.data(), s_->codes.data() + i * s_->attributes,
                                                    L_.features, L_.values, L_.classes));
}

void CpuForest::predict_tree(int t, std::size_t b0, std::size_t b1) {
  for (std::size_t i = b0; i < b1; ++i) {
    const int slot = route(t, i);
    const std::size_t j = std::size_t(t) * p_.batch + (i - b0);
    leaf_[j] = slot;
    tree_pred_[j] = leaf_vote(t, slot, i);
  }
}

void CpuForest::tally(std::size_t j0, std::size_t j1, std::uint32_t* votes) const {
  for (std::size_t j = j0; j < j1; ++j) {
    std::uint32_t* v = votes + j * static_cast<std::size_t>(L_.classes);
    std::fill_n(v, L_.classes, 0u);
    for (int t = 0; t < L_.trees; ++t) ++v[tree_pred_[std::size_t(t) * p_.batch + j]];
  }
}

void CpuForest::vote(std::size_t j0, std::size_t j1, std::size_t b0, std::int32_t* out) const {
  std::uint32_t votes[256];
  for (std::size_t j = j0; j < j1; ++j) {
    std::fill_n(votes, L_.classes, 0u);
    for (int t = 0; t < L_.trees; ++t) ++votes[tree_pred_[std::size_t(t) * p_.batch + j]];
    out[b0 + j] = majority(votes, L_.classes);
  }
}

void CpuForest::learn_one(int t, std::size_t i, int slot) {
  const int k = L_.features, V = L_.values, C = L_.classes;
  const std::uint32_t w = p_.bagging ? static_cast<std::uint32_t>(poisson1(p_.seed, global(t), first_ + i)) : 1u;
  if (w == 0) return;
  const std::size_t si = slot_index(t, slot);
  const int y = s_->labels[i];
  const std::uint8_t* x = s_->codes.data() + i * s_->attributes;
  slot_class_[si * C + y] += w;
  slot_seen_[si] += w;
  if (!slot_due_[si] && slot_seen_[si] - slot_last_[si] >= static_cast<std::uint32_t>(p_.grace)) {
    slot_due_[si] = 1;
    due_[t].push_back(slot);
  }
  const std::int16_t* sub = slot_subset_.data() + si * k;
  std::uint32_t* cnt = counters(t, slot);
  for (int p = 0; p < k; ++p) cnt[(std::size_t(p) * V + x[sub[p]]) * C + y] += w;
}

void CpuForest::learn_tree(int t, std::size_t b0, std::size_t b1) {
  for (std::size_t i = b0; i < b1; ++i) learn_one(t, i, leaf_[std::size_t(t) * p_.batch + (i - b0)]);
}

void CpuForest::adwin_tree(int t, std::size_t b0, std::size_t b1) {
  if (!p_.adwin) return;
  Adwin& a = adwin_[t];
  for (std::size_t i = b0; i < b1; ++i) {
    const std::uint32_t err = tree_pred_[std::size_t(t) * p_.batch + (i - b0)] != s_->labels[i];
    if (adwin_update(a, err, p_.adwin_delta, reset_any_)) {
      drift_[t] = 1;
      break;  // the tree and its ADWIN are replaced at the end of the batch
    }
  }
}

void CpuForest::stream_tree(int t, std::size_t b0, std::size_t b1) {
  for (std::size_t i = b0; i < b1; ++i) {
    const int slot = route(t, i);
    const std::size_t j = std::size_t(t) * p_.batch + (i - b0);
    const std::uint8_t vote = leaf_vote(t, slot, i);
    tree_pred_[j] = vote;
    learn_one(t, i, slot);
    if (p_.adwin && adwin_update(adwin_[t], vote != s_->labels[i], p_.adwin_delta, reset_any_))
      reset_tree(t);  // at once: the fresh tree and detector take the next instance
  }
}

void CpuForest::split_tree(int t) {
  if (drift_[t]) {
    reset_tree(t);
    return;
  }
  if (due_[t].empty()) return;
  const int k = L_.features, V = L_.values, C = L_.classes;
  std::vector<std::int32_t>& due = due_[t];
  for (auto& s : due) {
    slot_due_[slot_index(t, s)] = 0;
    s = slot_node_[slot_index(t, s)];  // slot -> node, then node order
  }
  std::sort(due.begin(), due.end());
  std::vector<std::uint32_t> branch;  // allocated only when a leaf splits (rare)
  std::uint64_t ck[256];
  for (const int node : due) {
    const std::size_t ni = node_index(t, node);
    const int slot = node_child_[ni];
    const std::size_t si = slot_index(t, slot);
    slot_last_[si] = slot_seen_[si];
    if (node_depth_[ni] >= p_.max_depth) continue;
    const std::uint32_t* cnt = counters(t, slot);
    // class totals learned since the leaf was created (same for every subset attribute)
    std::fill_n(ck, C, 0);
    for (int v = 0; v < V; ++v)
      for (int c = 0; c < C; ++c) ck[c] += cnt[std::size_t(v) * C + c];
    std::uint64_t total = 0;
    int nonzero = 0;
    for (int c = 0; c < C; ++c) {
      total += ck[c];
      nonzero += ck[c] > 0;
    }
    if (nonzero < 2) continue;
    std::int64_t class_term = xlog2x_fixed(total);
    for (int c = 0; c < C; ++c) class_term -= xlog2x_fixed(ck[c]);
    const std::int16_t* sub = slot_subset_.data() + si * k;
    std::int64_t best = -1, second = -1;
    const int best_p = best_two_merits(
        k, [&](int p) { return gain_merit(cnt + std::size_t(p) * V * C, attr_values_[sub[p]], C, total, class_term); },
        &best, &second);
    // bound_weight "total": the leaf's class counts, inherited at its creation + learned since
    const std::uint64_t n_bound = bound_total_ ? class_total(slot_class_.data() + si * C, C) : total;
    if (best_p < 0 || !should_split(best, second, total, n_bound, hb_numer_, p_.tau)) continue;
    const int a = sub[best_p];
    const int va = attr_values_[a];
    if (n_nodes_[t] + va > L_.nodes || n_slots_[t] + va - 1 > L_.nodes) continue;  // pool full
    branch.assign(cnt + std::size_t(best_p) * V * C, cnt + (std::size_t(best_p) * V + va) * C);
    const std::uint64_t key = slot_key_[si];
    const int depth = node_depth_[ni] + 1;
    const int first = n_nodes_[t];
    n_nodes_[t] += va;
    node_attr_[ni] = a;
    node_child_[ni] = first;
    for (int j = 0; j < va; ++j) {
      const int child_slot = j == 0 ? slot : n_slots_[t]++;
      const std::size_t ci = node_index(t, first + j);
      node_attr_[ci] = -1;
      node_child_[ci] = child_slot;
      node_depth_[ci] = depth;
      init_slot(t, child_slot, child_key(key, static_cast<std::uint32_t>(j)), depth);
      slot_node_[slot_index(t, child_slot)] = first + j;
      std::copy_n(branch.begin() + std::size_t(j) * C, C, slot_class_.begin() + slot_index(t, child_slot) * C);
    }
    ++splits_[t];
  }
  due.clear();
}

template <class VoteStep>
void CpuForest::run(std::size_t begin, std::size_t end, PhaseTimer& timer, VoteStep vote_step) {
  GPUDM_REQUIRE(s_ != nullptr, "vfdt: process() before prepare()");
  GPUDM_REQUIRE(begin <= end && end <= s_->rows, "vfdt: process range past the end of the stream");
  const std::size_t B = static_cast<std::size_t>(p_.batch);
  // Timing each phase of a one-instance batch would cost more than the work itself.
  const bool timed = B >= 64 && timer.enabled();
  auto phase = [&](const char* name, auto&& fn) {
    if (!timed) return fn();
    Stopwatch sw;
    fn();
    timer.add(name, sw.seconds());
  };
  Stopwatch total;
  for (std::size_t b0 = begin; b0 < end; b0 += B) {
    const std::size_t b1 = std::min(end, b0 + B);
    if (stream_order_) {
      phase("stream", [&] { parallel_trees(L_.trees, [&](int t) { stream_tree(t, b0, b1); }); });
    } else {
      phase("traversal", [&] { parallel_trees(L_.trees, [&](int t) { predict_tree(t, b0, b1); }); });
    }
    phase("vote", [&] { vote_step(b0, b1); });
    if (!stream_order_) {
      phase("counters", [&] { parallel_trees(L_.trees, [&](int t) { learn_tree(t, b0, b1); }); });
      phase("adwin", [&] { parallel_trees(L_.trees, [&](int t) { adwin_tree(t, b0, b1); }); });
    }
    phase("split", [&] { parallel_trees(L_.trees, [&](int t) { split_tree(t); }); });
  }
  if (!timed && timer.enabled()) timer.add("prequential", total.seconds());
}

void CpuForest::process(std::size_t begin, std::size_t end, std::int32_t* predictions, PhaseTimer& timer) {
  run(begin, end, timer, [&](std::size_t b0, std::size_t b1) {
    std::int32_t* out = predictions + (b0 - begin);
    parallel_instances(b1 - b0, [&](std::size_t j0, std::size_t j1) { vote(j0, j1, 0, out); });
  });
}

void CpuForest::process_votes(std::size_t begin, std::size_t end, std::uint32_t* votes, PhaseTimer& timer) {
  run(begin, end, timer, [&](std::size_t b0, std::size_t b1) {
    std::uint32_t* out = votes + (b0 - begin) * static_cast<std::size_t>(L_.classes);
    parallel_instances(b1 - b0, [&](std::size_t j0, std::size_t j1) { tally(j0, j1, out); });
  });
}

void CpuForest::continue_with(const EncodedStream& chunk, std::uint64_t first_instance) {
  GPUDM_REQUIRE(s_ != nullptr, "vfdt: continue_with() before prepare()");
  check_chunk(L_, attr_values_, chunk, name());
  s_ = &chunk;
  first_ = first_instance;
}

ForestSnapshot CpuForest::snapshot() {
  ForestSnapshot s;
  s.layout = L_;
  s.n_nodes = n_nodes_;
  s.generation = generation_;
  s.node_attr = node_attr_;
  s.node_child = node_child_;
  s.node_depth = node_depth_;
  s.slot_class = slot_class_;
  s.attr_values = attr_values_;
  for (int t = 0; t < L_.trees; ++t) {
    s.splits += splits_[t];
    s.resets += resets_[t];
  }
  return s;
}

}  // namespace gpudm::vfdt
