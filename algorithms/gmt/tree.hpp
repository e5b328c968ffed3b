#pragma once
// A GMT individual: a binary univariate model tree stored as one node array (a compact tree).
// Internal node: x[attr] <= threshold goes left, otherwise right (NaN goes right). Leaf: a
// linear model c0 + sum_k c_k x_{attrs[k]} over a subset of the attributes (an empty subset is a
// constant leaf).
//
// Layout: breadth-first, root at 0, the two children of a node adjacent (right = left + 1), so
// the array is sized by the number of nodes (never 2^depth) and copying a tree is a copy of three
// flat vectors. Leaf models live in two pools (attribute ids, coefficients) indexed from the leaf.
// The same arrays are what every backend reads (the CUDA batch copies them as they are); an edit
// (operators, repairs) rebuilds the arrays in breadth-first order, O(nodes).
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "algorithms/core/dataset.hpp"

namespace gpudm {
namespace gmt {

constexpr std::int32_t kLeafNode = -1;  // TreeNode::attr of a leaf; attr >= 0 is an internal test

// A read-only view of n values (std::span is C++20; CUDA translation units include this header
// as C++17).
template <class T>
struct View {
  const T* ptr = nullptr;
  std::size_t n = 0;
  const T* begin() const { return ptr; }
  const T* end() const { return ptr + n; }
  std::size_t size() const { return n; }
  bool empty() const { return n == 0; }
  const T& operator[](std::size_t i) const { return ptr[i]; }
};

// Per-node result of an evaluation (every node; internal ones aggregated from their leaves).
struct NodeStats {
  std::int64_t count = 0;   // training rows reaching the node
  double sse = 0.0;         // sum of squared residuals of the leaf models below
  double sae = 0.0;         // sum of absolute residuals (NaN where the backend does not compute it:
                            // the GPU fast path, whose SSE comes from the leaf statistics)
  std::int64_t dipole_lo = -1;    // row with the smallest target below the node (ties: lower row)
  std::int64_t dipole_hi = -1;    // row with the largest target below the node (ties: lower row)
  std::int64_t dipole_rand = -1;  // a uniformly drawn row of the node (dipole_key's minimum)
};

struct TreeNode {
  std::int32_t attr = kLeafNode;  // >= 0: test attribute
  float threshold = 0.0f;
  std::int32_t left = -1;         // internal: index of the left child (right child = left + 1)
  std::int32_t parent = -1;       // -1 for the root
  std::int32_t depth = 0;         // root 0
  // Leaf model: attributes attr_pool[m_off, m_off + m_len) (ascending), coefficients
  // coef_pool[c_off, c_off + m_len + 1) (intercept first) when has_coef.
  std::int32_t m_off = 0, m_len = 0, c_off = 0;
  std::int32_t rank = -1;         // leaf: columns the last refit kept (intercept included), -1 unknown
  std::uint8_t dirty = 1;         // leaf: refit at the next evaluation
  std::uint8_t has_coef = 0;
  NodeStats stats;                // from the last evaluation
  bool is_leaf() const { return attr < 0; }
  int right() const { return left + 1; }
};

class Tree {
 public:
  Tree() { nodes_.emplace_back(); }  // a single constant leaf
  // A single leaf with the given (ascending) model attributes, dirty.
  static Tree leaf(const std::vector<int>& attrs);
  // A test with two subtrees.
  static Tree join(int attr, float threshold, const Tree& left, const Tree& right);
  // A tree from its arrays as nodes() / attr_pool() / coef_pool() give them (a file, a fuzzer):
  // checked to be breadth-first with adjacent children, every test attribute in [0, cols), every
  // model inside the pools with ascending attributes in [0, cols); parent and depth are recomputed.
  // Throws gpudm::Error naming `where`.
  static Tree from_parts(std::vector<TreeNode> nodes, std::vector<std::int32_t> attr_pool, std::vector<double> coef_pool,
                         int cols, const std::string& where);

  int size() const { return static_cast<int>(nodes_.size()); }
  const TreeNode& node(int i) const { return nodes_[static_cast<std::size_t>(i)]; }
  TreeNode& node(int i) { return nodes_[static_cast<std::size_t>(i)]; }
  const std::vector<TreeNode>& nodes() const { return nodes_; }
  View<std::int32_t> attrs(int leaf) const;
  View<double> coef(int leaf) const;  // empty unless has_coef
  const std::vector<std::int32_t>& attr_pool() const { return attr_pool_; }
  const std::vector<double>& coef_pool() const { return coef_pool_; }

