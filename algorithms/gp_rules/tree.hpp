#pragma once
// Rule antecedents of the GP classification algorithms as typed expression trees (Cano, Zafra,
// Ventura 2012, Sec. 3.1 and Fig. 1): logical nodes AND, OR, NOT over boolean subtrees, and
// comparisons of an attribute with a value (=, !=, <, <=, >, >=) or an interval (IN, OUT) whose
// attribute and value(s) are the tree's terminals. Typed, constrained syntax:
//   - numeric attributes take <, <=, >, >=, IN, OUT; nominal ones =, != (the value an index of
//     the attribute's values): an attribute and its values are "compatible" terminals;
//   - each algorithm's function set (Grammar): Falco AND OR NOT; Tan AND NOT; Bojarczuk AND OR
//     NOT in the constrained syntax of Bojarczuk et al. (2004): OR only above OR/AND, AND only
//     above AND/NOT/comparisons, NOT only directly above a comparison (a rule is a disjunction
//     of conjunctions of possibly negated conditions);
//   - a depth limit (and, for Bojarczuk, a node limit).
// Depth and size count the terminals as the paper's trees do (Fig. 1): a comparison is a node
// with its attribute and value(s) below it (size 3, IN/OUT 4, depth 2); a logical node adds 1
// to the size and to the depth of its deepest child. Size therefore equals the rule's GPops
// per instance (rules/expression.hpp: terminals count).
//
// Trees are stored in prefix order; encode() gives the shared token encoding the rule engine
// evaluates (comparisons prefix, logical operators postfix).
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "algorithms/core/dataset.hpp"
#include "algorithms/core/rng.hpp"
#include "algorithms/rules/expression.hpp"

namespace gpudm::gp_rules {

enum class Kind : std::uint8_t { and_, or_, not_, cmp };

struct Node {
  Kind kind = Kind::cmp;
  std::uint8_t op = 0;  // comparisons: a rules::Opcode (kGt .. kOut)
  std::uint32_t attr = 0;
  float a = 0.0f, b = 0.0f;  // value; IN/OUT: lo, hi
  bool operator==(const Node& o) const {
    return kind == o.kind && op == o.op && attr == o.attr && a == o.a && b == o.b;
  }
};
using Tree = std::vector<Node>;  // prefix order

// An algorithm's syntax.
struct Grammar {
  bool use_or = true;
  bool use_not = true;
  bool dnf = false;  // Bojarczuk's constrained syntax (see above)
  std::vector<std::uint8_t> numeric_ops;  // comparisons allowed on numeric attributes
  std::vector<std::uint8_t> nominal_ops;  // on nominal attributes
  int max_depth = 6;
  int max_nodes = 0;  // 0: only the depth limit

  // Falco, Della Cioppa, Tarantino (2001): AND OR NOT, = < > <= >= IN OUT (= on nominal only).
  static Grammar falco(int max_depth);
  // Tan, Tay, Lee, Heng (2002): AND NOT (no OR), the comparisons of Falco plus !=.
  static Grammar tan(int max_depth);
  // Bojarczuk, Lopes, Freitas (2004): AND OR NOT in disjunctive normal form, = != < <= > >=.
  static Grammar bojarczuk(int max_depth, int max_nodes);
  bool allows(Kind child, Kind parent, bool root) const;
};

// Size (nodes, terminals included) of a node alone: logical 1, comparison 3 (IN/OUT 4).
int node_size(const Node& n);
// One past the last node of the subtree rooted at i.
std::size_t subtree_end(const Tree& t, std::size_t i);
int depth(const Tree& t);
int size(const Tree& t);

// Per-node facts of a tree (one pass): parent (-1 for the root), level (root 1), and the
// subtree's end, depth and size.
struct Shape {
  std::vector<int> parent, level, sub_depth, sub_size;
  std::vector<std::size_t> end;
  explicit Shape(const Tree& t);
};

// The token encoding (END-terminated) of a tree.
std::vector<std::uint32_t> encode(const Tree& t);
// "" when `t` is a valid rule of `g` on `schema` (arity, function set, syntax constraints,
// comparison/attribute compatibility, finite values, lo <= hi, depth and size limits), else why.
std::string check(const Tree& t, const Grammar& g, const rules::Schema& schema);

// The terminal set: attributes and the values the training data hold.
class Terminals {
 public:
  Terminals(const Dataset& data, const Grammar& g);
  // A random attribute that has an allowed comparison; its op; its value(s).
  Node random_comparison(Rng& rng) const;
  // A value of attribute `attr` drawn from a random training row (not missing): thresholds are
  // values the data hold, so every comparison splits the data somewhere.
  float sample_value(Rng& rng, std::uint32_t attr) const;
  bool nominal(std::uint32_t attr) const { return data_->attribute(attr).is_nominal(); }
  const std::vector<std::uint32_t>& numeric() const { return numeric_; }
  const std::vector<std::uint32_t>& nominal_attrs() const { return nominal_; }
  const Grammar& grammar() const { return g_; }
  const Dataset& data() const { return *data_; }

 private:
  const Dataset* data_;
  Grammar g_;
  std::vector<std::uint32_t> numeric_, nominal_;  // attributes that have an allowed comparison
};

// Ramped half-and-half (Koza 1992) under the grammar: individual i of n gets a maximum depth
// ramped over [3, max_depth] and is "full" or "grow" alternately; trees above max_nodes are
// redrawn (grow).
std::vector<Tree> ramped_half_and_half(Rng& rng, const Terminals& terms, std::size_t n);
Tree random_tree(Rng& rng, const Terminals& terms, int depth, bool full);

// Subtree crossover between compatible nodes (Falco et al.; Koza): a node of `a` and a node
// of `b` are swapped with their subtrees when each fits the other's position (syntax) and both
// offspring stay within the depth and size limits; when no compatible pair is found in a few
// draws the offspring are copies of the parents. Returns true when a swap happened.
bool crossover(Rng& rng, const Grammar& g, const Tree& a, const Tree& b, Tree& child_a, Tree& child_b);

// Point mutation (Falco et al.): a random node is replaced by a compatible one of the same arity:
// a terminal by a compatible terminal (an attribute by another attribute of the same type, its
// values redrawn from the new attribute; a value by another value of the attribute), a
// non-terminal by another allowed non-terminal of the same arity and type (AND <-> OR,
// < <= > >= among themselves, IN <-> OUT, = <-> !=). Depth and size never change. Returns
// false when the tree has no node with an alternative (it is left as it was).
bool mutate(Rng& rng, const Terminals& terms, Tree& t);

}  // namespace gpudm::gp_rules
