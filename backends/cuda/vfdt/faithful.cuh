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
// The decisions use the same arithmetic as every other backend, so the trees are identical.
#include <cstdint>
#include <vector>

#include "algorithms/vfdt/forest.hpp"
#include "backends/cuda/common/common.cuh"
#include "backends/cuda/vfdt/kernels.cuh"

namespace gpudm::backend::cuda::vfdt_faithful {

using gpudm::vfdt::Adwin;

struct Policy {
  static constexpr int kInstanceBlock = 256;
  static constexpr int kGainBlock = 256;
  static constexpr int kSortCapacity = 256;  // attributes sorted per block (next power of two of d)
  static constexpr std::uint32_t kLeaf = 0x80000000u;
};

struct View {
  int trees, attributes, classes, depth, batch, grace, features;
  int array_nodes;  // 2^(depth+1)-1
  int max_leaves;   // 2^depth
  bool bagging;
  double hb_numer, tau;
  std::uint64_t seed;
  std::uint32_t* tree;        // [T x array_nodes]
  std::int32_t* n_leaves;     // [T]
  std::uint32_t* generation;  // [T]
  std::int32_t* drift;        // [T]
  Adwin* adwins;              // [T]: a tree's detector, restarted with the tree
  unsigned long long* splits;
  unsigned long long* resets;
  std::uint8_t* leaf_class;   // [T x max_leaves]
  std::int32_t* leaf_back;    // [T x max_leaves]
  std::uint32_t* leaf_counts;  // [T x max_leaves x C] class counts (inherited + learned)
  std::uint32_t* leaf_seen;    // [T x max_leaves]
  std::uint32_t* leaf_last;
  std::uint64_t* leaf_key;
  std::uint32_t* counters;     // [T x max_leaves x (2 + C) x 2d]
  std::uint32_t* decision;     // [T x max_leaves]: kLeaf | attribute when the leaf splits
  std::int32_t* leaf_of;       // [T x batch]
  std::uint8_t* weight;        // [T x batch] Poisson weights
  std::uint8_t* tree_pred;     // [T x batch]

  __device__ int row_len() const { return 2 * attributes; }
  __device__ std::size_t leaf_index(int t, int l) const { return std::size_t(t) * max_leaves + l; }
  __device__ std::uint32_t* leaf_counters(int t, int l) const {
    return counters + leaf_index(t, l) * std::size_t(2 + classes) * row_len();
  }
};

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
  init_leaf(v, t, 0, 0, gpudm::vfdt::root_key(v.seed, static_cast<std::uint32_t>(t), gen), threadIdx.x, blockDim.x);
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
      v.bagging ? gpudm::vfdt::poisson1(v.seed, static_cast<std::uint32_t>(t), first_instance + j) : 1);
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

// Device state and launches of the faithful path (owned by the CUDA evaluator).
class FaithfulForest {
 public:
  void prepare(const vfdt::EncodedStream& s, const vfdt::ForestParams& p, const vfdt::ForestLayout& L, cudaStream_t) {
    if (s.attributes > Policy::kSortCapacity)
      throw Error("vfdt/cuda faithful: at most " + std::to_string(Policy::kSortCapacity) + " attributes");
    p_ = p;
    L_ = L;
    const std::size_t T = L.trees;
    array_nodes_ = (1 << (p.max_depth + 1)) - 1;
    max_leaves_ = 1 << p.max_depth;
    const std::size_t ML = T * max_leaves_;
    tree_ = DeviceBuffer<std::uint32_t>(T * array_nodes_);
    n_leaves_ = DeviceBuffer<std::int32_t>(T);
    generation_ = DeviceBuffer<std::uint32_t>(T);
    drift_ = DeviceBuffer<std::int32_t>(T);
    splits_ = DeviceBuffer<unsigned long long>(T);
    resets_ = DeviceBuffer<unsigned long long>(T);
    leaf_class_ = DeviceBuffer<std::uint8_t>(ML);
    leaf_back_ = DeviceBuffer<std::int32_t>(ML);
    leaf_counts_ = DeviceBuffer<std::uint32_t>(ML * L.classes);
    leaf_seen_ = DeviceBuffer<std::uint32_t>(ML);
    leaf_last_ = DeviceBuffer<std::uint32_t>(ML);
    leaf_key_ = DeviceBuffer<std::uint64_t>(ML);
    counters_ = DeviceBuffer<std::uint32_t>(ML * std::size_t(2 + L.classes) * 2 * L.attributes);
    decision_ = DeviceBuffer<std::uint32_t>(ML);
    leaf_of_ = DeviceBuffer<std::int32_t>(T * p.batch);
    weight_ = DeviceBuffer<std::uint8_t>(T * p.batch);
    tree_pred_ = DeviceBuffer<std::uint8_t>(T * p.batch);
    adwins_ = DeviceBuffer<Adwin>(T);
    const double r = std::log2(static_cast<double>(L.classes));
    hb_numer_ = r * r * std::log(1.0 / p.delta);
  }