  int n_leaves() const;
  int n_internal() const { return size() - n_leaves(); }
  int levels() const;             // a single leaf has 1
  int model_attributes() const;   // W(T): attributes over all leaf models
  bool leaf_needs_refit(int leaf) const;  // dirty or without coefficients

  // Nodes of the subtree at i (i first, then breadth-first).
  std::vector<int> subtree(int i) const;
  // Pre-order list (node, then its left subtree, then its right subtree): the order the text and
  // JSON forms use.
  std::vector<int> preorder() const;

  // ---- edits (each rebuilds the arrays breadth-first; node indices change) ----
  // The subtree at i as a tree of its own (statistics, models and flags copied).
  Tree extract(int i) const;
  // Replaces the subtree at i by `sub` (copied).
  void replace(int i, const Tree& sub);
  // Replaces the subtree at i by a dirty leaf with the given model attributes (ascending).
  void make_leaf(int i, const std::vector<int>& attrs);
  // Leaf i's model: new attributes (ascending), dirty, coefficients dropped.
  void set_model(int leaf, const std::vector<int>& attrs);
  // After a refit: the kept attributes and their coefficients (intercept first), clean.
  void set_fit(int leaf, const std::vector<int>& attrs, const std::vector<double>& coef, int rank);
  // Every leaf below i (i included) dirty.
  void mark_dirty(int i);
  // Drops pool entries no leaf refers to (after many set_model / set_fit calls), when the attribute
  // pool holds more than twice what the leaves use. `model_attributes`: the tree's
  // model_attributes() when the caller has it (-1: counted here).
  void compact_pools(int model_attributes = -1);

  double predict(const Dataset& d, std::size_t row) const;
  // Leaf reached by `row` (index into the node array).
  int route(const Dataset& d, std::size_t row) const;

  // Structural and model equality (statistics and flags ignored).
  bool same_model(const Tree& o) const;

  // A node of some tree (the source of a node of a rebuilt tree).
  struct Source {
    const Tree* tree;
    int node;
  };
  // This tree with the subtree at each at[k] replaced by the subtree at with[k] (of any tree, this
  // one included; the `at` nodes must be disjoint subtrees). `sources`, when given, receives the
  // source of every node of the result.
  Tree grafted(const std::vector<int>& at, const std::vector<Source>& with, std::vector<Source>* sources = nullptr) const;

 private:
  // Rebuilds from `root` breadth-first; `sub(source)` may substitute another source.
  // The hints size the new arrays (upper bounds of the result's nodes and pool entries).
  template <class Subst>
  static Tree build(Source root, Subst sub, std::vector<Source>* sources, std::size_t nodes_hint, std::size_t attrs_hint,
                    std::size_t coefs_hint);
  void append_model(TreeNode& n, View<std::int32_t> a, View<double> c);

  std::vector<TreeNode> nodes_;
  std::vector<std::int32_t> attr_pool_;
  std::vector<double> coef_pool_;
};

int count_leaves(const Tree& t);
int count_internal(const Tree& t);
int tree_depth(const Tree& t);
int count_model_attributes(const Tree& t);

// Moves every test's threshold to the midpoint of the gap between the training values on its two
// sides (CART's split points). The training partition, hence every leaf model and the fitness,
// is unchanged; only unseen rows that fall in a gap are routed differently (to the nearer side
// instead of wherever the dipole or the last shift left the threshold). Returns how many moved.
int center_thresholds(Tree& t, const Dataset& train);

// Readable text (M5-style): the tests, then each leaf's model "LMk: y = ...".
std::string to_text(const Tree& t, const Dataset& d);
nlohmann::ordered_json to_json(const Tree& t, const Dataset& d);
// Deepest model tree from_json accepts (the text and JSON writers recurse).
inline constexpr int kMaxModelLevels = 64;
// Parses a tree written by to_json; attribute indices are checked against `cols`, thresholds
// against the float range, depth against kMaxModelLevels (all gpudm::Error naming `where`).
Tree from_json(const nlohmann::json& j, int cols, const std::string& where);

// The random dipole row of a node is the row with the smallest key among the node's rows: a hash
// of (salt, row) in the high 32 bits, the row in the low 32 bits (ties: the lower row). The
// minimum of i.i.d. uniform keys is a uniformly drawn row, and a parent's minimum is the smaller
// of its children's, so the draw costs one min-reduction like dipole_lo / dipole_hi (the k-th row
// of each leaf would need the leaf's row list).
std::uint64_t dipole_key(std::uint64_t salt, std::uint64_t row);

}  // namespace gmt
}  // namespace gpudm
