#pragma once
// The four encodings of a population that the interpreters read, and the per-instance /
// per-node functions they share (GPUDM_HD: the CPU backends and the CUDA kernels call the
// same code, so they cannot disagree). Included by CUDA code: C++17.
//
//   postfix  pure postfix, the poster's first stack interpreter: a comparison is three or four
//            tokens (push constant(s), push attribute value, compare), so a tree of n
//            comparisons and n-1 logical nodes costs 4n-1 pushes (23 push / 22 pop for the
//            poster's 11-node example). Float stack.
//   mixed    the rule encoding of algorithms/rules/opcodes.hpp: comparisons prefix (evaluated
//            directly), logical operators postfix: 2n-1 pushes (11 push / 10 pop). Bit stack.
//   levels   the parallel subtree interpreter's layout: nodes level by level from the leaves up
//            to the root, 3 words per node (opcode|attribute, a, b); the node in slot y of a
//            level combines slots 2y and 2y+1 of the level below.
//   bits     ours: the 2^d leaves as canonical intervals in bit-reversed order so that the
//            children of slot s of a level with n slots are slots s and s + n of the level
//            below; the leaf results of one instance are one 64-bit word and every level is
//            reduced with a handful of word operations (AND/OR of its two halves under the
//            level's AND mask). No stack, no shared memory, no synchronisation; depth <= 6.
#include <cstddef>
#include <cstdint>
#include <vector>

#include "algorithms/core/hd.hpp"
#include "algorithms/rules/opcodes.hpp"
#include "algorithms/subtree/tree.hpp"

