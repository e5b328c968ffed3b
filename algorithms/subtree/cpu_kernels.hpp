#pragma once
// CPU interpretation of one tree on one batch of rows, for every strategy; shared by the
// sequential and OpenMP backends (which differ only in how they distribute (tree, batch)
// tasks). Operon-style: each node is applied to a whole batch of rows before the next node
// ("node-major" over kCpuBatchRows rows), so the stack holds row buffers, not scalars.
#include <cstddef>
#include <cstdint>
#include <vector>

#include "algorithms/core/dataset.hpp"
#include "algorithms/subtree/encoding.hpp"
#include "algorithms/subtree/interpreter.hpp"

namespace gpudm::subtree {

inline constexpr std::size_t kCpuBatchRows = 256;  // a multiple of 64 (whole coverage words)

// The encoded population a CPU backend interprets.
struct CpuPlan {
  Strategy strategy = Strategy::mixed;
  int depth = 0;
  int trees = 0;
  TokenStreams tokens;      // postfix or mixed
  std::vector<Node> levels; // subtree
  BitTrees bits;            // best
  bool data_has_nan = true; // best: per-leaf OUT test (true) or IN test + negate mask (false)
};
// `data_has_nan`: features_have_nan() of the dataset the plan will run on.
CpuPlan make_cpu_plan(const Population& pop, Strategy strategy, bool data_has_nan = true);

// Evaluates tree t on rows [begin, end) of `data` (begin a multiple of kCpuBatchRows,
// end - begin <= kCpuBatchRows) and writes coverage words begin/32 .. of `tree_words`.
void cpu_evaluate_batch(const CpuPlan& plan, const Dataset& data, int t, std::size_t begin, std::size_t end,
                        std::uint32_t* tree_words);

}  // namespace gpudm::subtree
