#pragma once
// Full balanced expression trees of conditions joined by AND/OR (Cano & Ventura, GECCO 2014
// poster "GPU Parallel SubTree Interpreter for GP"). A tree of depth d has 2^d comparison
// leaves and 2^d - 1 logical nodes, 2^(d+1) - 1 nodes in all (31, 63, 127 for d = 4, 5, 6).
//
// The canonical form is heap order (root 0, children of i at 2i+1 and 2i+2); every
// interpreter's encoding (pure postfix, mixed prefix/postfix, level order, bit-level) is
// derived from it by encoding.hpp, so all interpreters see the same trees.
//
// This header is included by CUDA code: C++17.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "algorithms/rules/opcodes.hpp"

namespace gpudm {
class Dataset;
class Rng;
}  // namespace gpudm

namespace gpudm::subtree {

// One node: `word` = rules::make_word(op, attribute); `a`, `b` = the comparison's operands
// (b only for IN/OUT). Logical nodes use only the opcode (AND or OR).
struct Node {
  std::uint32_t word = 0;
  float a = 0.0f;
  float b = 0.0f;
};

// Deepest tree any interpreter accepts (2047 nodes); the bit-level interpreter ("best")
// accepts depth <= kMaxBitDepth (127 nodes: the 64 leaf results fit one 64-bit word).
inline constexpr int kMaxDepth = 10;
inline constexpr int kMaxBitDepth = 6;

constexpr int nodes_for_depth(int depth) { return (2 << depth) - 1; }
constexpr int leaves_for_depth(int depth) { return 1 << depth; }
// Depth of a full binary tree with `nodes` nodes, or -1 when `nodes` is not 2^(d+1) - 1.
int depth_for_size(long long nodes);

// A population of `trees` full trees of the same depth, tree-major, heap order.
struct Population {
  int depth = 0;
  int trees = 0;
  std::vector<Node> nodes;

  int nodes_per_tree() const { return nodes_for_depth(depth); }
  int leaves_per_tree() const { return leaves_for_depth(depth); }
  const Node* tree(int t) const { return nodes.data() + static_cast<std::size_t>(t) * nodes_per_tree(); }
  Node* tree(int t) { return nodes.data() + static_cast<std::size_t>(t) * nodes_per_tree(); }
};

// How random trees are drawn (generate_population).
struct GeneratorOptions {
  double and_probability = 0.5;    // each logical node is AND with this probability, else OR
  double interval_probability = 0.2;  // numeric leaves: IN/OUT with this probability, else > >= < <=
};

// Random population for `data`: numeric attributes get > >= < <= (or IN/OUT) with thresholds
// taken from the values of random rows (so coverage is neither empty nor full by construction);
// nominal attributes get = / != with a value index drawn from the attribute's domain.
// Deterministic in (data, trees, depth, rng seed).
Population generate_population(const Dataset& data, int trees, int depth, const Rng& rng,
                               const GeneratorOptions& options = {});

// Throws gpudm::Error naming the tree and node of the first violation: depth out of range,
// wrong node count, a leaf that is not a comparison, an internal node that is not AND/OR,
// an attribute index >= the dataset's columns, = / != on a numeric attribute or an ordering
// comparison on a nominal one, an IN/OUT interval with lo > hi.
void validate_population(const Population& pop, const Dataset& data);

// Human-readable infix form of tree t (debugging, error messages, tests).
std::string to_infix(const Population& pop, int t);

}  // namespace gpudm::subtree
