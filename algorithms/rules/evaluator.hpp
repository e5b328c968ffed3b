#pragma once
// The rule engine: evaluates a whole population of rule antecedents (population.hpp) on a
// classification dataset in one batched call and returns, per rule, the number of covered
// instances of every class (and, on request, the covered rows as bits). tp/fp/tn/fn follow
// for any consequent (RuleCounts::confusion), so one evaluation serves a fixed-consequent
// fitness (Falco, Tan), every class at once (Bojarczuk) and rule-set steps built on top
// (pittsburgh's coverage and rule fitness). Integer results are identical on every backend.
//
// Backends (backends/register_rules.cpp): sequential (the oracle), openmp, cuda with paths
//   "faithful": the GP paper's design (Cano, Zafra, Ventura 2012, Sec. 5.2): the match kernel
//     over a 2D grid (population x instance blocks) with the individuals in constant memory and
//     the transposed, padded data, writing a results array of instancesAligned x population;
//     then the separate reduction kernel (128 threads, two-level) counting per class;
//   "fast" (default): one fused kernel over the whole population per launch: data tiles in
//     shared memory, warp-uniform interpretation of several rows per thread, coverage by warp
//     ballot and counts by popcount per class; two rows per 32-bit word as ranked fp16 codes
//     (ranked.hpp) when every column has at most 30,720 distinct values (backends/cuda/rules/);
//   either path split over several devices (EngineOptions::devices / device_ids).
// CUDA-free; included by CUDA code (C++17).
#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "algorithms/core/backend.hpp"
#include "algorithms/core/phase_timer.hpp"
#include "algorithms/rules/confusion.hpp"
#include "algorithms/rules/population.hpp"

namespace gpudm::rules {

// The registry family of the engine's backends (register_rules also registers them under the
// families that evaluate through the engine, see backends/register_rules.cpp).
inline constexpr const char* kEngineFamily = "rules";

// One sentence, written into every results JSON of a family using the engine; the same
// definition as pittsburgh's kGpopsDefinition (terminals count).
inline constexpr const char* kGpopsDefinition =
    "GPops = sum over rules of primitives x instances; a comparison counts operator, attribute and "
    "value(s) (3, IN/OUT 4: terminals count), AND/OR/NOT count 1, END 0 (the paper's primitives)";

enum class Path { faithful, fast };
enum class Features { automatic, f32, f16x2 };
const std::vector<std::pair<std::string, Path>>& path_names();          // "faithful", "fast"
const std::vector<std::pair<std::string, Features>>& features_names();  // "auto", "f32", "f16x2"
const char* to_string(Path p);
const char* to_string(Features f);

// Backend options; each backend reads the ones that apply to it.
struct EngineOptions {
  int threads = 0;                        // OpenMP: 0 = the OpenMP default
  Path path = Path::fast;                 // CUDA
  Features features = Features::automatic;  // CUDA fast path: two rows per word as ranked fp16 codes when possible
  int rows_per_thread = 0;                // CUDA fast path: 0 = by the tile policy, else 1, 2 or 4
  // CUDA: the population is cut into contiguous slices of about equal words, one per device
  // entry, each evaluated on its own host thread (the GP paper's multi-GPU mode): `devices` = N
  // uses devices 0 .. N-1; `device_ids` names them instead and may repeat one ([0, 0]: the
  // two-slice code path on one GPU, for tests). Counts do not depend on the split.
  int devices = 1;
  std::vector<int> device_ids;
  // CUDA: host threads of the coverage copy out of the pinned download (the caller's included;
  // 0 = up to 8 of the machine's, 1 = one memcpy). Tuning only: counts and coverage are the same.
  int copy_threads = 0;
};

// What an evaluation returns. Counts are of the rules in population order.
struct RuleCounts {
  std::size_t rules = 0;
  int classes = 0;
  std::uint64_t rows = 0;
  std::vector<std::uint32_t> covered;     // rules x classes: rows of class c covered by rule r
  std::vector<std::uint64_t> class_rows;  // rows of each class in the dataset
  // Covered rows as bits, when requested: rule-major, words_per_rule = ceil(rows / 32) 32-bit
  // words per rule, bit (i % 32) of word (i / 32) = row i; bits past `rows` are 0.
  std::size_t words_per_rule = 0;
  std::vector<std::uint32_t> coverage;
  std::uint64_t gpops = 0;  // of this evaluation (kGpopsDefinition)

  std::uint32_t covered_of(std::size_t r, int c) const { return covered[r * static_cast<std::size_t>(classes) + static_cast<std::size_t>(c)]; }
  std::uint64_t covered_total(std::size_t r) const;
  // The rule's confusion matrix when its consequent is `consequent`.
  ConfusionMatrix confusion(std::size_t r, int consequent) const;
  const std::uint32_t* coverage_of(std::size_t r) const { return coverage.data() + r * words_per_rule; }
  bool covers(std::size_t r, std::size_t row) const { return (coverage_of(r)[row / 32] >> (row % 32)) & 1u; }
  bool has_coverage() const { return !coverage.empty() || (rules > 0 && rows == 0); }
  // Shapes for `rules` rules and zeroes the counts (coverage sized, not cleared: every backend
  // writes every word).
  void reset(std::size_t rules, std::uint64_t rows, const std::vector<std::uint64_t>& class_rows, bool coverage);
  // FNV-1a over counts (and coverage when present): equal across backends.
  std::string checksum() const;
};

enum class Want { counts, counts_and_coverage };

// The lifecycle of backend.hpp. prepare() keeps a reference to the dataset, which must be a
// classification dataset and outlive the evaluator's use of it.
class RuleEvaluator : public BackendOf<EngineOptions> {
 public:
  // Validates `pop` against the prepared dataset (check_population: throws gpudm::Error naming
  // the rule) and evaluates every rule on every row. Phases (encode, upload, match, reduction,
  // download / count) are added to `timer`.
  virtual void evaluate(const RulePopulation& pop, RuleCounts& out, PhaseTimer& timer, Want want = Want::counts) = 0;
};

// The oracle of the tests: every rule on every row one instance at a time through
// rules::evaluate (the opcode header), independent of every batched code path.
RuleCounts reference_counts(const RulePopulation& pop, const Dataset& data, Want want = Want::counts);

// First difference between two results ("rule 3 class 1: 17 vs 18", "coverage rule 2 row 40"),
// or "" when equal.
std::string first_difference(const RuleCounts& a, const RuleCounts& b);

}  // namespace gpudm::rules
