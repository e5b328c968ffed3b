#pragma once
// The fast path's merge (with the leaves' solves) and residual kernels (fused_types.cuh has the
// overview). Included by fast_launch.cu only: a kernel is defined in one translation unit.
#include "backends/cuda/gmt/fused_device.cuh"

namespace gpudm::backend::cuda::gmt_cuda {

// Stat leaf gs's least squares (leafstats::solve_stats: the CPU's rank rule, ambiguous pivots
// flagged for the exact QR solver) or, for given coefficients, its SSE (sse_with_coef), from its
// merged statistics `st` of n rows and its values at the shift row `shift`; then its StatOut (rank,
// flag, SSE, and resid: a near-exact fit whose SSE lost digits to cancellation, for the residual
// pass) and its coefficients. work: kv x kv doubles, kept: k ints, cf: k + 1 doubles (the
// coefficients; copied to the output when they are not the output itself). One thread; inlined,
// so each caller's pointers keep their memory space (shared-memory work space: no generic accesses).
__device__ __forceinline__ void fused_solve_leaf(const FusedView& v, const ::gpudm::gmt::leafstats::SolveParams& sp, int gs, long long n,
                                                 const double* st, const double* shift, double* work, int* kept, double* cf) {
  namespace ls = ::gpudm::gmt::leafstats;
  StatOut& so = v.stat_out[gs];
  const int k = v.s_k[gs], kv = k + 1;
  double* coef = v.coef + v.s_attr0[gs] + gs;
  if (kv > FusedPolicy::kMaxKv) {  // the exact solver takes it
    so.flag = ls::kAmbiguous;
    so.rank = -1;
    so.sse = 0.0;
    so.resid = 0;
    return;
  }
  if (v.s_fit[gs]) {
    const ls::SolveOut r = ls::solve_stats(k, n, st, shift, sp, work, kept, cf);
    if (cf != coef)
      for (int j = 0; j <= k; ++j) coef[j] = cf[j];
    so.rank = r.rank;
    so.flag = r.flag;
    so.sse = r.sse;
  } else {
    const double* given = v.coef_in + v.s_attr0[gs] + gs;
    for (int j = 0; j <= k; ++j) coef[j] = given[j];
    so.rank = -1;
    so.flag = ls::kSolved;
    so.sse = ls::sse_with_coef(k, n, st, shift, coef);
  }
  so.resid = 0;
  if (so.flag == ls::kSolved && k > 0 && n > 0) {
    const double cyy = st[ls::stat_index(kv, kv, kv)] - st[ls::stat_index(0, kv, kv)] * st[ls::stat_index(0, kv, kv)] / static_cast<double>(n);
    so.resid = so.sse <= FusedPolicy::kResidualRatio * cyy ? 1 : 0;
  }
}

// Entry (i, j) of a stat vector (u = [1, v]) whose sums `src` of n rows are shifted by the values
// `pc` at their shift row, re-shifted to the values `p0` at another: sums of (w + dd), dd = pc - p0
// (leaf_stats.hpp's algebra).
__device__ __forceinline__ double fused_reshift(double x, int i, int j, const double* src, int kv, long long n, const double* pc,
                                                const double* p0) {
  namespace ls = ::gpudm::gmt::leafstats;
  const double dj = pc[j - 1] - p0[j - 1];
  if (i == 0) return x + static_cast<double>(n) * dj;
  const double di = pc[i - 1] - p0[i - 1];
  return x + (di * src[ls::stat_index(0, j, kv)] + dj * src[ls::stat_index(0, i, kv)] + static_cast<double>(n) * di * dj);
}

// A block per stat leaf at a time (kMergeBlock threads; at most the blocks resident at once, each
// looping over the leaves), the merge's two levels (FusedGroups). Every sum is one thread's chain in
// a fixed order (no reduction tree), so its bits do not depend on which thread, block or rank forms it:
//  level 1 (levels & 1), per group g of this device's groups [g0, g1): its rows and first non-empty
//    partial (lanes of a warp a group, integers), then a thread per (run, 8 entries) adds the run's
//    partials in order and the group's runs in order, each re-shifted to the group's first partial's
//    shift row; the group's rows, shift row, values there and sums into its record (grec);
//  level 2 (levels & 2), from all G groups' records: a thread per entry adds the groups in group
//    order, each re-shifted to the first non-empty group's shift row (the leaf's first row); then
//    the block's thread 0 solves the leaf (fused_solve_leaf), a leaf of at most kSolveSmemKv values
//    from the merged sums and shift values kept in shared memory, a wider one in the global work
//    space (a solve kernel after the merge, a thread per leaf, was slower: docs/perf-notes-gmt.md).
// One process runs both in one launch; a rank of a rows split runs level 1, the ranks exchange the
// records, and every rank runs level 2 on all of them: the same records give the same bits.
// Two blocks an SM (128 registers): the merge is latency-bound, and uncapped ptxas gave it 166
// registers (one block an SM), which cost Elnino / Pol +0.037 / +0.026 ms an iteration
// (docs/perf-notes-mpi.md).
__global__ void __launch_bounds__(FusedPolicy::kMergeBlock, 2) fused_merge_kernel(const FusedView* __restrict__ vp, DatasetView d,
                                                                              ::gpudm::gmt::leafstats::SolveParams sp, int levels) {
  namespace ls = ::gpudm::gmt::leafstats;
  const bool solve_here = (levels & 2) != 0;  // (level 2 solves every leaf it merged)
  (void)d;
  constexpr int W = FusedPolicy::kWarps;
  constexpr int SK = FusedPolicy::kSolveSmemKv;
  __shared__ double s_st[(SK + 1) * (SK + 2) / 2 - 1];  // the merged sums of a leaf of <= SK values
  __shared__ double s_work[FusedPolicy::kSolveStride];  // its Gram, shift values and coefficients
  __shared__ int s_kept[SK];
  __shared__ int s_first[FusedGroups::kGroups];         // level 1: a group's first non-empty partial
  __shared__ long long s_k[FusedGroups::kGroups];       // and its shift row
  __shared__ int s_run0[FusedGroups::kGroups + 1];      // level 1: the device's groups' first runs (FusedGroups::runs)
  __shared__ int s_c0[FusedGroups::kGroups + 1];        // and first chunks (of this device's, FusedGroups::chunk_begin - chunk0)
  __shared__ unsigned long long s_ln[FusedGroups::kGroups];  // level 1: a group's rows of the leaf
  __shared__ int s_gf;                                  // level 2: the first non-empty group
  __shared__ long long s_n;                             // and the leaf's rows
  constexpr int SNS = (SK + 1) * (SK + 2) / 2 - 1;      // level 2 of a leaf of <= SK values: its records staged here
  __shared__ long long s_gn[FusedGroups::kGroups], s_gk[FusedGroups::kGroups];
  __shared__ double s_gsh[FusedGroups::kGroups * SK], s_gsum[FusedGroups::kGroups * SNS];
  const FusedView& v = *vp;
  const int tid = static_cast<int>(threadIdx.x), TB = static_cast<int>(blockDim.x);
  // The grid is fixed when the graph is captured (at most the blocks resident at once, launch_all):
  // a block past this call's stat leaves ends here, before any barrier (block-uniform).
  if (static_cast<int>(blockIdx.x) >= v.S) return;
  const long long rec = FusedGroups::record(v.S, v.coef_total, v.stat_total);
  const int ngl = v.g1 - v.g0;  // this device's groups (<= kGroups: a lane each)
  if (tid < 32) {  // warp 0: the groups' first chunks, and their first runs by an inclusive scan (integers)
    const int q = tid;
    int c0 = 0, c1 = 0;
    if (q < ngl) {
      c0 = FusedGroups::chunk_begin(v.g0 + q, v.G, v.chunks_all) - v.chunk0;
      c1 = FusedGroups::chunk_begin(v.g0 + q + 1, v.G, v.chunks_all) - v.chunk0;
    }
    int r = q < ngl ? FusedGroups::runs_of(c1 - c0) : 0;
#pragma unroll
    for (int o = 1; o < 32; o <<= 1) {
      const int up = __shfl_up_sync(0xFFFFFFFFu, r, o);
      if (q >= o) r += up;
    }
    if (q < ngl) {
      s_c0[q] = c0;
      s_run0[q + 1] = r;
      if (q == ngl - 1) s_c0[ngl] = c1;
    }
    if (q == 0) s_run0[0] = 0;
  }
  __syncthreads();
  for (int gs = blockIdx.x; gs < v.S; gs += gridDim.x) {
    const int k = v.s_k[gs], kv = k + 1;
    const int nst = ls::n_stats(kv);
    const std::size_t shift_at = static_cast<std::size_t>(v.s_attr0[gs] + gs);
    const bool sums = kv <= FusedPolicy::kMaxKv;  // (wider: the exact solver takes the leaf; rows and shift row only)
    if (levels & 1) {
      // tpg lanes of one warp per group (a power of two <= 32): a group's rows and first non-empty
      // partial, each lane over every tpg-th partial, then shuffles within the lanes (integers: the
      // same in any order; every lane of the warps in play shuffles)
      {
        int tpg = 32;
        while (tpg > 1 && tpg * ngl > TB) tpg >>= 1;
        const int q = tid / tpg, sub = tid - q * tpg;
        if (tid < (ngl * tpg + 31) / 32 * 32) {
          long long n = 0;
          int first = 0x7FFFFFFF;
          if (q < ngl) {
            const int c0 = s_c0[q] * W, np = s_c0[q + 1] * W - c0;
            for (int i0 = sub; i0 < np; i0 += 4 * tpg) {  // 4 loads in flight a lane
              int nc[4];
#pragma unroll
              for (int u = 0; u < 4; ++u) {
                const int i = i0 + u * tpg;
                nc[u] = i < np ? v.part_n[static_cast<std::size_t>(c0 + i) * v.S + gs] : 0;
              }
#pragma unroll
              for (int u = 0; u < 4; ++u) {
                n += nc[u];
                if (nc[u] > 0 && c0 + i0 + u * tpg < first) first = c0 + i0 + u * tpg;
              }
            }
          }
          for (int o = tpg / 2; o > 0; o >>= 1) {
            n += __shfl_xor_sync(0xFFFFFFFFu, n, o);
            const int f = __shfl_xor_sync(0xFFFFFFFFu, first, o);
            first = f < first ? f : first;
          }
          if (q < ngl && sub == 0) {
            s_ln[q] = static_cast<unsigned long long>(n);
            s_first[q] = first;
          }
        }
      }
      __syncthreads();
      for (int q = tid; q < ngl; q += TB) {  // a thread per group: its record's rows, shift row and values there
        const int g = v.g0 + q;
        double* r = v.grec + static_cast<long long>(g) * rec;
        const int p1 = s_c0[q + 1] * W;
        const int first = s_first[q] < p1 ? s_first[q] : p1;
        const long long n = static_cast<long long>(s_ln[q]);
        const long long kg = n > 0 ? v.part_k[static_cast<std::size_t>(first) * v.S + gs] : -1;
        FusedGroups::n(r, v.S)[gs] = n;
        FusedGroups::k(r, v.S)[gs] = kg;
        s_first[q] = first;
        s_k[q] = kg;
      }
      __syncthreads();
      if (sums) {
        for (int t = tid; t < ngl * kv; t += TB) {  // a thread per (group, value): the values at its shift row into its record
          const int q = t / kv, j = t - q * kv;
          if (s_first[q] >= s_c0[q + 1] * W) continue;  // (no rows)
          FusedGroups::shift(v.grec + static_cast<long long>(v.g0 + q) * rec, v.S)[shift_at + j] =
              v.part_shift[static_cast<std::size_t>(s_first[q]) * static_cast<std::size_t>(v.coef_total) + shift_at + j];
        }
        // 1a: a thread per (run of kRunParts partials, block of E entries): the run's partials in
        // order, re-shifted to the group's first partial's shift row (E independent chains: E loads
        // in flight a step)
        constexpr int E = 8;
        const int RT = s_run0[ngl], EB = (nst + E - 1) / E;
        for (int t = tid; t < RT * EB; t += TB) {
          const int rr = t % RT, e0 = t / RT * E;
          int q = 0;
          while (s_run0[q + 1] <= rr) ++q;
          const int g = v.g0 + q;
          const int first = s_first[q];
          const int gp1 = s_c0[q + 1] * W;
          if (first >= gp1) continue;  // (the group has no rows of the leaf)
          const int p0 = s_c0[q] * W + (rr - s_run0[q]) * FusedGroups::kRunParts;
          const int p1 = p0 + FusedGroups::kRunParts < gp1 ? p0 + FusedGroups::kRunParts : gp1;
          const long long kg = s_k[q];
          const double* psf = v.part_shift + static_cast<std::size_t>(first) * static_cast<std::size_t>(v.coef_total) + shift_at;
          int ei[E], ej[E];
          double acc[E];
#pragma unroll
          for (int u = 0; u < E; ++u) {
            ei[u] = -1;
            ej[u] = 0;
            acc[u] = 0.0;
            if (e0 + u < nst) fused_entry(e0 + u, kv, &ei[u], &ej[u]);
          }
          for (int c = p0; c < p1; ++c) {
            const std::size_t pc = static_cast<std::size_t>(c) * v.S + gs;
            const int nc = v.part_n[pc];
            if (nc == 0) continue;
            const double* src = v.part + static_cast<std::size_t>(c) * static_cast<std::size_t>(v.stat_total) + v.s_stat0[gs];
            const bool shifted = v.part_k[pc] != kg;
            const double* psc = v.part_shift + static_cast<std::size_t>(c) * static_cast<std::size_t>(v.coef_total) + shift_at;
#pragma unroll
            for (int u = 0; u < E; ++u) {
              if (ei[u] < 0) continue;
              double x = src[e0 + u];
              if (shifted) x = fused_reshift(x, ei[u], ej[u], src, kv, nc, psc, psf);
              acc[u] += x;
            }
          }
          // a group of one run writes its record here: 1b's 0.0 + acc is acc's bits (acc began at
          // 0.0, so it is never -0.0); a longer group's runs go through the run sums
          double* out = s_run0[q + 1] - s_run0[q] == 1
                            ? FusedGroups::sums(v.grec + static_cast<long long>(g) * rec, v.S, v.coef_total) + v.s_stat0[gs]
                            : v.grun + static_cast<std::size_t>(rr) * static_cast<std::size_t>(v.stat_total) + v.s_stat0[gs];
#pragma unroll
          for (int u = 0; u < E; ++u)
            if (e0 + u < nst) out[e0 + u] = acc[u];
        }
        if (RT > ngl) {  // (block-uniform: some group has more than one run)
          __syncthreads();
          // 1b: a thread per (group of more than one run, entry): the group's runs in order
          for (int t = tid; t < ngl * nst; t += TB) {
            const int q = t % ngl, e = t / ngl;
            const int g = v.g0 + q;
            if (s_run0[q + 1] - s_run0[q] == 1) continue;  // (written in 1a)
            if (s_first[q] >= s_c0[q + 1] * W) continue;  // (no rows)
            double acc = 0.0;
            for (int rr = s_run0[q]; rr < s_run0[q + 1]; ++rr)
              acc += v.grun[static_cast<std::size_t>(rr) * static_cast<std::size_t>(v.stat_total) + v.s_stat0[gs] + e];
            FusedGroups::sums(v.grec + static_cast<long long>(g) * rec, v.S, v.coef_total)[v.s_stat0[gs] + e] = acc;
          }
        }
      }
      if (!(levels & 2)) {
        __syncthreads();  // (s_first / s_k are written again for the next leaf)
        continue;
      }
      __syncthreads();  // the block's records of this leaf are seen by level 2
    }
    // level 2: a leaf of <= SK values reads the G records from shared memory (staged by every
    // thread at once: one round trip), a wider one from the records; then its rows and first
    // non-empty group
    const bool local = kv <= SK;
    for (int t = tid; t < v.G * 2; t += TB) {
      const double* r = v.grec + static_cast<long long>(t >> 1) * rec;
      if (t & 1) s_gk[t >> 1] = FusedGroups::k(const_cast<double*>(r), v.S)[gs];
      else s_gn[t >> 1] = FusedGroups::n(const_cast<double*>(r), v.S)[gs];
    }
    if (local)
      for (int t = tid; t < v.G * (kv + nst); t += TB) {
        const int g = t / (kv + nst), e = t - g * (kv + nst);
        double* r = v.grec + static_cast<long long>(g) * rec;
        if (e < kv) s_gsh[g * SK + e] = FusedGroups::shift(r, v.S)[shift_at + e];
        else s_gsum[g * SNS + e - kv] = FusedGroups::sums(r, v.S, v.coef_total)[v.s_stat0[gs] + e - kv];
      }
    __syncthreads();
    if (tid < 32) {  // warp 0, a lane per group: the first non-empty group and the leaf's rows (integers)
      static_assert(FusedGroups::kGroups <= 32, "a lane per group");
      long long n = tid < v.G ? s_gn[tid] : 0;
      const unsigned nz = __ballot_sync(0xFFFFFFFFu, n > 0);
#pragma unroll
      for (int o = 16; o > 0; o >>= 1) n += __shfl_xor_sync(0xFFFFFFFFu, n, o);
      if (tid == 0) {
        s_gf = nz ? __ffs(static_cast<int>(nz)) - 1 : v.G;
        s_n = n;
      }
    }
    __syncthreads();
    const int gf = s_gf;
    const long long n = s_n;
    // group g's sums and values at its shift row (shared or the record)
    auto gsum = [&](int g) -> const double* {
      return local ? s_gsum + g * SNS : FusedGroups::sums(v.grec + static_cast<long long>(g) * rec, v.S, v.coef_total) + v.s_stat0[gs];
    };
    auto gshift = [&](int g) -> const double* {
      return local ? s_gsh + g * SK : FusedGroups::shift(v.grec + static_cast<long long>(g) * rec, v.S) + shift_at;
    };
    StatOut& so = v.stat_out[gs];
    if (tid == 0) {
      so.n = n;
      so.krow = n > 0 ? static_cast<int>(s_gk[gf]) : -1;
    }
    if (solve_here && sums) {  // the values at the shift row (the leaf's first row), one thread each
      double* shift = local ? s_work + kv * kv : v.work + v.s_work0[gs] + static_cast<long long>(kv) * kv;
      for (int j = tid; j < kv; j += TB) shift[j] = n > 0 ? gshift(gf)[j] : 0.0;
    }
    if (n > 0 && sums) {
      const long long k0 = s_gk[gf];
      const double* ps0 = gshift(gf);
      double* dst = v.stats + v.s_stat0[gs];
      for (int e = tid; e < nst; e += TB) {  // a thread per entry: the groups in order
        int i = 0, j = 0;
        fused_entry(e, kv, &i, &j);
        double acc = 0.0;
        for (int g = gf; g < v.G; ++g) {
          const long long ng = s_gn[g];
          if (ng == 0) continue;
          const double* src = gsum(g);
          double x = src[e];
          if (s_gk[g] != k0) x = fused_reshift(x, i, j, src, kv, ng, gshift(g), ps0);
          acc += x;
        }
        dst[e] = acc;
        if (solve_here && local) s_st[e] = acc;
      }
    }
    __syncthreads();  // the block sees the sums and the shift values (and s_gf / s_n are written again for the next leaf)
    if (solve_here) {
      if (tid == 0) {
        if (local) fused_solve_leaf(v, sp, gs, n, s_st, s_work + kv * kv, s_work, s_kept, s_work + kv * kv + kv);
        else fused_solve_leaf(v, sp, gs, n, v.stats + v.s_stat0[gs], v.work + v.s_work0[gs] + static_cast<long long>(kv) * kv,
                              v.work + v.s_work0[gs], v.work_i + v.s_attr0[gs], v.coef + v.s_attr0[gs] + gs);
      }
      __syncthreads();  // (the shared work space is written again for the next leaf)
    }
  }
}

// The residual pass: grid (tree, chunk) as the statistics pass; blocks of trees without a marked
// leaf return at once. Warp w takes the same rows as in the statistics pass, 32 at a time in
// order (routed kRouteRows x 32 at once); each marked leaf's squared residuals of the step are added by a fixed xor tree and then
// into the warp's slot w of the leaf's chunk partials (part, free again after the merge: a marked
// leaf has k >= 1, so n_stats(kv) >= 5 > kWarps slots). One writer per slot, rows in order:
// deterministic.
__global__ void __launch_bounds__(FusedPolicy::kBlock) fused_residual_pass_kernel(const FusedView* __restrict__ vp, DatasetView d) {
  constexpr int W = FusedPolicy::kWarps;
  static_assert(W < 5, "the residual slots of a chunk's partials");
  const FusedView& v = *vp;
  const int t = blockIdx.x;
  if (t >= v.B || static_cast<int>(blockIdx.y) >= v.chunks) return;
  const int stat0 = v.t_stat0[t], ns = v.t_stat0[t + 1] - stat0;
  const int tid = threadIdx.x, w = tid / 32, lane = tid % 32;
  double* part = v.part + static_cast<std::size_t>(blockIdx.y) * W * static_cast<std::size_t>(v.stat_total);  // (the chunk's first partial)
  int any = 0;
  for (int si = tid; si < ns; si += blockDim.x)
    if (v.stat_out[stat0 + si].resid) {
      any = 1;
      for (int q = 0; q < W; ++q) part[v.s_stat0[stat0 + si] + q] = 0.0;
    }
  if (!__syncthreads_or(any)) return;
  const long long r0 = static_cast<long long>(blockIdx.y) * v.chunk_rows;
  const long long r1 = r0 + v.chunk_rows < v.rows ? r0 + v.chunk_rows : v.rows;
  const PackedNode* nodes = v.nodes + v.t_node0[t];
  const int leaf0 = v.t_leaf0[t];
  const long long ld = v.ld;
  const long long span = (r1 - r0 + W - 1) / W;
  const long long wr0 = r0 + w * span < r1 ? r0 + w * span : r1;
  const long long wr1 = wr0 + span < r1 ? wr0 + span : r1;
  // R rows a lane routed at once (the stats pass's interleaved walks: R load chains in flight, not
  // one), then the R steps of 32 rows in order, as one step at a time: the same sums.
  constexpr int R = FusedPolicy::kRouteRows;
  for (long long base0 = wr0; base0 < wr1; base0 += 32 * R) {
    long long rws[R];
    bool ok[R];
    int lls[R];
    fused_route_lanes<R>(nodes, d.features, static_cast<int>(ld), base0, wr1, lane, rws, ok, lls);
#pragma unroll
    for (int q = 0; q < R; ++q) {
      const long long row = rws[q];
      int gs = -1;
      double e2 = 0.0;
      if (ok[q]) {
        const int ll = lls[q];
        gs = v.l_stat[leaf0 + ll];
        if (gs >= 0 && v.stat_out[gs].resid) {
          const int k = v.s_k[gs];
          const int* a = v.attrs + v.s_attr0[gs];
          const double* c = v.coef + v.s_attr0[gs] + gs;
          double pred = c[0];
          for (int j = 0; j < k; ++j) pred += c[1 + j] * static_cast<double>(__ldg(d.features + static_cast<long long>(a[j]) * ld + row));
          const double e = static_cast<double>(__ldg(d.targets + row)) - pred;
          e2 = e * e;
        } else {
          gs = -1;
        }
      }
      unsigned todo = __ballot_sync(0xFFFFFFFFu, gs >= 0);
      while (todo) {  // one marked leaf of this step at a time, lowest lane's first
        const int g = __shfl_sync(0xFFFFFFFFu, gs, __ffs(todo) - 1);
        double x = gs == g ? e2 : 0.0;
#pragma unroll
        for (int o = 16; o > 0; o >>= 1) x += __shfl_xor_sync(0xFFFFFFFFu, x, o);
        if (lane == 0) part[v.s_stat0[g] + w] += x;
        todo &= ~__ballot_sync(0xFFFFFFFFu, gs == g);
      }
    }
  }
}

// Warp per marked stat leaf: its SSE in two levels (FusedGroups), each sum one lane's chain in a
// fixed order. Level 1 (levels & 1): lane g (a group of this device: G <= 32) adds its chunks'
// slots in chunk order (a chunk's in warp order) into gres (group, leaf). Level 2 (levels & 2):
// lane 0 adds the G groups' values in group order (a rank of a rows split does this on the host,
// FastPath::launch_split: the same additions in the same order).
__global__ void fused_residual_merge_kernel(const FusedView* __restrict__ vp, int levels) {
  static_assert(FusedGroups::kGroups <= 32, "a lane per group");
  const FusedView& v = *vp;
  const int lane = threadIdx.x % 32;
  const int warps = gridDim.x * blockDim.x / 32;
  for (int gs = (blockIdx.x * blockDim.x + threadIdx.x) / 32; gs < v.S; gs += warps) {
    if (!v.stat_out[gs].resid) continue;
    if ((levels & 1) && lane >= v.g0 && lane < v.g1) {
      const int g = lane;
      const int c0 = FusedGroups::chunk_begin(g, v.G, v.chunks_all) - v.chunk0;
      const int c1 = FusedGroups::chunk_begin(g + 1, v.G, v.chunks_all) - v.chunk0;
      double acc = 0.0;
      for (int c = c0; c < c1; ++c) {  // (a chunk without the leaf's rows has zero slots: the pass zeroed them)
        const double* slot = v.part + static_cast<std::size_t>(c) * FusedPolicy::kWarps * static_cast<std::size_t>(v.stat_total) + v.s_stat0[gs];
#pragma unroll
        for (int q = 0; q < FusedPolicy::kWarps; ++q) acc += slot[q];
      }
      v.gres[static_cast<std::size_t>(g) * v.S + gs] = acc;
    }
    __syncwarp();
    if ((levels & 2) && lane == 0) {
      double sse = 0.0;
      for (int g = 0; g < v.G; ++g) sse += v.gres[static_cast<std::size_t>(g) * v.S + gs];
      v.stat_out[gs].sse = sse;
    }
  }
}

}  // namespace gpudm::backend::cuda::gmt_cuda
