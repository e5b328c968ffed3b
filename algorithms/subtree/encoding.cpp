#include "algorithms/subtree/encoding.hpp"

#include <cmath>
#include <limits>

#include "algorithms/core/error.hpp"

namespace gpudm::subtree {

namespace {

// Post-order walk of a heap-ordered full tree; `emit_leaf` / `emit_logical` append tokens.
template <class Leaf, class Logical>
void post_order(const Node* nodes, int i, int internal, Leaf& emit_leaf, Logical& emit_logical) {
  if (i >= internal) {
    emit_leaf(nodes[i]);
    return;
  }
  post_order(nodes, 2 * i + 1, internal, emit_leaf, emit_logical);
  post_order(nodes, 2 * i + 2, internal, emit_leaf, emit_logical);
  emit_logical(nodes[i]);
}

template <class Leaf>
TokenStreams encode(const Population& pop, Leaf emit_leaf_into) {
  TokenStreams s;
  s.offsets.reserve(static_cast<std::size_t>(pop.trees) + 1);
  s.offsets.push_back(0);
  const int internal = pop.leaves_per_tree() - 1;
  for (int t = 0; t < pop.trees; ++t) {
    auto leaf = [&](const Node& n) { emit_leaf_into(s.tokens, n); };
    auto logical = [&](const Node& n) { s.tokens.push_back(rules::make_word(rules::opcode_of(n.word))); };
    post_order(pop.tree(t), 0, internal, leaf, logical);
    s.tokens.push_back(rules::make_word(rules::kEnd));
    const std::size_t len = s.tokens.size() - s.offsets.back();
    if (len > s.max_tokens) s.max_tokens = len;
    GPUDM_REQUIRE(s.tokens.size() < 0xFFFFFFFFull, "subtree: population too large for 32-bit token offsets");
    s.offsets.push_back(static_cast<std::uint32_t>(s.tokens.size()));
  }
  return s;
}

}  // namespace

TokenStreams encode_postfix(const Population& pop) {
  return encode(pop, [](std::vector<std::uint32_t>& out, const Node& n) {
    const std::uint32_t op = rules::opcode_of(n.word);
    out.push_back(kPushConst);
    out.push_back(rules::float_as_word(n.a));
    if (rules::operand_count(op) == 2) {
      out.push_back(kPushConst);
      out.push_back(rules::float_as_word(n.b));
    }
    out.push_back(rules::make_word(kPushAttr, rules::attribute_of(n.word)));
    out.push_back(rules::make_word(op));
  });
}

TokenStreams encode_mixed(const Population& pop) {
  return encode(pop, [](std::vector<std::uint32_t>& out, const Node& n) {
    const std::uint32_t op = rules::opcode_of(n.word);
    out.push_back(n.word);
    out.push_back(rules::float_as_word(n.a));
    if (rules::operand_count(op) == 2) out.push_back(rules::float_as_word(n.b));
  });
}

std::vector<Node> encode_levels(const Population& pop) {
  const int per_tree = pop.nodes_per_tree();
  std::vector<Node> out(pop.nodes.size());
  for (int t = 0; t < pop.trees; ++t) {
    const Node* heap = pop.tree(t);
    Node* lv = out.data() + static_cast<std::size_t>(t) * per_tree;
    for (int k = 0; k <= pop.depth; ++k) {
      const int first_heap = (1 << k) - 1;
      for (int p = 0; p < (1 << k); ++p) lv[level_offset(pop.depth, k) + p] = heap[first_heap + p];
    }
  }
  return out;
}

BitLeaf canonical_leaf(const Node& n) {
  constexpr float inf = std::numeric_limits<float>::infinity();
  const std::uint32_t op = rules::opcode_of(n.word);
  BitLeaf l;
  l.attr = rules::attribute_of(n.word);
  const float a = n.a;
  switch (op) {
    case rules::kGt:
      if (a == inf) { l.lo = inf; l.hi = -inf; }  // x > +inf never holds
      else { l.lo = std::nextafter(a, inf); l.hi = inf; }
      break;
    case rules::kGe: l.lo = a; l.hi = inf; break;
    case rules::kLt:
      if (a == -inf) { l.lo = inf; l.hi = -inf; }
      else { l.lo = -inf; l.hi = std::nextafter(a, -inf); }
      break;
    case rules::kLe: l.lo = -inf; l.hi = a; break;
    case rules::kEq: l.lo = a; l.hi = a; break;
    case rules::kNe:
      if (a != a) { l.lo = -inf; l.hi = inf; }  // x != NaN holds for every non-missing x
      else { l.lo = a; l.hi = a; l.attr |= kBitOut; }
      break;
    case rules::kIn: l.lo = a; l.hi = n.b; break;
    case rules::kOut: l.lo = a; l.hi = n.b; l.attr |= kBitOut; break;
    default: throw Error("subtree: canonical_leaf of a non-comparison opcode " + std::to_string(op));
  }
  return l;
}

BitTrees encode_bits(const Population& pop) {
  GPUDM_REQUIRE(pop.depth <= kMaxBitDepth, "subtree: interpreter 'best' handles trees up to depth " +
                                               std::to_string(kMaxBitDepth) + " (" + std::to_string(nodes_for_depth(kMaxBitDepth)) +
                                               " nodes); got depth " + std::to_string(pop.depth) +
                                               " — use 'subtree', 'mixed' or 'postfix'");
  BitTrees b;
  b.depth = pop.depth;
  const int leaves = pop.leaves_per_tree();
  b.leaves.resize(static_cast<std::size_t>(pop.trees) * leaves);
  b.and_masks.assign(static_cast<std::size_t>(pop.trees), 0);
  b.neg_masks.assign(static_cast<std::size_t>(pop.trees), 0);
  for (int t = 0; t < pop.trees; ++t) {
    const Node* heap = pop.tree(t);
    for (int s = 0; s < leaves; ++s) {
      const int p = static_cast<int>(bit_reverse(static_cast<std::uint32_t>(s), pop.depth));
      const BitLeaf l = canonical_leaf(heap[leaves - 1 + p]);
      b.leaves[static_cast<std::size_t>(t) * leaves + s] = l;
      if (l.attr & kBitOut) b.neg_masks[t] |= 1ull << s;
    }
    std::uint64_t mask = 0;
    for (int k = 0; k < pop.depth; ++k)
      for (int s = 0; s < (1 << k); ++s) {
        const int p = static_cast<int>(bit_reverse(static_cast<std::uint32_t>(s), k));
        if (rules::opcode_of(heap[(1 << k) - 1 + p].word) == rules::kAnd) mask |= 1ull << ((1 << k) - 1 + s);
      }
    b.and_masks[t] = mask;
  }
  return b;
}

}  // namespace gpudm::subtree
