#include "algorithms/rules/batch.hpp"

#include <algorithm>
#include <cstring>

#include "algorithms/rules/opcodes.hpp"

namespace gpudm::rules {

namespace {

// Eight 0/1 bytes (little-endian) to eight bits: the multiply gathers byte i's low bit into
// bit 56 + i.
inline std::uint64_t pack8(const std::uint8_t* p) {
  std::uint64_t v;
  std::memcpy(&v, p, sizeof v);
  return (v * 0x0102040810204080ull) >> 56;
}

// Comparison of one column slice against constants into a bit mask; the opcode is a template
// argument so rules::compare folds to one or two comparisons per element. Comparing into bytes
// first lets the compiler vectorise the loop; the bytes are then packed 8 at a time.
template <std::uint32_t Op>
void compare_rows(const float* x, std::size_t n, float a, float b, std::uint64_t* out) {
  alignas(64) std::uint8_t t[kBatchRows];
  for (std::size_t j = 0; j < n; ++j) t[j] = static_cast<std::uint8_t>(compare(Op, x[j], a, b));
  for (std::size_t j = n; j < kBatchRows; ++j) t[j] = 0;
  for (std::size_t w = 0; w < kBatchWords; ++w) {
    std::uint64_t m = 0;
    for (std::size_t k = 0; k < 8; ++k) m |= pack8(t + w * 64 + k * 8) << (8 * k);
    out[w] = m;
  }
}

void compare_dispatch(std::uint32_t op, const float* x, std::size_t n, float a, float b, std::uint64_t* out) {
  switch (op) {
    case kGt: compare_rows<kGt>(x, n, a, b, out); break;
    case kGe: compare_rows<kGe>(x, n, a, b, out); break;
    case kLt: compare_rows<kLt>(x, n, a, b, out); break;
    case kLe: compare_rows<kLe>(x, n, a, b, out); break;
    case kEq: compare_rows<kEq>(x, n, a, b, out); break;
    case kNe: compare_rows<kNe>(x, n, a, b, out); break;
    case kIn: compare_rows<kIn>(x, n, a, b, out); break;
    case kOut: compare_rows<kOut>(x, n, a, b, out); break;
    default: std::fill(out, out + kBatchWords, 0ull);
  }
}

}  // namespace

void evaluate_batch(const std::uint32_t* tok, const Dataset& data, std::size_t begin, std::size_t n,
                    std::uint64_t* mask) {
  std::uint64_t stack[kMaxStack][kBatchWords];
  int sp = 0;
  for (int i = 0;;) {
    const std::uint32_t w = tok[i];
    const std::uint32_t op = opcode_of(w);
    if (op == kEnd) break;
    if (is_comparison(op)) {
      const float a = word_as_float(tok[i + 1]);
      const float b = operand_count(op) == 2 ? word_as_float(tok[i + 2]) : 0.0f;
      compare_dispatch(op, data.column(attribute_of(w)) + begin, n, a, b, stack[sp++]);
      i += 1 + operand_count(op);
    } else if (op == kNot) {
      for (std::size_t k = 0; k < kBatchWords; ++k) stack[sp - 1][k] = ~stack[sp - 1][k];
      ++i;
    } else {
      --sp;
      if (op == kAnd)
        for (std::size_t k = 0; k < kBatchWords; ++k) stack[sp - 1][k] &= stack[sp][k];
      else
        for (std::size_t k = 0; k < kBatchWords; ++k) stack[sp - 1][k] |= stack[sp][k];
      ++i;
    }
  }
  if (sp == 0) {  // empty antecedent: every row of the batch
    for (std::size_t k = 0; k < kBatchWords; ++k) {
      const std::size_t lo = k * 64;
      mask[k] = n >= lo + 64 ? ~0ull : (n > lo ? (1ull << (n - lo)) - 1 : 0ull);
    }
    return;
  }
  // NOT flips the rows past n too: clear them so callers can count without masking.
  for (std::size_t k = 0; k < kBatchWords; ++k) {
    const std::size_t lo = k * 64;
    const std::uint64_t valid = n >= lo + 64 ? ~0ull : (n > lo ? (1ull << (n - lo)) - 1 : 0ull);
    mask[k] = stack[sp - 1][k] & valid;
  }
}

}  // namespace gpudm::rules
