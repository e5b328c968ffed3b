#pragma once
// The paper's flat representation of an individual (Sec. 4.4, Listing 1: copyTreeToTable): the
// tree in an array with the children of node i at 2i+1 (left, x[attr] <= threshold) and 2i+2
// (right, otherwise; NaN goes right), 2^levels - 1 slots. Only the CUDA backend's faithful path
// (the paper's design) uses it; everything else reads the compact tree (tree.hpp), which is sized
// by its nodes. Plain C++17 vectors so the CUDA backend can upload it unchanged.
#include <cstdint>
#include <vector>

namespace gpudm {
namespace gmt {

class Tree;
struct NodeStats;

constexpr std::int32_t kAbsentNode = -2;  // array slot not used by the tree

struct FlatTree {
  int levels = 0;                  // n_nodes = 2^levels - 1
  int cols = 0;                    // dataset attributes (model width = cols + 1 with the intercept)
  std::vector<std::int32_t> attr;  // per node: kAbsentNode, kLeafNode (-1) or the test attribute
  std::vector<float> threshold;    // per node (internal nodes)
  std::vector<std::int32_t> leaf_slot;  // per node: dense leaf index 0..n_leaves-1, -1 otherwise
  std::vector<std::int32_t> leaf_node;  // per leaf slot: node index
  std::vector<std::int32_t> compact;    // per leaf slot: the compact tree's node
  std::vector<std::uint8_t> refit;      // per leaf slot: 1 = recompute the model (affected leaf)
  std::vector<std::uint8_t> mask;       // per leaf slot x cols: attribute used in the leaf model
  std::vector<double> coef;             // per leaf slot x (cols+1): intercept, then one per attribute;
                                        // read for leaves with refit = 0, ignored otherwise
  std::uint64_t salt = 0;               // the dipole draw (tree.hpp dipole_key)

  int n_nodes() const { return static_cast<int>(attr.size()); }
  int n_leaves() const { return static_cast<int>(leaf_node.size()); }
};

// Per-leaf result of a flat evaluation (the faithful path writes it; apply_flat_output reads it).
struct FlatLeafResult {
  std::int64_t count = 0;
  double sse = 0.0, sae = 0.0;
  std::int64_t dipole_lo = -1, dipole_hi = -1, dipole_rand = -1;
};
struct FlatOutput {
  std::vector<FlatLeafResult> leaves;  // per leaf slot
  std::vector<double> coef;            // per leaf slot x (cols+1): fitted (or passed-through) models
  std::vector<std::int32_t> rank;      // per leaf slot: columns kept by the rank rule (incl. intercept)
};

// Flattens to the 2i+1 / 2i+2 layout (the paper's data flattening). Throws if the tree has more
// than 24 levels.
void flatten(const Tree& t, std::uint64_t salt, int cols, FlatTree& out);

}  // namespace gmt
}  // namespace gpudm