  void reset(cudaStream_t stream) {
    tree_.memset_async(0, stream);
    k_init<<<L_.trees, Policy::kGainBlock, 0, stream>>>(view());
    GPUDM_CUDA_CHECK_LAUNCH();
  }

  void batch(DevicePhases& dp, const std::uint8_t* codes, const std::uint8_t* labels, int nb, std::uint64_t first,
             std::int32_t* out, cudaStream_t stream) {
    const View v = view();
    const dim3 grid(grid_for(nb, Policy::kInstanceBlock), 1, L_.trees);
    {
      auto ph = dp.scope("traversal");
      k_traverse<<<grid, Policy::kInstanceBlock, 0, stream>>>(v, codes, nb, first);
      GPUDM_CUDA_CHECK_LAUNCH();
    }
    vfdt_kernels::ForestView fv{};  // the vote and ADWIN kernels are shared with the default path
    fv.trees = L_.trees;
    fv.classes = L_.classes;
    fv.batch = p_.batch;
    fv.adwin_delta = p_.adwin_delta;
    fv.reset_any = p_.reset_on_any_cut();
    fv.tree_pred = tree_pred_.data();
    fv.drift = drift_.data();
    fv.adwins = adwins_.data();
    {
      auto ph = dp.scope("vote");
      vfdt_kernels::k_vote<<<grid_for(nb, Policy::kInstanceBlock), Policy::kInstanceBlock, 0, stream>>>(fv, nb, out);
      GPUDM_CUDA_CHECK_LAUNCH();
    }
    {
      auto ph = dp.scope("counters");
      k_count<<<grid, Policy::kInstanceBlock, 0, stream>>>(v, codes, labels, nb);
      GPUDM_CUDA_CHECK_LAUNCH();
    }
    if (p_.adwin) {
      auto ph = dp.scope("adwin");
      if (p_.adwin_kernel != "simple") vfdt_kernels::k_adwin_warp<<<L_.trees, 32, 0, stream>>>(fv, labels, nb);
      else vfdt_kernels::k_adwin<<<L_.trees, 32, 0, stream>>>(fv, labels, nb);
      GPUDM_CUDA_CHECK_LAUNCH();
    }
    {
      auto ph = dp.scope("gain");
      k_gain<<<dim3(max_leaves_, 1, L_.trees), Policy::kGainBlock, 0, stream>>>(v);
      GPUDM_CUDA_CHECK_LAUNCH();
    }
    {
      auto ph = dp.scope("split");
      k_apply<<<L_.trees, Policy::kGainBlock, 0, stream>>>(v);
      GPUDM_CUDA_CHECK_LAUNCH();
    }
  }

