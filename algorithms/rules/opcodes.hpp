#pragma once
// The rule token encoding shared by gp_rules, pittsburgh and subtree, and the meaning of each
// opcode, in one host/device header: every backend (sequential, OpenMP, CUDA) evaluates
// conditions through these functions, so they cannot disagree.
//
// Encoding (Cano et al.): an expression is a sequence of 32-bit words read left to right.
// Comparisons are prefix: an opcode word (opcode in bits 0-7, attribute index in bits 8-31)
// followed by its operand(s) as float bits (1 for > >= < <= = !=, 2 for IN/OUT: lo, hi).
// Logical operators are postfix single words (AND, OR pop two, NOT pops one) and END closes
// the expression. Evaluation needs a stack of booleans only; it is kept as bits of a 64-bit
// word, so the maximum depth is kMaxStack.
//
// Missing values (NaN): every comparison on a missing value is false (NOT of it is true).
// Nominal attributes store the value index as a float; = and != compare indexes exactly.
#include <cstdint>
#include <cstring>

#include "algorithms/core/hd.hpp"

namespace gpudm::rules {

enum Opcode : std::uint32_t {
  kEnd = 0,
  kGt = 1,   // x >  v
  kGe = 2,   // x >= v
  kLt = 3,   // x <  v
  kLe = 4,   // x <= v
  kEq = 5,   // x == v (nominal)
  kNe = 6,   // x != v (nominal)
  kIn = 7,   // lo <= x <= hi
  kOut = 8,  // x < lo or x > hi
  kAnd = 9,
  kOr = 10,
  kNot = 11,
  kOpcodeCount = 12
};

inline constexpr int kMaxStack = 64;
inline constexpr std::uint32_t kMaxAttribute = (1u << 24) - 1;

GPUDM_HD bool is_comparison(std::uint32_t op) { return op >= kGt && op <= kOut; }
GPUDM_HD bool is_logical(std::uint32_t op) { return op >= kAnd && op <= kNot; }
GPUDM_HD bool is_nominal_op(std::uint32_t op) { return op == kEq || op == kNe; }
// Operand words following a comparison opcode word.
GPUDM_HD int operand_count(std::uint32_t op) { return (op == kIn || op == kOut) ? 2 : (is_comparison(op) ? 1 : 0); }

GPUDM_HD std::uint32_t opcode_of(std::uint32_t word) { return word & 0xFFu; }
GPUDM_HD std::uint32_t attribute_of(std::uint32_t word) { return word >> 8; }
GPUDM_HD std::uint32_t make_word(std::uint32_t op, std::uint32_t attribute = 0) { return op | (attribute << 8); }

GPUDM_HD float word_as_float(std::uint32_t w) {
#if defined(__CUDA_ARCH__)
  return __uint_as_float(w);
#else
  float f;
  std::memcpy(&f, &w, sizeof f);
  return f;
#endif
}
GPUDM_HD std::uint32_t float_as_word(float f) {
#if defined(__CUDA_ARCH__)
  return __float_as_uint(f);
#else
  std::uint32_t w;
  std::memcpy(&w, &f, sizeof w);
  return w;
#endif
}

// The meaning of each comparison. `x != x` is the NaN (missing) test.
GPUDM_HD bool compare(std::uint32_t op, float x, float a, float b) {
  if (x != x) return false;
  switch (op) {
    case kGt: return x > a;
    case kGe: return x >= a;
    case kLt: return x < a;
    case kLe: return x <= a;
    case kEq: return x == a;
    case kNe: return x != a;
    case kIn: return x >= a && x <= b;
    case kOut: return x < a || x > b;
    default: return false;
  }
}

// Bit stack of booleans (top at bit `depth - 1`).
struct BitStack {
  std::uint64_t bits = 0;
  int depth = 0;
  GPUDM_HD void push(bool v) {
    bits = (bits & ~(1ull << depth)) | (static_cast<std::uint64_t>(v) << depth);
    ++depth;
  }
  GPUDM_HD bool pop() {
    --depth;
    return (bits >> depth) & 1ull;
  }
};

// Evaluates one expression starting at `tokens` on one instance; `value(attr)` returns the
// instance's value of attribute `attr`. The expression must have been validated
// (validate_expression): no bounds checks happen here, so kernels stay branch-light.
template <class ValueOf>
GPUDM_HD bool evaluate(const std::uint32_t* tokens, ValueOf value) {
  BitStack st;
  for (int i = 0;;) {
    const std::uint32_t w = tokens[i];
    const std::uint32_t op = opcode_of(w);
    if (op == kEnd) break;
    if (is_comparison(op)) {
      const float a = word_as_float(tokens[i + 1]);
      const float b = op == kIn || op == kOut ? word_as_float(tokens[i + 2]) : 0.0f;
      st.push(compare(op, value(attribute_of(w)), a, b));
      i += 1 + operand_count(op);
    } else if (op == kNot) {
      st.push(!st.pop());
      ++i;
    } else {
      const bool r = st.pop();
      const bool l = st.pop();
      st.push(op == kAnd ? (l && r) : (l || r));
      ++i;
    }
  }
  return st.depth > 0 ? st.pop() : true;  // an empty antecedent covers every instance
}

}  // namespace gpudm::rules
