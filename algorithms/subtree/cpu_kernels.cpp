#include "algorithms/subtree/cpu_kernels.hpp"

#include <algorithm>
#include <cstring>

#include "algorithms/core/error.hpp"
#include "algorithms/rules/batch.hpp"

namespace gpudm::subtree {

namespace {

constexpr std::size_t kWords = kCpuBatchRows / 64;

static_assert(kCpuBatchRows == rules::kBatchRows, "the mixed interpreter is the rule engine's batch interpreter");

void store(const std::uint64_t* m, std::size_t begin, std::size_t n, std::uint32_t* tree_words) {
  std::uint32_t* dst = tree_words + begin / 32;
  const std::size_t words32 = (n + 31) / 32;
  for (std::size_t i = 0; i < words32; ++i) {
    std::uint32_t v = static_cast<std::uint32_t>(m[i / 2] >> (32 * (i % 2)));
    const std::size_t valid = std::min<std::size_t>(32, n - i * 32);
    if (valid < 32) v &= (1u << valid) - 1u;
    dst[i] = v;
  }
}

// Mixed prefix/postfix: the rule engine's batch interpreter (algorithms/rules/batch.hpp):
// comparisons are evaluated directly into a row mask and pushed; AND/OR/NOT pop masks.
void batch_mixed(const std::uint32_t* tok, const Dataset& data, std::size_t begin, std::size_t n, std::uint64_t* result) {
  rules::evaluate_batch(tok, data, begin, n, result);
}

// Pure postfix: a stack of float row buffers (constants and attribute values are pushed as
// buffers, comparisons and logical nodes produce 0/1 buffers), as a postfix GP interpreter.
void batch_postfix(const std::uint32_t* tok, const Dataset& data, std::size_t begin, std::size_t n, std::uint64_t* result) {
  static thread_local std::vector<float> storage(kPostfixStack * kCpuBatchRows);
  float* st = storage.data();
  auto buf = [&](int k) { return st + static_cast<std::size_t>(k) * kCpuBatchRows; };
  int sp = 0;
  for (int i = 0;;) {
    const std::uint32_t w = tok[i];
    const std::uint32_t op = rules::opcode_of(w);
    if (op == rules::kEnd) break;
    if (op == kPushConst) {
      std::fill(buf(sp), buf(sp) + n, rules::word_as_float(tok[i + 1]));
      ++sp;
      i += 2;
    } else if (op == kPushAttr) {
      std::memcpy(buf(sp), data.column(rules::attribute_of(w)) + begin, n * sizeof(float));
      ++sp;
      ++i;
    } else if (rules::is_comparison(op)) {
      const float* x = buf(--sp);
      const float* hi = rules::operand_count(op) == 2 ? buf(--sp) : nullptr;
      float* a = buf(--sp);
      for (std::size_t j = 0; j < n; ++j) a[j] = rules::compare(op, x[j], a[j], hi ? hi[j] : 0.0f) ? 1.0f : 0.0f;
      ++sp;
      ++i;
    } else if (op == rules::kNot) {
      float* v = buf(sp - 1);
      for (std::size_t j = 0; j < n; ++j) v[j] = v[j] != 0.0f ? 0.0f : 1.0f;
      ++i;
    } else {
      const float* r = buf(--sp);
      float* l = buf(sp - 1);
      if (op == rules::kAnd)
        for (std::size_t j = 0; j < n; ++j) l[j] = (l[j] != 0.0f && r[j] != 0.0f) ? 1.0f : 0.0f;
      else
        for (std::size_t j = 0; j < n; ++j) l[j] = (l[j] != 0.0f || r[j] != 0.0f) ? 1.0f : 0.0f;
      ++i;
    }
  }
  const float* top = buf(sp - 1);
  for (std::size_t k = 0; k < kWords; ++k) result[k] = 0;
  for (std::size_t j = 0; j < n; ++j) result[j / 64] |= static_cast<std::uint64_t>(top[j] != 0.0f) << (j % 64);
}

// Level-synchronous emulation of the parallel subtree interpreter: all leaves of the level
// (level_leaf per row), then each level combines slots 2y, 2y+1 into slot y (level_combine),
// ping-ponging between two slot arrays as the kernel does in shared memory.
void batch_subtree(const Node* lv, int depth, const Dataset& data, std::size_t begin, std::size_t n, std::uint64_t* result) {
  const int leaves = leaves_for_depth(depth);
  static thread_local std::vector<std::uint8_t> ping, pong;
  ping.assign(static_cast<std::size_t>(leaves) * kCpuBatchRows, 0);
  pong.assign(static_cast<std::size_t>(leaves) * kCpuBatchRows, 0);
  std::uint8_t* src = ping.data();
  std::uint8_t* dst = pong.data();
  for (int y = 0; y < leaves; ++y) {
    const Node& node = lv[level_offset(depth, depth) + y];
    const float* x = data.column(rules::attribute_of(node.word)) + begin;
    for (std::size_t j = 0; j < n; ++j) src[y * kCpuBatchRows + j] = level_leaf(node, x[j]);
  }
  for (int k = depth - 1; k >= 0; --k) {
    for (int y = 0; y < (1 << k); ++y) {
      const std::uint32_t word = lv[level_offset(depth, k) + y].word;
      const std::uint8_t* l = src + static_cast<std::size_t>(2 * y) * kCpuBatchRows;
      const std::uint8_t* r = src + static_cast<std::size_t>(2 * y + 1) * kCpuBatchRows;
      for (std::size_t j = 0; j < n; ++j) dst[y * kCpuBatchRows + j] = level_combine(word, l[j], r[j]);
    }
    std::swap(src, dst);
  }
  for (std::size_t k = 0; k < kWords; ++k) result[k] = 0;
  for (std::size_t j = 0; j < n; ++j) result[j / 64] |= static_cast<std::uint64_t>(src[j] != 0) << (j % 64);
}

// Our bit-level interpreter, row by row with the kernel's functions (bit_leaf, bit_reduce).
// Two leaf forms as the kernel: with NaN in the data each leaf tests its own form (bit_leaf);
// without, every leaf is tested in IN form and OUT leaves are flipped by the negate mask.
void batch_bits(const BitLeaf* leaves, std::uint64_t and_mask, std::uint64_t neg_mask, bool has_nan, int depth,
                const Dataset& data, std::size_t begin, std::size_t n, std::uint64_t* result) {
  const int count = leaves_for_depth(depth);
  std::uint64_t bits[kCpuBatchRows] = {};
  for (int s = 0; s < count; ++s) {
    const BitLeaf& l = leaves[s];
    const float* x = data.column(l.attr & ~kBitOut) + begin;
    const std::uint32_t out = l.attr & kBitOut;
    if (has_nan)
      for (std::size_t j = 0; j < n; ++j) bits[j] |= static_cast<std::uint64_t>(bit_leaf(out, l.lo, l.hi, x[j])) << s;
    else
      for (std::size_t j = 0; j < n; ++j) bits[j] |= static_cast<std::uint64_t>(bit_leaf_in(l.lo, l.hi, x[j])) << s;
  }
  if (!has_nan)
    for (std::size_t j = 0; j < n; ++j) bits[j] ^= neg_mask;
  for (std::size_t k = 0; k < kWords; ++k) result[k] = 0;
  for (std::size_t j = 0; j < n; ++j) result[j / 64] |= static_cast<std::uint64_t>(bit_reduce(bits[j], and_mask, depth)) << (j % 64);
}

}  // namespace

CpuPlan make_cpu_plan(const Population& pop, Strategy strategy, bool data_has_nan) {
  CpuPlan p;
  p.data_has_nan = data_has_nan;
  strategy = resolve_strategy(strategy, Placement::host);
  p.strategy = strategy;
  p.depth = pop.depth;
  p.trees = pop.trees;
  switch (strategy) {
    case Strategy::postfix: p.tokens = encode_postfix(pop); break;
    case Strategy::mixed: p.tokens = encode_mixed(pop); break;
    case Strategy::subtree: p.levels = encode_levels(pop); break;
    case Strategy::best: p.bits = encode_bits(pop); break;
    case Strategy::automatic: break;  // resolved above
  }
  return p;
}

void cpu_evaluate_batch(const CpuPlan& plan, const Dataset& data, int t, std::size_t begin, std::size_t end,
                        std::uint32_t* tree_words) {
  const std::size_t n = end - begin;
  std::uint64_t m[kWords];
  switch (plan.strategy) {
    case Strategy::postfix: batch_postfix(plan.tokens.tokens.data() + plan.tokens.offsets[t], data, begin, n, m); break;
    case Strategy::mixed: batch_mixed(plan.tokens.tokens.data() + plan.tokens.offsets[t], data, begin, n, m); break;
    case Strategy::subtree:
      batch_subtree(plan.levels.data() + static_cast<std::size_t>(t) * nodes_for_depth(plan.depth), plan.depth, data, begin, n, m);
      break;
    case Strategy::best:
      batch_bits(plan.bits.leaves.data() + static_cast<std::size_t>(t) * leaves_for_depth(plan.depth), plan.bits.and_masks[t],
                 plan.bits.neg_masks[t], plan.data_has_nan, plan.depth, data, begin, n, m);
      break;
    case Strategy::automatic: return;  // make_cpu_plan resolves it
  }
  store(m, begin, n, tree_words);
}

}  // namespace gpudm::subtree
