#pragma once
// Kernels of the CUDA streaming forest, default path (compact node pool, same flat layout as the
// CPU engine in algorithms/vfdt/cpu_forest.cpp), and the vote and ADWIN kernels both paths share.
// Trees are on blockIdx.y (or one block per tree); all decisions use the shared host/device
// arithmetic of algorithms/vfdt/vfdt_math.hpp, so the trees are bit-identical to the sequential
// backend for the same seed and batch size. Launched by launch.cu only.
#include <climits>
#include <cstdint>

#include "algorithms/vfdt/vfdt_math.hpp"
#include "backends/cuda/vfdt/policy.cuh"
#include "backends/cuda/vfdt/args.cuh"

namespace gpudm::backend::cuda::vfdt_kernels {

// Block-wide, order-preserving compaction: writes the indices i in [0, n) with pred(i) true, in
// ascending order, to list[0, min(count, cap)) and returns count (all threads). Each thread owns a
// contiguous chunk; a Hillis-Steele scan of the per-thread counts gives the offsets.
// Requires blockDim.x <= Policy::kScanMax; every thread of the block must call it.
template <class Pred>
__device__ int block_compact(int n, Pred pred, int* list, int cap) {
  __shared__ int s_scan[2][Policy::kScanMax];
  const int tid = threadIdx.x, nt = blockDim.x;
  const int per = (n + nt - 1) / nt;
  const int i0 = min(n, tid * per), i1 = min(n, i0 + per);
  int c = 0;
  for (int i = i0; i < i1; ++i) c += pred(i) ? 1 : 0;
  int buf = 0;
  s_scan[buf][tid] = c;
  __syncthreads();
  for (int o = 1; o < nt; o <<= 1) {
    const int v = s_scan[buf][tid] + (tid >= o ? s_scan[buf][tid - o] : 0);
    s_scan[buf ^ 1][tid] = v;
    buf ^= 1;
    __syncthreads();
  }
  int at = s_scan[buf][tid] - c;  // exclusive offset
  const int total = s_scan[buf][nt - 1];
  for (int i = i0; i < i1; ++i)
    if (pred(i)) {
      if (at < cap) list[at] = i;
      ++at;
    }
  __syncthreads();
  return total;
}

// ---- leaf initialisation (shared by reset and split)
__device__ inline void init_slot(const ForestView& f, int t, int slot, std::uint64_t key, int lane, int lanes) {
  const std::size_t si = f.slot_index(t, slot);
  for (int c = lane; c < f.classes; c += lanes) f.slot_class[si * f.classes + c] = 0;
  std::uint32_t* cnt = f.counters + si * f.counters_per_slot();
  for (std::size_t i = lane; i < f.counters_per_slot(); i += lanes) cnt[i] = 0;
  if (lane == 0) {
    f.slot_seen[si] = 0;
    f.slot_last[si] = 0;
    f.slot_key[si] = key;
    gpudm::vfdt::draw_subset(key, f.attributes, f.features, f.slot_subset + si * f.features);
  }
}

// One block per tree: the tree becomes a single fresh leaf of generation `gen`.
__device__ inline void init_tree(const ForestView& f, int t, std::uint32_t gen) {
  const int lane = threadIdx.x, lanes = blockDim.x;
  if (lane == 0) {
    f.generation[t] = gen;
    f.n_nodes[t] = 1;
    f.n_slots[t] = 1;
    const std::size_t ni = std::size_t(t) * f.nodes;
    f.node_attr[ni] = -1;
    f.node_child[ni] = 0;
    f.node_depth[ni] = 0;
    f.drift[t] = 0;
    gpudm::vfdt::adwin_init(f.adwins[t]);
    if (f.adwinp) gpudm::vfdt::adwinp_init(f.adwinp[t]);
  }
  init_slot(f, t, 0, gpudm::vfdt::root_key(f.seed, static_cast<std::uint32_t>(f.first_tree + t), gen), lane, lanes);
}

__global__ void k_init(ForestView f) {
  const int t = blockIdx.x;
  init_tree(f, t, 0);
  if (threadIdx.x == 0) {
    f.splits[t] = 0;
    f.resets[t] = 0;
    if (f.hist) f.hist[std::size_t(t) * f.hist_stride] = 0;
  }
}

// ---- per-instance steps, shared by the per-step kernels and the persistent kernel
// Leaf slot of instance j of the batch in tree t; stored in f.leaf.
__device__ inline int route_one(const ForestView& f, int t, const std::uint8_t* codes, int j) {
  const std::int32_t* attr = f.node_attr + std::size_t(t) * f.nodes;
  const std::int32_t* child = f.node_child + std::size_t(t) * f.nodes;
  const std::uint8_t* x = codes + std::size_t(j) * f.attributes;
  int node = 0;
  for (int a = attr[0]; a >= 0; a = attr[node]) node = child[node] + x[a];
  const int slot = child[node];
  f.leaf[std::size_t(t) * f.batch + j] = slot;
  return slot;
}

// Tree t routes instance j of the batch to its leaf (f.leaf) and returns the leaf's vote.
__device__ inline std::uint8_t predict_one(const ForestView& f, int t, const std::uint8_t* codes, int j) {
  const int slot = route_one(f, t, codes, j);
  const std::size_t si = f.slot_index(t, slot);
  if (!f.naive_bayes) return static_cast<std::uint8_t>(gpudm::vfdt::majority(f.slot_class + si * f.classes, f.classes));
  return static_cast<std::uint8_t>(gpudm::vfdt::naive_bayes_vote(
      f.slot_class + si * f.classes, f.counters + si * f.counters_per_slot(), f.slot_subset + si * f.features, f.attr_values,
      codes + std::size_t(j) * f.attributes, f.features, f.values, f.classes));
}

// Online-bagging weight of stream instance i in tree t (1 without bagging).
__device__ inline std::uint32_t tree_weight(const ForestView& f, int t, std::uint64_t i) {
  return f.bagging ? static_cast<std::uint32_t>(gpudm::vfdt::poisson1(f.seed, static_cast<std::uint32_t>(f.first_tree + t), i)) : 1u;
}

// Tree t learns instance j of the batch (leaf from route_one); integer atomics, order-free.
// add_class false: the leaf's class count was already added (batch_order "stream" walk).
__device__ inline void learn_one(const ForestView& f, int t, const std::uint8_t* codes, const std::uint8_t* labels, int j,
                                 std::uint64_t first_instance, bool add_class = true) {
  const std::uint32_t w = tree_weight(f, t, first_instance + j);
  if (w == 0) return;
  const int slot = f.leaf[std::size_t(t) * f.batch + j];
  const std::size_t si = f.slot_index(t, slot);
  const int y = labels[j];
  const std::uint8_t* x = codes + std::size_t(j) * f.attributes;
  if (add_class) atomicAdd(f.slot_class + si * f.classes + y, w);
  atomicAdd(f.slot_seen + si, w);
  const std::int16_t* sub = f.slot_subset + si * f.features;
  std::uint32_t* cnt = f.counters + si * f.counters_per_slot();
  for (int p = 0; p < f.features; ++p) atomicAdd(cnt + (std::size_t(p) * f.values + x[sub[p]]) * f.classes + y, w);
}

// 1. traversal: thread per (instance, tree) -> leaf slot and the tree's vote.
__global__ void k_predict(ForestView f, const std::uint8_t* codes, int nb) {
  const int j = blockIdx.x * blockDim.x + threadIdx.x;
  const int t = blockIdx.y;
  if (j >= nb) return;
  f.tree_pred[std::size_t(t) * f.batch + j] = predict_one(f, t, codes, j);
}

// The trees' votes for instance j, per class.
__device__ inline void count_votes(const VoteView& v, std::size_t j, std::uint32_t* votes) {
  for (int c = 0; c < v.classes; ++c) votes[c] = 0;
  for (int t = 0; t < v.trees; ++t) ++votes[v.tree_pred[std::size_t(t) * v.stride + j]];
}

// 2. vote: thread per instance, majority over trees (ties -> lowest class). Both paths, and the
// persistent engine over a whole chunk of the stream.
__global__ void k_vote(VoteView v, std::size_t n, std::int32_t* out) {
  const std::size_t j = std::size_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (j >= n) return;
  std::uint32_t votes[Policy::kMaxClasses];
  count_votes(v, j, votes);
  out[j] = gpudm::vfdt::majority(votes, v.classes);
}

// 2'. tally: thread per instance, the trees' votes per class (out[j * classes + c]): a forest split
// over ranks adds the ranks' tallies, then takes the majority (ShardedForest).
__global__ void k_tally(VoteView v, std::size_t n, std::uint32_t* out) {
  const std::size_t j = std::size_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (j >= n) return;
  std::uint32_t votes[Policy::kMaxClasses];
  count_votes(v, j, votes);
  for (int c = 0; c < v.classes; ++c) out[j * static_cast<std::size_t>(v.classes) + c] = votes[c];
}

// 3. counters: thread per (instance, tree); integer atomics, so the order does not matter.
__global__ void k_learn(ForestView f, const std::uint8_t* codes, const std::uint8_t* labels, int nb,
                        std::uint64_t first_instance) {
  const int j = blockIdx.x * blockDim.x + threadIdx.x;
  const int t = blockIdx.y;
  if (j >= nb) return;
  learn_one(f, t, codes, labels, j, first_instance);
}

// 4. ADWIN: one warp per tree. Lane 0 inserts the batch's 0/1 errors in stream order; at every
// clock tick the warp tests the bucket boundaries in parallel (a cut happens when any boundary
// cuts, exactly the sequential rescan's result).
__global__ void k_adwin(AdwinView f, const std::uint8_t* labels, int nb) {
  const int t = blockIdx.x;
  const int lane = threadIdx.x;
  __shared__ Adwin a;
  __shared__ int stop;
  {
    const auto* src = reinterpret_cast<const std::uint32_t*>(f.adwins + t);
    auto* dst = reinterpret_cast<std::uint32_t*>(&a);
    for (int i = lane; i < int(sizeof(Adwin) / 4); i += 32) dst[i] = src[i];
  }
  if (lane == 0) stop = 0;
  __syncwarp();
  for (int j = 0; j < nb; ++j) {
    std::uint64_t w_before = 0, ones_before = 0;
    if (lane == 0) {
      w_before = a.width;
      ones_before = a.ones;
      const std::uint32_t err = f.tree_pred[std::size_t(t) * f.batch + j] != labels[j];
      a.time += 1;
      gpudm::vfdt::adwin_insert(a, err);
    }
    __syncwarp();
    if (gpudm::vfdt::adwin_check_due(a)) {
      bool cut = false;
      for (;;) {
        const int buckets = gpudm::vfdt::adwin_buckets(a);
        const gpudm::vfdt::AdwinCheck k = gpudm::vfdt::adwin_check_constants(a, f.adwin_delta);
        bool any = false;
        for (int p = lane; p < buckets - 1; p += 32) any = any || gpudm::vfdt::adwin_boundary_cuts(a, k, p);
        any = __any_sync(0xffffffffu, any);
        if (!any) break;
        cut = true;
        __syncwarp();
        if (lane == 0) gpudm::vfdt::adwin_delete_oldest(a);
        __syncwarp();
      }
      if (cut && lane == 0) {
        if (gpudm::vfdt::adwin_signals(f.reset_any, w_before, ones_before, a.width, a.ones)) {
          f.drift[t] = 1 + j;  // 1 + the batch position of the input that fired
          stop = 1;
        }
      }
    }
    __syncwarp();
    if (stop) break;
  }
  __syncwarp();
  {
    const auto* src = reinterpret_cast<const std::uint32_t*>(&a);
    auto* dst = reinterpret_cast<std::uint32_t*>(f.adwins + t);
    for (int i = lane; i < int(sizeof(Adwin) / 4); i += 32) dst[i] = src[i];
  }
}

// 4'. ADWIN, fast kernel: one warp per tree. The inputs between two clock ticks (at most 32) are
// inserted as one block, the warp merging each row's FIFO in parallel (adwin_insert_block is the
// scalar reference, tested equal to single insertions). A check flattens the buckets (oldest
// first), the lanes take contiguous chunks and a warp scan gives each boundary its (n0, u0);
// a pre-filter with dd of an earlier, smaller window (a lower bound of dd) skips the two
// logarithms whenever no boundary can cut, and otherwise the exact test decides as in
// adwin_update. Same decisions as the sequential ADWIN, bit for bit.
__global__ void k_adwin_warp(AdwinView f, const std::uint8_t* labels, int nb) {
  constexpr unsigned kAll = 0xffffffffu;
  constexpr int kFlat = Adwin::kRows * (Adwin::kM + 1);
  const int t = blockIdx.x;
  const int lane = threadIdx.x;
  __shared__ Adwin a;
  __shared__ std::uint32_t inc[32];
  __shared__ std::uint8_t flat_r[kFlat];
  __shared__ std::uint32_t flat_u[kFlat];
  __shared__ int flat_n;
  {
    const auto* src = reinterpret_cast<const std::uint32_t*>(f.adwins + t);
    auto* dst = reinterpret_cast<std::uint32_t*>(&a);
    for (int i = lane; i < int(sizeof(Adwin) / 4); i += 32) dst[i] = src[i];
  }
  __syncwarp();
  std::uint64_t w_cached = 0;  // window width at which dd_cached was computed (0: none)
  double dd_cached = 0;
  int j = 0;
  while (j < nb) {
    const int k = min(Adwin::kClock - static_cast<int>(a.time % Adwin::kClock), nb - j);
    std::uint32_t x = 0;
    if (lane < k) x = f.tree_pred[std::size_t(t) * f.batch + j + lane] != labels[j + lane];
    const unsigned bal = __ballot_sync(kAll, x != 0);
    const std::uint32_t x_last = __shfl_sync(kAll, x, k - 1);
    const std::uint64_t w_before = a.width + k - 1;
    const std::uint64_t ones_before = a.ones + __popc(bal) - x_last;
    __syncwarp();
    // ---- block insertion
    if (lane < k) inc[lane] = x;
    if (lane == 0) {
      a.ones += __popc(bal);
      a.width += k;
      a.time += k;
      if (a.rows == 0) a.rows = 1;
    }
    __syncwarp();
    int kin = k;
    for (int r = 0; r < Adwin::kRows && kin > 0; ++r) {
      const int have = a.count[r];
      const int q = have + kin;
      const int m = gpudm::vfdt::adwin_block_merges(have, kin);
      const int left = q - 2 * m;
      std::uint32_t out = 0, keep = 0;
      if (lane < m) {
        const int i0 = 2 * lane, i1 = 2 * lane + 1;
        out = (i0 < have ? a.total[r][i0] : inc[i0 - have]) + (i1 < have ? a.total[r][i1] : inc[i1 - have]);
      }
      if (lane < left) {
        const int i = 2 * m + lane;
        keep = i < have ? a.total[r][i] : inc[i - have];
      }
      __syncwarp();
      if (lane < left) a.total[r][lane] = keep;
      if (lane < m) inc[lane] = out;
      if (lane == 0) {
        a.count[r] = static_cast<std::uint8_t>(left);
        if (m > 0 && r + 1 >= a.rows) a.rows = r + 2;
      }
      __syncwarp();
      kin = m;
    }
    j += k;
    // ---- check at the clock tick
    if (!gpudm::vfdt::adwin_check_due(a)) continue;
    bool cut = false;
    for (;;) {
      if (lane == 0) {  // buckets oldest first: row index and total
        int n = 0;
        for (int r = a.rows - 1; r >= 0; --r)
          for (int i = 0; i < a.count[r]; ++i, ++n) {
            flat_r[n] = static_cast<std::uint8_t>(r);
            flat_u[n] = a.total[r][i];
          }
        flat_n = n;
      }
      __syncwarp();
      const int n = flat_n;
      const int per = (n + 31) / 32;
      const int b0 = min(n, lane * per), b1 = min(n, b0 + per);
      unsigned long long cn = 0, cu = 0;
      for (int b = b0; b < b1; ++b) {
        cn += 1ull << flat_r[b];
        cu += flat_u[b];
      }
      unsigned long long sn = cn, su = cu;  // inclusive warp scan
      for (int o = 1; o < 32; o <<= 1) {
        const unsigned long long yn = __shfl_up_sync(kAll, sn, o), yu = __shfl_up_sync(kAll, su, o);
        if (lane >= o) {
          sn += yn;
          su += yu;
        }
      }
      const std::uint64_t n_start = sn - cn, u_start = su - cu;
      // pre-filter with a lower bound of dd
      if (w_cached == 0 || w_cached > a.width) {
        w_cached = a.width;
        dd_cached = gpudm::vfdt::adwin_check_constants(a, f.adwin_delta).dd;
      }
      const double v = gpudm::vfdt::adwin_variance(a);
      bool maybe = false;
      {
        std::uint64_t n0 = n_start, u0 = u_start;
        for (int b = b0; b < b1 && !maybe; ++b) {
          n0 += 1ull << flat_r[b];
          u0 += flat_u[b];
          if (n0 < a.width) maybe = gpudm::vfdt::adwin_may_cut(a, v, dd_cached, n0, u0);
        }
      }
      if (!__any_sync(kAll, maybe)) break;
      const gpudm::vfdt::AdwinCheck kc = gpudm::vfdt::adwin_check_constants(a, f.adwin_delta);
      w_cached = a.width;
      dd_cached = kc.dd;
      bool any = false;
      {
        std::uint64_t n0 = n_start, u0 = u_start;
        for (int b = b0; b < b1 && !any; ++b) {
          n0 += 1ull << flat_r[b];
          u0 += flat_u[b];
          if (n0 < a.width) any = gpudm::vfdt::adwin_cut_test(a, kc, n0, u0);
        }
      }
      if (!__any_sync(kAll, any)) break;
      cut = true;
      __syncwarp();
      if (lane == 0) gpudm::vfdt::adwin_delete_oldest(a);
      __syncwarp();
    }
    if (cut) {
      if (gpudm::vfdt::adwin_signals(f.reset_any, w_before, ones_before, a.width, a.ones)) {
        if (lane == 0) f.drift[t] = j;  // j is already past the block: 1 + its last input's position, where the check ran
        break;  // uniform across the warp
      }
    }
  }
  __syncwarp();
  {
    const auto* src = reinterpret_cast<const std::uint32_t*>(&a);
    auto* dst = reinterpret_cast<std::uint32_t*>(f.adwins + t);
    for (int i = lane; i < int(sizeof(Adwin) / 4); i += 32) dst[i] = src[i];
  }
}

// One block per tree: reset to a fresh leaf after drift (every thread calls it).
__device__ inline void reset_tree(const ForestView& f, int t) {
  __syncthreads();
  const std::uint32_t gen = f.generation[t] + 1;
  __syncthreads();  // every thread has read the generation (and drift) before thread 0 rewrites them
  init_tree(f, t, gen);
  if (threadIdx.x == 0) f.resets[t] += 1;
  __syncthreads();
}

// 5. split (or reset after drift): one block per tree. Phase 1 evaluates the due leaves in
// parallel; phase 2 applies the splits in node order (one thread: node numbering and the pool
// capacity check are sequential by definition), then the block zeroes the new leaves.
__device__ void split_tree(const ForestView& f, int t) {
  if (f.drift[t]) {
    reset_tree(f, t);
    return;
  }
  const int n = f.n_nodes[t];
  const std::size_t nbase = std::size_t(t) * f.nodes;
  const int C = f.classes, V = f.values, k = f.features;
  // Phase 1a (thread per node): which leaves are due, and their class statistics. A leaf whose
  // split is to be evaluated is marked kEvaluate; every other node gets -1.
  constexpr std::int32_t kEvaluate = -2;
  for (int node = threadIdx.x; node < n; node += blockDim.x) {
    std::int32_t decision = -1;
    if (f.node_attr[nbase + node] < 0) {
      const int slot = f.node_child[nbase + node];
      const std::size_t si = f.slot_index(t, slot);
      const std::uint32_t seen = f.slot_seen[si];
      if (seen - f.slot_last[si] >= static_cast<std::uint32_t>(f.grace)) {
        f.slot_last[si] = seen;
        if (f.node_depth[nbase + node] < f.max_depth) {
          const std::uint32_t* cnt = f.counters + si * f.counters_per_slot();
          std::uint64_t total = 0;
          int nonzero = 0;
          std::int64_t class_term = 0;
          for (int c = 0; c < C; ++c) {
            std::uint64_t ck = 0;
            for (int v = 0; v < V; ++v) ck += cnt[std::size_t(v) * C + c];
            total += ck;
            nonzero += ck > 0;
            class_term -= gpudm::vfdt::xlog2x_fixed(ck);
          }
          if (nonzero >= 2) {
            f.split_total[nbase + node] = total;
            f.split_class_term[nbase + node] = class_term + gpudm::vfdt::xlog2x_fixed(total);
            decision = kEvaluate;
          }
        }
      }
    }
    f.decision[nbase + node] = decision;
  }
  __syncthreads();
  // Phase 1b (thread per (node, attribute)): the information-gain merit of every attribute of every
  // marked leaf, spread over the whole block (not one thread's loop over a leaf's attributes).
  for (int item = threadIdx.x; item < n * k; item += blockDim.x) {
    const int node = item / k, p = item - node * k;
    if (f.decision[nbase + node] != kEvaluate) continue;
    const std::size_t si = f.slot_index(t, f.node_child[nbase + node]);
    const std::uint32_t* cnt = f.counters + si * f.counters_per_slot();
    const int a = f.slot_subset[si * k + p];
    f.split_merit[nbase * k + item] = gpudm::vfdt::gain_merit(cnt + std::size_t(p) * V * C, f.attr_values[a], C,
                                                              f.split_total[nbase + node],
                                                              f.split_class_term[nbase + node]);
  }
  __syncthreads();
  // Phase 1c (thread per node): best and second best in attribute order, as the sequential engine.
  for (int node = threadIdx.x; node < n; node += blockDim.x) {
    if (f.decision[nbase + node] != kEvaluate) continue;
    const std::int64_t* merit = f.split_merit + (nbase + node) * k;
    std::int64_t best = -1, second = -1;
    const int best_p = gpudm::vfdt::best_two_merits(k, [merit](int p) { return merit[p]; }, &best, &second);
    const std::uint64_t n = f.split_total[nbase + node];
    // bound_weight "total": the leaf's class counts, inherited at its creation + learned since
    const std::uint64_t n_bound =
        f.bound_total ? gpudm::vfdt::class_total(f.slot_class + f.slot_index(t, f.node_child[nbase + node]) * C, C) : n;
    const bool split = best_p >= 0 && gpudm::vfdt::should_split(best, second, n, n_bound, f.hb_numer, f.tau);
    f.decision[nbase + node] = split ? best_p : -1;
  }
  __syncthreads();
  // Phase 2 (thread 0): structure; class counts of the children come from the parent's counters
  // for the chosen attribute, copied before the parent's slot is reused by child 0. Only the
  // deciding nodes are visited, in node order (compacted first; a full scan if there are more
  // than kSplitList of them).
  __shared__ int s_list[Policy::kSplitList];
  const std::int32_t* dec = f.decision + nbase;
  const int deciding = block_compact(n, [&](int i) { return dec[i] >= 0; }, s_list, Policy::kSplitList);
  if (threadIdx.x == 0 && deciding > 0) {
    const bool listed = deciding <= Policy::kSplitList;
    const int steps = listed ? deciding : n;
    for (int s_i = 0; s_i < steps; ++s_i) {
      const int node = listed ? s_list[s_i] : s_i;
      const int p = f.decision[nbase + node];
      if (p < 0) continue;
      const int slot = f.node_child[nbase + node];
      const std::size_t si = f.slot_index(t, slot);
      const int a = f.slot_subset[si * k + p];
      const int va = f.attr_values[a];
      if (f.n_nodes[t] + va > f.nodes || f.n_slots[t] + va - 1 > f.nodes) {
        f.decision[nbase + node] = -1;
        continue;
      }
      const std::uint32_t* branch = f.counters + si * f.counters_per_slot() + std::size_t(p) * V * C;
      const std::uint64_t key = f.slot_key[si];
      const int depth = f.node_depth[nbase + node] + 1;
      const int first = f.n_nodes[t];
      f.n_nodes[t] += va;
      f.node_attr[nbase + node] = a;
      f.node_child[nbase + node] = first;
      // child 0 reuses the parent's slot (the paper's leaf-id reuse); the branch counts live in
      // the parent's counters, which are zeroed only after every split of this pass
      int slots[256];
      for (int j = 0; j < va; ++j) slots[j] = j == 0 ? slot : f.n_slots[t]++;
      for (int j = 0; j < va; ++j) {
        const std::size_t cs = f.slot_index(t, slots[j]);
        for (int c = 0; c < C; ++c) f.slot_class[cs * C + c] = branch[std::size_t(j) * C + c];
      }
      for (int j = 0; j < va; ++j) {
        const std::size_t ci = nbase + first + j;
        f.node_attr[ci] = -1;
        f.node_child[ci] = slots[j];
        f.node_depth[ci] = depth;
        const std::size_t cs = f.slot_index(t, slots[j]);
        f.slot_seen[cs] = 0;
        f.slot_last[cs] = 0;
        f.slot_key[cs] = gpudm::vfdt::child_key(key, static_cast<std::uint32_t>(j));
        gpudm::vfdt::draw_subset(f.slot_key[cs], f.attributes, k, f.slot_subset + cs * k);
      }
      f.splits[t] += 1;
    }
  }
  __syncthreads();
  // Zero the counters of every leaf created above (their slots are those of the new nodes).
  const int n_after = f.n_nodes[t];
  const std::size_t per = f.counters_per_slot();
  for (int node = n; node < n_after; ++node) {
    const int slot = f.node_child[nbase + node];
    std::uint32_t* cnt = f.counters + f.slot_index(t, slot) * per;
    for (std::size_t i = threadIdx.x; i < per; i += blockDim.x) cnt[i] = 0;
  }
}

__global__ void k_split(ForestView f) { split_tree(f, blockIdx.x); }

}  // namespace gpudm::backend::cuda::vfdt_kernels