  // The array layout converted to the pool form of ForestSnapshot (breadth-first numbering,
  // children contiguous); leaf slots are the leaf ids.
  vfdt::ForestSnapshot snapshot(const vfdt::ForestLayout& L, cudaStream_t stream) {
    GPUDM_CUDA_CHECK(cudaStreamSynchronize(stream));
    vfdt::ForestSnapshot s;
    s.layout = L;
    s.layout.nodes = array_nodes_ + 1;  // >= nodes and >= leaf ids
    const std::size_t N = s.layout.nodes;
    const auto tree = tree_.to_host();
    const auto counts = leaf_counts_.to_host();
    s.generation = generation_.to_host();
    s.node_attr.assign(L.trees * N, -1);
    s.node_child.assign(L.trees * N, 0);
    s.node_depth.assign(L.trees * N, 0);
    s.slot_class.assign(L.trees * N * L.classes, 0);
    s.attr_values.assign(L.attributes, 2);
    s.n_nodes.assign(L.trees, 0);
    for (int t = 0; t < L.trees; ++t) {
      const std::uint32_t* tr = tree.data() + std::size_t(t) * array_nodes_;
      std::vector<std::pair<int, int>> queue{{0, 0}};  // (array offset, pool index)
      int next = 1;
      for (std::size_t q = 0; q < queue.size(); ++q) {
        const auto [off, idx] = queue[q];
        const std::size_t ni = std::size_t(t) * N + idx;
        s.node_depth[ni] = 31 - __builtin_clz(static_cast<unsigned>(off + 1));
        if (tr[off] & Policy::kLeaf) {
          const int l = static_cast<int>(tr[off] & ~Policy::kLeaf);
          s.node_attr[ni] = -1;
          s.node_child[ni] = l;
          for (int c = 0; c < L.classes; ++c)
            s.slot_class[(std::size_t(t) * N + l) * L.classes + c] =
                counts[(std::size_t(t) * max_leaves_ + l) * L.classes + c];
        } else {
          s.node_attr[ni] = static_cast<int>(tr[off]);
          s.node_child[ni] = next;
          queue.push_back({2 * off + 1, next});
          queue.push_back({2 * off + 2, next + 1});
          next += 2;
        }
      }
      s.n_nodes[t] = next;
    }
    for (auto v : splits_.to_host()) s.splits += static_cast<long long>(v);
    for (auto v : resets_.to_host()) s.resets += static_cast<long long>(v);
    return s;
  }

 private:
  View view() {
    View v{};
    v.trees = L_.trees;
    v.attributes = L_.attributes;
    v.classes = L_.classes;
    v.depth = p_.max_depth;
    v.batch = p_.batch;
    v.grace = p_.grace;
    v.features = L_.features;
    v.array_nodes = array_nodes_;
    v.max_leaves = max_leaves_;
    v.bagging = p_.bagging;
    v.hb_numer = hb_numer_;
    v.tau = p_.tau;
    v.seed = p_.seed;
    v.tree = tree_.data();
    v.n_leaves = n_leaves_.data();
    v.generation = generation_.data();
    v.drift = drift_.data();
    v.adwins = adwins_.data();
    v.splits = splits_.data();
    v.resets = resets_.data();
    v.leaf_class = leaf_class_.data();
    v.leaf_back = leaf_back_.data();
    v.leaf_counts = leaf_counts_.data();
    v.leaf_seen = leaf_seen_.data();
    v.leaf_last = leaf_last_.data();
    v.leaf_key = leaf_key_.data();
    v.counters = counters_.data();
    v.decision = decision_.data();
    v.leaf_of = leaf_of_.data();
    v.weight = weight_.data();
    v.tree_pred = tree_pred_.data();
    return v;
  }

  vfdt::ForestParams p_;
  vfdt::ForestLayout L_;
  int array_nodes_ = 0, max_leaves_ = 0;
  double hb_numer_ = 0;
  DeviceBuffer<std::uint32_t> tree_, generation_, leaf_counts_, leaf_seen_, leaf_last_, counters_, decision_;
  DeviceBuffer<std::int32_t> n_leaves_, drift_, leaf_back_, leaf_of_;
  DeviceBuffer<unsigned long long> splits_, resets_;
  DeviceBuffer<std::uint8_t> leaf_class_, weight_, tree_pred_;
  DeviceBuffer<std::uint64_t> leaf_key_;
  DeviceBuffer<Adwin> adwins_;
};

}  // namespace gpudm::backend::cuda::vfdt_faithful
