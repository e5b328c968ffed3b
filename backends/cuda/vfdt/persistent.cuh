#pragma once
// The default CUDA engine of the streaming forest: one persistent block per tree walks the whole
// stream batch by batch (predict, learn, ADWIN, split/reset, separated by __syncthreads), so there
// is one launch per process() call instead of five per batch; the trees never wait for each other
// (they are independent until the vote, which runs once at the end over every tree's stored votes).
// Its ADWIN is the "prefix" form (vfdt_math.hpp, AdwinPrefix): the block writes the running count
// of the tree's errors for the batch's positions (a block scan), then tests every clock tick of the
// batch at once, one warp per tick, as if no earlier tick of the batch cut; from the first tick that
// does cut, it replays exactly as adwin_update (delete the oldest bucket while any boundary cuts,
// then the reset rule's test) and resumes the speculation after it. Decisions are the sequential ADWIN's.
// Launched by launch.cu only.
#include <climits>
#include <cstdint>

#include <cub/block/block_scan.cuh>

#include "backends/cuda/vfdt/kernels.cuh"

namespace gpudm::backend::cuda::vfdt_kernels {

// Does any bucket boundary of the window `a` cut? One warp; lane r owns row r of the histogram.
// dd_lo <= ln(2 ln W / delta) of this window (a lower bound: the division-free pre-filter with it
// skips the two logarithms of the exact constants unless some boundary may cut).
__device__ inline bool warp_any_cut(const AdwinPrefix& a, const std::uint32_t* P, double delta, double dd_lo) {
  constexpr unsigned kAll = 0xffffffffu;
  const int lane = threadIdx.x & 31;
  if (a.width == 0) return false;
  const std::uint32_t p_start = P[a.start];
  const std::uint64_t width = a.width, ones = P[a.start + a.width] - p_start;
  const int cnt = lane < a.rows ? a.count[lane] : 0;
  const std::uint64_t size = static_cast<std::uint64_t>(cnt) << lane;
  std::uint64_t incl = size;  // sum over rows >= lane (this row and the older ones)
  for (int o = 1; o < 32; o <<= 1) {
    const std::uint64_t y = __shfl_down_sync(kAll, incl, o);
    if (lane + o < 32) incl += y;
  }
  const std::uint64_t older = incl - size;  // inputs in rows above this one
  std::uint64_t u[Adwin::kM + 1];
  bool maybe = false;
  const double v = gpudm::vfdt::adwin_variance(width, ones);
#pragma unroll
  for (int i = 0; i < Adwin::kM + 1; ++i) {
    u[i] = 0;
    if (i < cnt) {
      const std::uint64_t n0 = older + (static_cast<std::uint64_t>(i + 1) << lane);
      if (n0 < width) {
        u[i] = P[a.start + n0] - p_start;
        maybe = maybe || gpudm::vfdt::adwin_may_cut(width, ones, v, dd_lo, n0, u[i]);
      }
    }
  }
  if (!__any_sync(kAll, maybe)) return false;
  const gpudm::vfdt::AdwinCheck k = gpudm::vfdt::adwin_check_constants(width, ones, delta);
  bool any = false;
#pragma unroll
  for (int i = 0; i < Adwin::kM + 1; ++i) {
    if (i < cnt) {
      const std::uint64_t n0 = older + (static_cast<std::uint64_t>(i + 1) << lane);
      if (n0 < width) any = any || gpudm::vfdt::adwin_cut_test(width, ones, k, n0, u[i]);
    }
  }
  return __any_sync(kAll, any);
}

__device__ inline double adwin_dd(std::uint64_t width, double delta) {
  return gpudm::vfdt::adwin_check_constants(width, 0, delta).dd;
}

// ADWIN of tree t over the nb inputs of a batch whose first instance is at stream position pos0;
// pred[j] is the tree's vote for instance j. Every thread of the block calls it.
template <int BLOCK>
__device__ void adwin_prefix_batch(const ForestView& f, int t, const std::uint8_t* pred, const std::uint8_t* labels,
                                   int nb, std::uint32_t pos0) {
  constexpr int kWarps = BLOCK / 32;
  using BlockScan = cub::BlockScan<std::uint32_t, BLOCK>;
  __shared__ typename BlockScan::TempStorage s_scan;
  __shared__ AdwinPrefix s_base;          // the detector after the inputs consumed so far
  __shared__ AdwinPrefix s_tick[kWarps];  // each warp's speculative detector at its tick
  __shared__ int s_first, s_stop;
  const int tid = threadIdx.x, warp = tid >> 5, lane = tid & 31;
  std::uint32_t* P = f.hist + std::size_t(t) * f.hist_stride;
  {  // 1. running error count at the batch's positions (a block scan of the 0/1 errors)
    const int per = (nb + BLOCK - 1) / BLOCK;
    const int j0 = min(nb, tid * per), j1 = min(nb, j0 + per);
    std::uint32_t c = 0;
    for (int j = j0; j < j1; ++j) c += pred[j] != labels[j];
    std::uint32_t excl = 0;
    BlockScan(s_scan).ExclusiveSum(c, excl);
    std::uint32_t run = P[pos0] + excl;
    for (int j = j0; j < j1; ++j) {
      run += pred[j] != labels[j];
      P[pos0 + j + 1] = run;
    }
  }
  if (tid == 0) {
    s_base = f.adwinp[t];
    s_stop = 0;
  }
  __syncthreads();
  int done = 0;  // inputs of this batch already consumed
  while (done < nb) {
    // Ticks: inputs j >= done after which time % 32 == 0, i.e. time + (j - done) + 1 = 0 (mod 32).
    const std::uint32_t tb = s_base.time;
    const int first_tick = done + static_cast<int>((Adwin::kClock - (tb + 1) % Adwin::kClock) % Adwin::kClock);
    const int ticks = first_tick < nb ? (nb - 1 - first_tick) / Adwin::kClock + 1 : 0;
    const std::uint32_t w_lo = max(s_base.width + 1u, static_cast<std::uint32_t>(Adwin::kMinWindow + 1));
    const double dd_lo = ticks > 0 ? adwin_dd(w_lo, f.adwin_delta) : 0.0;
    const std::uint32_t pos_done = pos0 + static_cast<std::uint32_t>(done);
    if (tid == 0) s_first = INT_MAX;
    __syncthreads();
    for (int i = warp; i < ticks; i += kWarps) {
      if (*static_cast<volatile int*>(&s_first) < i) break;  // an earlier tick already cuts
      const int j = first_tick + Adwin::kClock * i;
      if (lane == 0) {
        s_tick[warp] = s_base;
        gpudm::vfdt::adwinp_insert(s_tick[warp], pos_done, static_cast<std::uint32_t>(j - done + 1));
      }
      __syncwarp();
      const AdwinPrefix& a = s_tick[warp];
      if (gpudm::vfdt::adwinp_check_due(a) && warp_any_cut(a, P, f.adwin_delta, dd_lo) && lane == 0)
        atomicMin(&s_first, i);
      __syncwarp();
    }
    __syncthreads();
    const int first = s_first;
    if (first == INT_MAX) {  // no tick of the rest of the batch cuts
      if (tid == 0) gpudm::vfdt::adwinp_insert(s_base, pos_done, static_cast<std::uint32_t>(nb - done));
      __syncthreads();
      break;
    }
    const int j = first_tick + Adwin::kClock * first;
    if (warp == 0) {  // replay the cutting tick exactly as adwin_update
      std::uint64_t w_before = 0, ones_before = 0;
      if (lane == 0) {
        const std::uint32_t start = s_base.width ? s_base.start : pos_done;
        w_before = s_base.width + static_cast<std::uint32_t>(j - done);
        ones_before = w_before ? P[pos0 + j] - P[start] : 0;
        gpudm::vfdt::adwinp_insert(s_base, pos_done, static_cast<std::uint32_t>(j - done + 1));
      }
      __syncwarp();
      bool cut = false;
      while (s_base.width > 0 && warp_any_cut(s_base, P, f.adwin_delta, adwin_dd(s_base.width, f.adwin_delta))) {
        cut = true;
        __syncwarp();
        if (lane == 0) gpudm::vfdt::adwinp_delete_oldest(s_base);
        __syncwarp();
      }
      if (lane == 0 && cut) {
        const std::uint64_t ones = gpudm::vfdt::adwinp_ones(s_base, P);
        if (gpudm::vfdt::adwin_signals(f.reset_any, w_before, ones_before, s_base.width, ones)) {
          f.drift[t] = 1 + j;  // 1 + the batch position of the input that fired
          s_stop = 1;
        }
      }
    }
    __syncthreads();
    if (s_stop) break;  // deferred order: the tree resets at the batch end and the rest of the batch feeds no
                        // detector; stream order: the caller resets it now and feeds the rest to the fresh one
    done = j + 1;
  }
  if (tid == 0) f.adwinp[t] = s_base;
  __syncthreads();
}

// Per-batch form (engine "batched" with adwin_kernel "prefix"): one block per tree.
template <int BLOCK>
__global__ void __launch_bounds__(BLOCK) k_adwin_prefix(ForestView f, const std::uint8_t* labels, int nb, std::uint32_t pos0) {
  const int t = blockIdx.x;
  adwin_prefix_batch<BLOCK>(f, t, f.tree_pred + std::size_t(t) * f.batch, labels, nb, pos0);
}

// batch_order "stream", step "predict": tree t's votes for instances [s, nb) of a batch as the
// instance-by-instance algorithm gives them, each seeing the class counts its leaf had after the
// batch's earlier instances. A leaf whose majority leads by more than the weight the batch adds
// to its other classes keeps that majority for every one of its instances (majority_margin), so
// its votes are the leaf's vote at the segment's start. The instances of the other leaves are
// listed in stream order (per-window ballots, compacted by warp 0) and walked by warp 0, 32 at a
// time: lanes of one leaf (match_any) get their exclusive prefix of the chunk's weights per class
// from ballots over the weight bits, add it to the leaf's counts, and vote; the leaf's last lane
// of the chunk then stores the counts. Their class counts are added there, so the learn step skips
// them (flag[j] = 1). Needs nb - s <= 32 * Policy::kStreamWindows.
template <int BLOCK>
__device__ void stream_predict(const ForestView& f, int t, const std::uint8_t* codes, const std::uint8_t* labels, int s,
                               int nb, std::uint64_t pos, std::uint8_t* pred, std::uint8_t* flag) {
  constexpr unsigned kAll = 0xffffffffu;
  __shared__ unsigned s_mask[Policy::kStreamWindows];             // lanes to walk, per 32-instance window
  __shared__ std::uint16_t s_list[Policy::kStreamWindows * 32];  // segment positions to walk, in order
  const int tid = threadIdx.x, lane = tid & 31, C = f.classes;
  const int n = nb - s;
  const std::int32_t* leaf = f.leaf + std::size_t(t) * f.batch;
  for (int j = s + tid; j < nb; j += BLOCK) {
    const int slot = route_one(f, t, codes, j);
    const std::size_t si = f.slot_index(t, slot);
    const int top = gpudm::vfdt::majority(f.slot_class + si * C, C);
    pred[j] = static_cast<std::uint8_t>(top);
    const std::uint32_t w = tree_weight(f, t, pos + j);
    if (w != 0 && labels[j] != top) atomicAdd(f.slot_other + si, w);
  }
  __syncthreads();
  const int rounded = (n + 31) & ~31;  // whole windows: a warp's lanes enter and leave together
  for (int i = tid; i < rounded; i += BLOCK) {
    bool walk = false;
    if (i < n) {
      const std::size_t si = f.slot_index(t, leaf[s + i]);
      std::uint32_t margin = 0;
      gpudm::vfdt::majority_margin(f.slot_class + si * C, C, &margin);
      walk = margin <= f.slot_other[si];
      flag[s + i] = walk;
    }
    const unsigned m = __ballot_sync(kAll, walk);
    if (lane == 0) s_mask[i >> 5] = m;
  }
  __syncthreads();
  for (int j = s + tid; j < nb; j += BLOCK) f.slot_other[f.slot_index(t, leaf[j])] = 0;
  if (tid < 32) {
    // compaction: windows' counts scanned 32 at a time, each lane writes its window's positions
    const int windows = rounded >> 5;
    int total = 0;
    for (int w0 = 0; w0 < windows; w0 += 32) {
      const int w = w0 + lane;
      const unsigned m = w < windows ? s_mask[w] : 0u;
      const int c = __popc(m);
      int incl = c;
      for (int o = 1; o < 32; o <<= 1) {
        const int y = __shfl_up_sync(kAll, incl, o);
        if (lane >= o) incl += y;
      }
      int at = total + incl - c;
      for (unsigned mm = m; mm; mm &= mm - 1) s_list[at++] = static_cast<std::uint16_t>(w * 32 + __ffs(mm) - 1);
      total += __shfl_sync(kAll, incl, 31);
    }
    __syncwarp();
    std::uint32_t incl[Policy::kMaxClasses];
    for (int e0 = 0; e0 < total; e0 += 32) {
      const int e = e0 + lane;
      const bool act = e < total;
      const int j = s + (act ? s_list[e] : 0);
      const int slot = act ? leaf[j] : -1 - lane;  // idle lanes: a group of their own
      const int y = act ? labels[j] : -1;
      const std::uint32_t w = act ? tree_weight(f, t, pos + j) : 0u;
      const unsigned peers = __match_any_sync(kAll, slot);
      const unsigned before = peers & ((1u << lane) - 1u);
      const bool last = act && (peers >> lane) == 1u;  // no later lane of this leaf in the chunk
      const int bits = 32 - __clz(__reduce_max_sync(kAll, w));
      std::uint32_t* cls = f.slot_class + f.slot_index(t, act ? slot : 0) * C;
      std::uint32_t best_v = 0;
      int best_c = 0;
      for (int c = 0; c < C; ++c) {
        std::uint32_t pre = 0;  // weight of class c in the earlier lanes of this leaf
        for (int b = 0; b < bits; ++b)
          pre += static_cast<std::uint32_t>(__popc(__ballot_sync(kAll, y == c && ((w >> b) & 1u)) & before)) << b;
        const std::uint32_t v = act ? cls[c] + pre : 0u;
        if (c == 0 || v > best_v) {  // ties -> the lowest class, as majority()
          best_v = v;
          best_c = c;
        }
        incl[c] = v + (y == c ? w : 0u);
      }
      if (act) pred[j] = static_cast<std::uint8_t>(best_c);
      __syncwarp();
      if (last)
        for (int c = 0; c < C; ++c) cls[c] = incl[c];
      __syncwarp();
    }
  }
  __syncthreads();
}

// The whole stream range [pos0, pos0 + n) for one tree per block: codes/labels point at pos0.
template <int BLOCK>
__global__ void __launch_bounds__(BLOCK) k_forest_persistent(ForestView f, const std::uint8_t* codes,
                                                             const std::uint8_t* labels, std::size_t n,
                                                             std::uint32_t pos0, unsigned long long* cycles) {
  const int t = blockIdx.x;
  const std::size_t B = static_cast<std::size_t>(f.batch);
  unsigned long long ph[kPhCount] = {0, 0, 0, 0};
  for (std::size_t b0 = 0; b0 < n; b0 += B) {
    const int nb = static_cast<int>(n - b0 < B ? n - b0 : B);
    const std::uint8_t* cb = codes + b0 * static_cast<std::size_t>(f.attributes);
    const std::uint8_t* lb = labels + b0;
    const std::uint32_t pos = pos0 + static_cast<std::uint32_t>(b0);
    std::uint8_t* pred = f.pred_all + std::size_t(t) * f.pred_stride + (pos - f.pred_base);
    if (!f.stream_order) {
      long long c0 = clock64();
      for (int j = threadIdx.x; j < nb; j += BLOCK) pred[j] = predict_one(f, t, cb, j);
      __syncthreads();
      long long c1 = clock64();
      for (int j = threadIdx.x; j < nb; j += BLOCK) learn_one(f, t, cb, lb, j, pos);
      __syncthreads();
      long long c2 = clock64();
      if (f.adwin) adwin_prefix_batch<BLOCK>(f, t, pred, lb, nb, pos);
      long long c3 = clock64();
      split_tree(f, t);
      __syncthreads();
      long long c4 = clock64();
      ph[kPhTraversal] += c1 - c0;
      ph[kPhCounters] += c2 - c1;
      ph[kPhAdwin] += c3 - c2;
      ph[kPhSplit] += c4 - c3;
      continue;
    }
    // batch_order "stream": segments of the batch, each ending where the tree's ADWIN fires (the
    // tree is reset at once and the fresh one takes the next segment); the last one is learned.
    std::uint8_t* flag = f.tree_pred + std::size_t(t) * f.batch;
    for (int s = 0; s < nb;) {
      long long c0 = clock64();
      stream_predict<BLOCK>(f, t, cb, lb, s, nb, pos, pred, flag);
      long long c1 = clock64();
      int fired = 0;
      if (f.adwin) {
        adwin_prefix_batch<BLOCK>(f, t, pred + s, lb + s, nb - s, pos + static_cast<std::uint32_t>(s));
        fired = f.drift[t];  // 1 + the segment position of the input that fired; 0: none
      }
      long long c2 = clock64();
      ph[kPhTraversal] += c1 - c0;
      ph[kPhAdwin] += c2 - c1;
      if (fired) {  // the instances up to the one that fired belong to the discarded tree
        reset_tree(f, t);
        ph[kPhSplit] += clock64() - c2;
        s += fired;
        continue;
      }
      for (int j = s + static_cast<int>(threadIdx.x); j < nb; j += BLOCK) learn_one(f, t, cb, lb, j, pos, flag[j] == 0);
      __syncthreads();
      ph[kPhCounters] += clock64() - c2;
      break;
    }
    long long c3 = clock64();
    split_tree(f, t);
    __syncthreads();
    ph[kPhSplit] += clock64() - c3;
  }
  if (threadIdx.x == 0)
    for (int k = 0; k < kPhCount; ++k) cycles[std::size_t(t) * kPhCount + k] = ph[k];
}

}  // namespace gpudm::backend::cuda::vfdt_kernels
