#pragma once
// TreeInterpreter: evaluates a whole population of full condition trees on a dataset in one
// batched call and returns each tree's coverage as a bit vector. Implemented by the
// sequential, OpenMP and CUDA backends (backends/register_subtree.cpp); CUDA-free.
//
// Coverage layout (identical on every backend): tree-major, words_per_tree = ceil(rows / 32)
// 32-bit words per tree; bit (r % 32) of word (r / 32) is 1 when the tree is true on row r.
// Bits of rows >= rows are 0. Included by CUDA code: C++17.
#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "algorithms/core/backend.hpp"
#include "algorithms/core/dataset.hpp"
#include "algorithms/core/phase_timer.hpp"
#include "algorithms/subtree/tree.hpp"

namespace gpudm::subtree {

struct Coverage {
  int trees = 0;
  std::size_t rows = 0;
  std::size_t words_per_tree = 0;
  std::vector<std::uint32_t> bits;

  // Shapes the coverage; new words are 0, words kept from an earlier evaluation of the same
  // shape are not cleared (every interpreter writes every word, and clearing hundreds of MB per
  // evaluation would be timed as interpretation).
  void reset(int n_trees, std::size_t n_rows) {
    trees = n_trees;
    rows = n_rows;
    words_per_tree = (n_rows + 31) / 32;
    bits.resize(static_cast<std::size_t>(n_trees) * words_per_tree, 0u);
  }
  const std::uint32_t* tree(int t) const { return bits.data() + static_cast<std::size_t>(t) * words_per_tree; }
  std::uint32_t* tree(int t) { return bits.data() + static_cast<std::size_t>(t) * words_per_tree; }
  bool covers(int t, std::size_t r) const { return (tree(t)[r / 32] >> (r % 32)) & 1u; }
  std::size_t covered(int t) const;  // rows covered by tree t
};

// Interpreter strategies. CPU backends run every strategy's encoding with the same
// per-instance code as the kernels (row batches, Operon-style); "automatic" resolves to "mixed"
// (the stack interpreter) on host backends and "best" on device backends (resolve_strategy).
enum class Strategy { automatic, postfix, mixed, subtree, best };
const char* to_string(Strategy s);
// The names configs use ("auto", "postfix", "mixed", "subtree", "best").
const std::vector<std::pair<std::string, Strategy>>& strategy_names();
Strategy resolve_strategy(Strategy s, Placement where);

struct InterpreterOptions {
  Strategy strategy = Strategy::automatic;
  int threads = 0;  // OpenMP threads; 0 = the OpenMP default
};

// The lifecycle of backend.hpp; describe() names the interpreter that ran ("interpreter") and,
// on the GPU, the launch shape.
class TreeInterpreter : public BackendOf<InterpreterOptions> {
 public:
  // Evaluates every tree of `pop` on every row of the prepared dataset into `out` (resized).
  // Phases (upload, interpret, download / encode, interpret) are added to `timer`.
  // `pop` must have been checked with validate_population against the prepared dataset.
  virtual void evaluate(const Population& pop, Coverage& out, PhaseTimer& timer) = 0;
};

// True when any feature value (padding excluded) is NaN: interpreters that exploit NaN-free
// data (the bit-level one) check this once per prepared dataset.
bool features_have_nan(const Dataset& data);

// The oracle: evaluates every tree on rows [0, rows) one instance at a time through
// rules::evaluate on the mixed encoding (the shared opcode header), independent of the batched
// code paths. rows = 0 means all rows.
Coverage reference_coverage(const Population& pop, const Dataset& data, std::size_t rows = 0);

// First difference between two coverages over their common rows, as "tree t, row r: a vs b",
// or "" when equal. Also reports shape mismatches.
std::string first_difference(const Coverage& a, const Coverage& b, std::size_t rows);

}  // namespace gpudm::subtree
