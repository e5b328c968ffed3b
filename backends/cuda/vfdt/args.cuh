#pragma once
// Kernel argument structs (args.cuh in every CUDA family): device views of the streaming
// forest's state, flat arrays owned by the evaluator (evaluator.cu), passed by value to the
// launchers (launch.cuh) and kernels. Each kernel takes the
// narrowest view it needs: the vote and the warp/simple ADWIN kernels, shared by both paths, take
// VoteView / AdwinView, which each path fills completely from its own buffers.
#include <cstddef>
#include <cstdint>

#include "algorithms/vfdt/vfdt_math.hpp"

namespace gpudm::backend::cuda::vfdt_kernels {

using gpudm::vfdt::Adwin;
using gpudm::vfdt::AdwinPrefix;

// The trees' votes for a run of instances: tree t's vote for instance j at tree_pred[t * stride + j].
struct VoteView {
  int trees, classes;
  std::size_t stride;
  const std::uint8_t* tree_pred;
};

// One detector per tree fed with the trees' 0/1 errors of a batch (tree_pred vs labels).
struct AdwinView {
  int trees;
  int batch;              // stride of tree_pred
  double adwin_delta;     // ADWIN confidence
  bool reset_any;         // ForestParams::reset_on_any_cut(): every cut signals (else only a rise)
  const std::uint8_t* tree_pred;  // [trees x batch]
  Adwin* adwins;          // [trees]
  std::int32_t* drift;    // [trees] set to 1 + the batch position of the input that fired
};

// Path default: the compact node pool ([tree][node|slot][...]), as the CPU engine's.
struct ForestView {
  int trees, nodes, attributes, classes, values, features, batch;
  int grace, max_depth;
  bool bagging, adwin;
  bool stream_order;  // ForestParams::stream_order() (persistent engine only)
  bool naive_bayes;   // ForestParams::naive_bayes(): leaves vote naive Bayes (not with stream_order)
  bool bound_total;   // ForestParams::bound_total(): n of the Hoeffding bound includes inherited counts
  bool reset_any;     // ForestParams::reset_on_any_cut(): every ADWIN cut resets (else only a rise)
  double hb_numer, tau, adwin_delta;
  std::uint64_t seed;
  int first_tree;  // the forest's id of tree 0 here (a forest split over ranks): seeds its draws
  const std::int32_t* attr_values;  // [attributes]
  std::int32_t* n_nodes;            // [trees]
  std::int32_t* n_slots;
  std::uint32_t* generation;
  std::int32_t* drift;       // nonzero: the tree's ADWIN fired in this batch (1 + its position)
  unsigned long long* splits;
  unsigned long long* resets;
  std::int32_t* node_attr;  // [trees x nodes]
  std::int32_t* node_child;
  std::int32_t* node_depth;
  std::uint32_t* slot_class;  // [trees x nodes x classes]
  std::uint32_t* slot_seen;
  std::uint32_t* slot_other;  // [trees x nodes] batch_order "stream": weight of the batch's instances
                              // of a class other than the leaf's majority (zero between batches)
  std::uint32_t* slot_last;
  std::uint64_t* slot_key;
  std::int16_t* slot_subset;  // [trees x nodes x features]
  std::uint32_t* counters;    // [trees x nodes x features x values x classes]
  Adwin* adwins;              // [trees] ("warp"/"simple" ADWIN kernels)
  AdwinPrefix* adwinp;        // [trees] ("prefix" ADWIN kernel), else nullptr
  std::uint32_t* hist;        // [trees x hist_stride] running count of errors per stream position
  std::size_t hist_stride;    // stream rows + 1
  std::uint8_t* pred_all;     // [trees x pred_stride] every tree's vote for the range (persistent)
  std::size_t pred_stride;
  std::uint64_t pred_base;    // the stream position of pred_all's column 0 (a later chunk's first)
  std::int32_t* leaf;         // [trees x batch]
  std::uint8_t* tree_pred;    // [trees x batch]
  std::int32_t* decision;     // [trees x nodes] split kernel scratch
  std::uint64_t* split_total;       // [trees x nodes] split scratch: weight seen by a due leaf
  std::int64_t* split_class_term;   // [trees x nodes] its class-entropy term (fixed point)
  std::int64_t* split_merit;        // [trees x nodes x features] merit of each attribute

  __device__ std::size_t slot_index(int t, int s) const { return std::size_t(t) * nodes + s; }
  __device__ std::size_t counters_per_slot() const { return std::size_t(features) * values * classes; }
  // The per-batch kernels' votes and detectors.
  VoteView batch_votes() const { return VoteView{trees, classes, static_cast<std::size_t>(batch), tree_pred}; }
  AdwinView adwin_view() const { return AdwinView{trees, batch, adwin_delta, reset_any, tree_pred, adwins, drift}; }
  // The persistent engine's votes for stream positions [pos0, ...).
  VoteView stream_votes(std::size_t pos0) const { return VoteView{trees, classes, pred_stride, pred_all + (pos0 - pred_base)}; }
};

// Path faithful: the paper's GVFD layout (faithful.cuh has the details).
struct FaithfulView {
  int trees, attributes, classes, depth, batch, grace, features;
  int array_nodes;  // 2^(depth+1)-1
  int max_leaves;   // 2^depth
  bool bagging;
  double hb_numer, tau;
  std::uint64_t seed;
  int first_tree;             // the forest's id of tree 0 here (a forest split over ranks)
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

// Cycle counters of the persistent kernel's phases, per tree (SM clock, summed over batches).
enum PersistentPhase { kPhTraversal = 0, kPhCounters, kPhAdwin, kPhSplit, kPhCount };

}  // namespace gpudm::backend::cuda::vfdt_kernels