namespace gpudm::subtree {

// ---------------------------------------------------------------- pure postfix tokens
// Token words: opcode in bits 0-7. kPushConst is followed by one word holding the float;
// kPushAttr carries the attribute in bits 8-31 and pushes the instance's value. Comparison
// opcodes (rules::kGt..kOut) pop x, then hi (IN/OUT only), then a; logical opcodes pop their
// operands; rules::kEnd ends the tree.
enum PostfixOp : std::uint32_t { kPushConst = 0x20, kPushAttr = 0x21 };
// Deepest float stack a full tree of depth <= kMaxDepth needs (depth pending results + lo, hi, x).
inline constexpr int kPostfixStack = kMaxDepth + 4;

template <class ValueOf>
GPUDM_HD bool postfix_evaluate(const std::uint32_t* tokens, ValueOf value) {
  float st[kPostfixStack];
  int sp = 0;
  for (int i = 0;;) {
    const std::uint32_t w = tokens[i];
    const std::uint32_t op = rules::opcode_of(w);
    if (op == rules::kEnd) break;
    if (op == kPushConst) {
      st[sp++] = rules::word_as_float(tokens[i + 1]);
      i += 2;
    } else if (op == kPushAttr) {
      st[sp++] = value(rules::attribute_of(w));
      ++i;
    } else if (rules::is_comparison(op)) {
      const float x = st[--sp];
      const float b = rules::operand_count(op) == 2 ? st[--sp] : 0.0f;
      const float a = st[--sp];
      st[sp++] = rules::compare(op, x, a, b) ? 1.0f : 0.0f;
      ++i;
    } else if (op == rules::kNot) {
      st[sp - 1] = st[sp - 1] != 0.0f ? 0.0f : 1.0f;
      ++i;
    } else {
      const bool r = st[--sp] != 0.0f;
      const bool l = st[--sp] != 0.0f;
      st[sp++] = (op == rules::kAnd ? (l && r) : (l || r)) ? 1.0f : 0.0f;
      ++i;
    }
  }
  return sp > 0 ? st[sp - 1] != 0.0f : true;
}

// ---------------------------------------------------------------- level order
// Offset (in nodes) of level k (root = level 0) inside a tree's level-order array, whose
// first level is the leaves (level depth) and last the root.
GPUDM_HD int level_offset(int depth, int k) { return (2 << depth) - (2 << k); }

GPUDM_HD bool level_leaf(const Node& n, float x) {
  return rules::compare(rules::opcode_of(n.word), x, n.a, n.b);
}
GPUDM_HD bool level_combine(std::uint32_t word, bool l, bool r) {
  return rules::opcode_of(word) == rules::kAnd ? (l && r) : (l || r);
}

// ---------------------------------------------------------------- bit level
// A leaf as a canonical interval: result = x in [lo, hi] (IN form) or x < lo || x > hi (OUT
// form, flag kBitOut in `attr`); both are false for NaN, as rules::compare. > a becomes
// [nextafter(a, +inf), +inf], < a becomes [-inf, nextafter(a, -inf)], = a is [a, a], != a is
// OUT [a, a] (!= NaN is [-inf, +inf]): exact for every float, checked against rules::compare by the tests.
struct alignas(16) BitLeaf {  // 16 bytes: one 128-bit load per leaf in the kernel
  std::uint32_t attr = 0;  // attribute index | kBitOut
  float lo = 0.0f;
  float hi = 0.0f;
  std::uint32_t unused = 0;
};
inline constexpr std::uint32_t kBitOut = 0x80000000u;

GPUDM_HD bool bit_leaf(std::uint32_t out_flag, float lo, float hi, float x) {
  return out_flag ? (x < lo || x > hi) : (x >= lo && x <= hi);
}
// Without NaN in the data, OUT [lo, hi] is exactly NOT IN [lo, hi]: the interpreter tests every
// leaf in IN form and flips the OUT leaves of a row with one XOR by the tree's negate mask.
GPUDM_HD bool bit_leaf_in(float lo, float hi, float x) { return x >= lo && x <= hi; }

// Reduces the 2^depth leaf bits (slot order) to the root bit. `and_mask` bit 2^k - 1 + s
// says that slot s of level k is AND (else OR).
GPUDM_HD bool bit_reduce(std::uint64_t bits, std::uint64_t and_mask, int depth) {
  for (int k = depth - 1; k >= 0; --k) {
    const int n = 1 << k;
    const std::uint64_t low = (n == 64) ? ~0ull : ((1ull << n) - 1);
    const std::uint64_t lo = bits & low;
    const std::uint64_t hi = bits >> n;
    const std::uint64_t m = (and_mask >> (n - 1)) & low;
    bits = (lo & hi & m) | ((lo | hi) & ~m);
  }
  return bits & 1ull;
}

GPUDM_HD std::uint32_t bit_reverse(std::uint32_t v, int bits) {
  std::uint32_t r = 0;
  for (int i = 0; i < bits; ++i) r |= ((v >> i) & 1u) << (bits - 1 - i);
  return r;
}

// ---------------------------------------------------------------- host-side encoders
// Token streams in CSR form: tree t's tokens are tokens[offsets[t] .. offsets[t+1]), ending
// with rules::kEnd.
struct TokenStreams {
  std::vector<std::uint32_t> tokens;
  std::vector<std::uint32_t> offsets;  // trees + 1 entries
  std::size_t max_tokens = 0;         // longest tree, END included
};

TokenStreams encode_postfix(const Population& pop);
TokenStreams encode_mixed(const Population& pop);
// Level order, tree-major: nodes_per_tree() nodes per tree.
std::vector<Node> encode_levels(const Population& pop);

struct BitTrees {
  int depth = 0;
  std::vector<BitLeaf> leaves;           // tree-major, leaves_per_tree() per tree, slot order
  std::vector<std::uint64_t> and_masks;  // one per tree
  std::vector<std::uint64_t> neg_masks;  // one per tree: bit s = leaf slot s is in OUT form
};
// Throws gpudm::Error when pop.depth > kMaxBitDepth.
BitTrees encode_bits(const Population& pop);
// The canonical interval of one comparison node (exposed for tests).
BitLeaf canonical_leaf(const Node& n);

}  // namespace gpudm::subtree
