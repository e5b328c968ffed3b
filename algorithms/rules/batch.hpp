#pragma once
// The CPU batch interpreter of the token encoding (opcodes.hpp): one expression on a batch of
// up to kBatchRows rows, node-major (Operon-style: each token is applied to the whole batch
// before the next, so one decode serves kBatchRows comparisons and the comparison loop
// vectorises); the boolean stack holds row bit masks. Shared by every CPU backend that
// interprets rules: the rule engine (sequential, OpenMP) and the subtree family's "mixed"
// interpreter. Meaning of every opcode: rules::compare, so it cannot disagree with the kernels.
#include <cstddef>
#include <cstdint>

#include "algorithms/core/dataset.hpp"

namespace gpudm::rules {

inline constexpr std::size_t kBatchRows = 256;  // a multiple of 64 (whole mask words)
inline constexpr std::size_t kBatchWords = kBatchRows / 64;

// Evaluates the validated, END-terminated expression `tokens` on rows [begin, begin + n) of
// `data` (n <= kBatchRows) into `mask` (kBatchWords words, bit j = row begin + j; bits >= n
// are 0). An empty expression covers every row.
void evaluate_batch(const std::uint32_t* tokens, const Dataset& data, std::size_t begin, std::size_t n,
                    std::uint64_t* mask);

}  // namespace gpudm::rules
