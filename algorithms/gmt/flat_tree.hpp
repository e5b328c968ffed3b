#pragma once
// The evaluator's view of one individual: the tree flattened to arrays with the children of
// node i at 2i+1 (left, x[attr] <= threshold) and 2i+2 (right, otherwise; NaN goes right).
// Written in C++17 with plain vectors so the CUDA backend can upload it unchanged.
#include <cstdint>
#include <vector>

namespace gpudm {
namespace gmt {

constexpr std::int32_t kAbsentNode = -2;  // array slot not used by the tree
constexpr std::int32_t kLeafNode = -1;    // leaf; attr >= 0 is an internal test

struct FlatTree {
  int levels = 0;                  // n_nodes = 2^levels - 1
  int cols = 0;                    // dataset attributes (model width = cols + 1 with the intercept)
  std::vector<std::int32_t> attr;  // per node: kAbsentNode, kLeafNode or the test attribute
  std::vector<float> threshold;    // per node (internal nodes)
  std::vector<std::int32_t> leaf_slot;  // per node: dense leaf index 0..n_leaves-1, -1 otherwise
  std::vector<std::int32_t> leaf_node;  // per leaf slot: node index
  std::vector<std::uint8_t> refit;      // per leaf slot: 1 = recompute the model (affected leaf)
  std::vector<std::uint8_t> mask;       // per leaf slot x cols: attribute used in the leaf model
  std::vector<double> coef;             // per leaf slot x (cols+1): intercept, then one per attribute;
                                        // read for leaves with refit = 0, ignored otherwise
  std::uint64_t salt = 0;               // picks the random dipole sample per node (deterministic)

  int n_nodes() const { return static_cast<int>(attr.size()); }
  int n_leaves() const { return static_cast<int>(leaf_node.size()); }
};

// Per-node result of an evaluation (every node, internal ones aggregated from their leaves).
struct NodeStats {
  std::int64_t count = 0;   // training rows reaching the node
  double sse = 0.0;         // sum of squared residuals of the leaf models below
  double sae = 0.0;         // sum of absolute residuals
  std::int64_t dipole_lo = -1;    // row with the smallest target below the node
  std::int64_t dipole_hi = -1;    // row with the largest target below the node
  std::int64_t dipole_rand = -1;  // a pseudo-random row below the node (first dipole end)
};

struct EvalOutput {
  std::vector<NodeStats> nodes;   // per flat node
  std::vector<double> coef;       // per leaf slot x (cols+1): fitted (or passed-through) models
  std::vector<std::int32_t> rank; // per leaf slot: columns kept by the rank rule (incl. intercept)
};

}  // namespace gmt
}  // namespace gpudm
