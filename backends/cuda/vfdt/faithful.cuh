#pragma once
// The paper's GVFD layout (Marron et al. 2014, Sec. 4-5), selectable with path = "faithful":
//  * binary attributes; each tree a breadth-first array of 2^(max_depth+1)-1 32-bit nodes
//    (bit 31 = leaf flag, low 31 bits = leaf id or attribute id; children of i at 2i+1, 2i+2);
//  * "leaf class" (majority class per leaf id) and "leaf back" (leaf id -> array offset);
//    a split reuses the leaf id for the left child and allocates one new id;
//  * leaf counters in the 2D layout of Fig. 4: row 0 n_ij, row 1 the attribute mask, rows 2..
//    n_ijk per class (2 + C rows of 2d columns; the paper's 2 classes give its 4 rows). The mask
//    marks attributes a leaf may not split on: used on the path, or outside its random subset;
//  * information gain by two reductions (per (i,j), then per i) in shared memory, exact in
//    fixed point, then a per-block bitonic sort of (gain, attribute) pairs: positions 0 and 1 are
//    the two best attributes for the Hoeffding test;
//  * the forest on the grid's z axis; Poisson weights stored per (tree, instance) after traversal.
// The decisions use the same arithmetic as every other backend, so the trees are identical. The
// vote and ADWIN steps are the default path's kernels (kernels.cuh) over VoteView / AdwinView.
// Launched by launch.cu only; the state is owned by evaluator.cu.
#include <cstdint>

#include "backends/cuda/vfdt/kernels.cuh"

