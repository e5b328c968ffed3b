#pragma once
// A GMT individual: a binary univariate model tree. Internal node: x[attr] <= threshold goes
// left, otherwise right (NaN goes right). Leaf: a linear model c0 + sum_k c_k x_{attrs[k]} over a
// subset of the attributes (an empty subset is a constant leaf).
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "algorithms/core/dataset.hpp"
#include "algorithms/gmt/flat_tree.hpp"

namespace gpudm {
namespace gmt {

struct Node {
  int attr = kLeafNode;     // >= 0: internal test attribute
  float threshold = 0.0f;
  std::unique_ptr<Node> left, right;
  std::vector<int> model_attrs;  // leaf model attributes, ascending
  std::vector<double> coef;      // leaf: intercept then one per model_attrs entry
  bool dirty = true;             // leaf model must be refit at the next evaluation
  NodeStats stats;               // from the last evaluation

  bool is_leaf() const { return attr < 0; }
  std::unique_ptr<Node> clone() const;
  // Makes this node a leaf with the given model attributes (refit at the next evaluation).
  void make_leaf(std::vector<int> attrs);
};

// Pre-order list of the nodes with their depth (root depth 0).
struct NodeRef {
  Node* node;
  Node* parent;
  int depth;
};
std::vector<NodeRef> collect_nodes(Node* root);

int count_leaves(const Node* n);
int count_internal(const Node* n);
int tree_depth(const Node* n);                 // levels: a single leaf has 1
int count_model_attributes(const Node* n);     // W(T): attributes over all leaf models
void mark_subtree_dirty(Node* n);

// Flattens to the 2i+1 / 2i+2 array layout. Throws if the tree has more than max_levels levels.
void flatten(const Node* root, int cols, std::uint64_t salt, FlatTree& out);
// Copies models (only refit leaves) and statistics back into the tree after an evaluation.
// Attributes whose coefficient is exactly 0 after a refit were dropped by the rank rule and
// are removed from the model.
void apply_evaluation(Node* root, const FlatTree& flat, const EvalOutput& ev);

double predict(const Node* root, const Dataset& d, std::size_t row);

// Moves every test's threshold to the midpoint of the gap between the training values on its two
// sides (CART's split points). The training partition, hence every leaf model and the fitness,
// is unchanged; only unseen rows that fall in a gap are routed differently (to the nearer side
// instead of wherever the dipole or the last shift left the threshold). Returns how many moved.
int center_thresholds(Node* root, const Dataset& train);

// Readable text (M5-style): the tests, then each leaf's model "LMk: y = ...".
std::string to_text(const Node* root, const Dataset& d);
nlohmann::ordered_json to_json(const Node* root, const Dataset& d);
// Deepest model tree from_json accepts (flatten() takes 24 levels; the recursive tree functions
// must never meet a tree that could overflow the stack).
inline constexpr int kMaxModelLevels = 64;
// Parses a tree written by to_json; attribute indices are checked against `cols`, thresholds
// against the float range, depth against kMaxModelLevels (all gpudm::Error naming `where`).
std::unique_ptr<Node> from_json(const nlohmann::json& j, int cols, const std::string& where);

}  // namespace gmt
}  // namespace gpudm