namespace gpudm::backend::cuda::vfdt_faithful {

using gpudm::vfdt::Adwin;
using Policy = vfdt_kernels::FaithfulPolicy;
using View = vfdt_kernels::FaithfulView;

__device__ inline int depth_of(int offset) { return 31 - __clz(offset + 1); }

// A fresh leaf `l` at array offset `off` with key `key`; `path_mask` row is set from the used
// attributes along the path and from the random subset drawn from the key.
__device__ inline void init_leaf(const View& v, int t, int l, int off, std::uint64_t key, int lane, int lanes) {
  const std::size_t li = v.leaf_index(t, l);
  std::uint32_t* cnt = v.leaf_counters(t, l);
  const int rl = v.row_len();
  for (int i = lane; i < (2 + v.classes) * rl; i += lanes) cnt[i] = 0;
  for (int c = lane; c < v.classes; c += lanes) v.leaf_counts[li * v.classes + c] = 0;
  __syncthreads();
  if (lane == 0) {
    v.leaf_seen[li] = v.leaf_last[li] = 0;
    v.leaf_key[li] = key;
    v.leaf_back[li] = off;
    v.tree[std::size_t(t) * v.array_nodes + off] = Policy::kLeaf | static_cast<std::uint32_t>(l);
    // mask row: 1 = not eligible. Start with "outside the subset", then add the path.
    std::int16_t sub[256];
    gpudm::vfdt::draw_subset(key, v.attributes, v.features, sub);
    for (int a = 0; a < v.attributes; ++a) cnt[rl + 2 * a] = cnt[rl + 2 * a + 1] = 1;
    for (int p = 0; p < v.features; ++p) cnt[rl + 2 * sub[p]] = cnt[rl + 2 * sub[p] + 1] = 0;
    for (int o = off; o > 0; o = (o - 1) / 2) {
      const std::uint32_t parent = v.tree[std::size_t(t) * v.array_nodes + (o - 1) / 2];
      const int a = static_cast<int>(parent & ~Policy::kLeaf);
      cnt[rl + 2 * a] = cnt[rl + 2 * a + 1] = 1;
    }
  }
  __syncthreads();
}

// The tree becomes a single fresh leaf of generation `gen` and its ADWIN starts empty (as the
// CPU backends' reset_tree and MOA's ARF reset the detector with the tree).
__device__ inline void init_tree(const View& v, int t, std::uint32_t gen) {
  if (threadIdx.x == 0) {
    v.generation[t] = gen;
    v.n_leaves[t] = 1;
    v.drift[t] = 0;
    gpudm::vfdt::adwin_init(v.adwins[t]);
  }
  init_leaf(v, t, 0, 0, gpudm::vfdt::root_key(v.seed, static_cast<std::uint32_t>(v.first_tree + t), gen), threadIdx.x, blockDim.x);
  if (threadIdx.x == 0) v.leaf_class[v.leaf_index(t, 0)] = 0;
}

__global__ void k_init(View v) {
  const int t = blockIdx.x;
  init_tree(v, t, 0);
  if (threadIdx.x == 0) v.splits[t] = v.resets[t] = 0;
}

// Traversal (Fig. 3): thread per instance, tree on z; then the tree's vote and the Poisson weight.
__global__ void k_traverse(View v, const std::uint8_t* codes, int nb, std::uint64_t first_instance) {
  const int j = blockIdx.x * blockDim.x + threadIdx.x;
  const int t = blockIdx.z;
  if (j >= nb) return;
  const std::uint32_t* tree = v.tree + std::size_t(t) * v.array_nodes;
  const std::uint8_t* x = codes + std::size_t(j) * v.attributes;
  int off = 0;
  std::uint32_t node = tree[0];
  while (!(node & Policy::kLeaf)) {
    off = 2 * off + 1 + x[node];
    node = tree[off];
  }
  const int l = static_cast<int>(node & ~Policy::kLeaf);
  const std::size_t o = std::size_t(t) * v.batch + j;
  v.leaf_of[o] = l;
  v.tree_pred[o] = v.leaf_class[v.leaf_index(t, l)];
  v.weight[o] = static_cast<std::uint8_t>(
      v.bagging ? gpudm::vfdt::poisson1(v.seed, static_cast<std::uint32_t>(v.first_tree + t), first_instance + j) : 1);
}

// Counter increase: thread per (instance, tree), every attribute's n_ij and n_ijk.
__global__ void k_count(View v, const std::uint8_t* codes, const std::uint8_t* labels, int nb) {
  const int j = blockIdx.x * blockDim.x + threadIdx.x;
  const int t = blockIdx.z;
  if (j >= nb) return;
  const std::size_t o = std::size_t(t) * v.batch + j;
  const std::uint32_t w = v.weight[o];
  if (w == 0) return;
  const int l = v.leaf_of[o];
  const int y = labels[j];
  const std::uint8_t* x = codes + std::size_t(j) * v.attributes;
  std::uint32_t* cnt = v.leaf_counters(t, l);
  const int rl = v.row_len();
  for (int a = 0; a < v.attributes; ++a) {
    const int col = 2 * a + x[a];
    atomicAdd(cnt + col, w);                     // row 0: n_ij
    atomicAdd(cnt + (2 + y) * rl + col, w);      // row 2 + k: n_ijk
  }
  atomicAdd(v.leaf_counts + v.leaf_index(t, l) * v.classes + y, w);
  atomicAdd(v.leaf_seen + v.leaf_index(t, l), w);
}

// Gain + split decision: one block per leaf counter (x), tree on z. Every leaf counter is
// visited (as the paper does); only leaves due for a check do the work.
__global__ void k_gain(View v) {
  const int l = blockIdx.x;
  const int t = blockIdx.z;
  const std::size_t li = v.leaf_index(t, l);
  __shared__ long long s_ij[2 * Policy::kSortCapacity];  // reduction 1: F(n_ij) - sum_k F(n_ijk)
  __shared__ long long s_merit[Policy::kSortCapacity];   // reduction 2 -> merits, then sorted
  __shared__ int s_attr[Policy::kSortCapacity];
  __shared__ int s_branches[Policy::kSortCapacity];
  __shared__ int s_due;
  __shared__ long long s_class_term;
  __shared__ unsigned long long s_total;
  if (threadIdx.x == 0) {
    s_due = 0;
    v.decision[li] = 0;
    if (l < v.n_leaves[t]) {
      const std::uint32_t seen = v.leaf_seen[li];
      if (seen - v.leaf_last[li] >= static_cast<std::uint32_t>(v.grace)) {
        v.leaf_last[li] = seen;
        if (depth_of(v.leaf_back[li]) < v.depth) {
          // class totals since creation: attribute 0's n_0jk summed over j
          const std::uint32_t* cnt = v.leaf_counters(t, l);
          const int rl = v.row_len();
          unsigned long long total = 0;
          long long ct = 0;
          int nonzero = 0;
          for (int c = 0; c < v.classes; ++c) {
            const std::uint64_t ck = std::uint64_t(cnt[(2 + c) * rl + 0]) + cnt[(2 + c) * rl + 1];
            total += ck;
            nonzero += ck > 0;
            ct -= gpudm::vfdt::xlog2x_fixed(ck);
          }
          if (nonzero >= 2) {
            s_due = 1;
            s_total = total;
            s_class_term = ct + gpudm::vfdt::xlog2x_fixed(total);
          }
        }
      }
    }
  }
  __syncthreads();
  if (!s_due) return;
  const int d = v.attributes, rl = v.row_len(), C = v.classes;
  int sort_n = 1;
  while (sort_n < d) sort_n <<= 1;
  const std::uint32_t* cnt = v.leaf_counters(t, l);
  for (int i = threadIdx.x; i < 2 * d; i += blockDim.x) s_ij[i] = gpudm::vfdt::xlog2x_fixed(cnt[i]);
  for (int i = threadIdx.x; i < sort_n; i += blockDim.x) {
    s_merit[i] = 0;
    s_branches[i] = 0;
    s_attr[i] = i;
  }
  __syncthreads();
  // reduction 1 (red in Fig. 5): every (i, j, k) thread subtracts its I_ijk term from I_ij
  for (int e = threadIdx.x; e < 2 * d * C; e += blockDim.x) {
    const int col = e % (2 * d), c = e / (2 * d);
    atomicAdd(reinterpret_cast<unsigned long long*>(&s_ij[col]),
              static_cast<unsigned long long>(-gpudm::vfdt::xlog2x_fixed(cnt[(2 + c) * rl + col])));
  }
  __syncthreads();
  // reduction 2 (yellow): I_i = sum_j I_ij, plus the branch count (> 1% of the weight)
  for (int col = threadIdx.x; col < 2 * d; col += blockDim.x) {
    const int a = col / 2;
    atomicAdd(reinterpret_cast<unsigned long long*>(&s_merit[a]), static_cast<unsigned long long>(s_ij[col]));
    if (std::uint64_t(cnt[col]) * 100 > s_total) atomicAdd(&s_branches[a], 1);
  }
  __syncthreads();
  for (int a = threadIdx.x; a < sort_n; a += blockDim.x) {
    long long m = -1;
    if (a < d && cnt[rl + 2 * a] == 0 && s_branches[a] >= 2) {
      m = s_class_term - s_merit[a];
      if (m < 0) m = 0;
    }
    s_merit[a] = m;
  }
  __syncthreads();
  // per-block bitonic sort, descending merit, ties to the lower attribute id; the attribute
  // vector is swapped together with the values
  for (int size = 2; size <= sort_n; size <<= 1) {
    for (int stride = size >> 1; stride > 0; stride >>= 1) {
      for (int i = threadIdx.x; i < sort_n; i += blockDim.x) {
        const int partner = i ^ stride;
        if (partner > i) {
          const bool descending = (i & size) == 0;
          const bool i_first = s_merit[i] > s_merit[partner] ||
                               (s_merit[i] == s_merit[partner] && s_attr[i] < s_attr[partner]);
          if (i_first != descending) {
            const long long tm = s_merit[i];
            s_merit[i] = s_merit[partner];
            s_merit[partner] = tm;
            const int ta = s_attr[i];
            s_attr[i] = s_attr[partner];
            s_attr[partner] = ta;
          }
        }
      }
      __syncthreads();
    }
  }
  if (threadIdx.x == 0) {
    const long long best = s_merit[0], second = sort_n > 1 ? s_merit[1] : -1;
    if (best >= 0 && gpudm::vfdt::should_split(best, second, s_total, s_total, v.hb_numer, v.tau))
      v.decision[li] = Policy::kLeaf | static_cast<std::uint32_t>(s_attr[0]);
  }
}

// Apply the decisions (or the drift reset), one block per tree; leaf ids in order.
__global__ void k_apply(View v) {
  const int t = blockIdx.x;
  if (v.drift[t]) {
    __syncthreads();
    const std::uint32_t gen = v.generation[t] + 1;
    __syncthreads();
    init_tree(v, t, gen);
    if (threadIdx.x == 0) v.resets[t] += 1;
    return;
  }
  __shared__ int s_n;
  if (threadIdx.x == 0) s_n = v.n_leaves[t];
  __syncthreads();
  const int n = s_n;
  const int rl = 2 * v.attributes;
  // the splitting leaf ids, in order (compacted; a full walk if there are too many)
  __shared__ int s_list[vfdt_kernels::Policy::kSplitList];
  const std::uint32_t* decs = v.decision + v.leaf_index(t, 0);
  const int deciding = vfdt_kernels::block_compact(
      n, [&](int i) { return (decs[i] & Policy::kLeaf) != 0; }, s_list, vfdt_kernels::Policy::kSplitList);
  const bool listed = deciding <= vfdt_kernels::Policy::kSplitList;
  const int steps = deciding == 0 ? 0 : (listed ? deciding : n);
  for (int s_i = 0; s_i < steps; ++s_i) {
    const int l = listed ? s_list[s_i] : s_i;
    const std::uint32_t dec = v.decision[v.leaf_index(t, l)];
    if (!(dec & Policy::kLeaf)) continue;
    const int a = static_cast<int>(dec & ~Policy::kLeaf);
    const std::size_t li = v.leaf_index(t, l);
    const int off = v.leaf_back[li];
    __shared__ std::uint32_t s_branch[2 * Policy::kSortCapacity];
    __shared__ int s_new;
    __shared__ std::uint64_t s_key;
    const std::uint32_t* cnt = v.leaf_counters(t, l);
    for (int e = threadIdx.x; e < 2 * v.classes; e += blockDim.x) {
      const int j = e / v.classes, c = e % v.classes;
      s_branch[e] = cnt[(2 + c) * rl + 2 * a + j];
    }
    if (threadIdx.x == 0) {
      s_new = v.n_leaves[t]++;
      s_key = v.leaf_key[li];
      v.tree[std::size_t(t) * v.array_nodes + off] = static_cast<std::uint32_t>(a);  // internal node
      v.splits[t] += 1;
    }
    __syncthreads();
    const std::uint64_t key = s_key;
    init_leaf(v, t, l, 2 * off + 1, gpudm::vfdt::child_key(key, 0), threadIdx.x, blockDim.x);
    init_leaf(v, t, s_new, 2 * off + 2, gpudm::vfdt::child_key(key, 1), threadIdx.x, blockDim.x);
    for (int c = threadIdx.x; c < v.classes; c += blockDim.x) {
      v.leaf_counts[li * v.classes + c] = s_branch[c];
      v.leaf_counts[v.leaf_index(t, s_new) * v.classes + c] = s_branch[v.classes + c];
    }
    __syncthreads();
  }
  // leaf class array: majority of each leaf's class counts (the next batch's predictions)
  for (int l = threadIdx.x; l < v.n_leaves[t]; l += blockDim.x)
    v.leaf_class[v.leaf_index(t, l)] =
        static_cast<std::uint8_t>(gpudm::vfdt::majority(v.leaf_counts + v.leaf_index(t, l) * v.classes, v.classes));
}

}  // namespace gpudm::backend::cuda::vfdt_faithful
