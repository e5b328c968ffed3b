#pragma once
// The rule engine's CPU work, shared by the sequential and OpenMP backends (which differ only
// in how they distribute (chunk of rows, rule) tasks; OpenMP pragmas stay in backends/openmp/).
// A task interprets one rule on a chunk of kChunkBatches row batches with the batch interpreter
// (batch.hpp) and counts the covered rows of every class with one AND + popcount per class and
// mask word against the dataset's class bit masks.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <utility>
#include <vector>

#include "algorithms/core/dataset.hpp"
#include "algorithms/core/task_runner.hpp"
#include "algorithms/rules/batch.hpp"
#include "algorithms/rules/evaluator.hpp"

namespace gpudm::rules::cpu {

// Row batches per task: 16 x 256 = 4096 rows, so a task's column slices stay in L1/L2 while the
// rule runs and a 1M-row dataset gives hundreds of tasks per rule.
inline constexpr std::size_t kChunkBatches = 16;

// Per class, the rows of that class as bits (64 rows a word): built once per prepared dataset.
struct ClassBits {
  int classes = 0;
  std::size_t words = 0;  // ceil(rows / 64), rounded up to whole batches
  std::vector<std::uint64_t> bits;  // classes x words
  static ClassBits of(const Dataset& data);
  const std::uint64_t* of_class(int c) const { return bits.data() + static_cast<std::size_t>(c) * words; }
};

// What every CPU backend holds after prepare().
struct Prepared {
  const Dataset* data = nullptr;
  Schema schema;
  ClassBits class_bits;
  std::vector<std::uint64_t> class_rows;
  std::size_t batches = 0;  // ceil(rows / kBatchRows)
  std::size_t chunks = 0;   // ceil(batches / kChunkBatches)
  void prepare(const Dataset& d);
};

// Rule r on the batches of chunk `chunk`: adds its covered rows per class to `counts`
// (classes entries) and, when `coverage` is not null, writes the rule's coverage words of the
// chunk (coverage = the rule's first word, RuleCounts layout).
void count_chunk(const Prepared& p, const RulePopulation& pop, std::size_t r, std::size_t chunk, std::uint64_t* counts,
                 std::uint32_t* coverage);

// The begin of an evaluation: checks the population, shapes `out` (counts zeroed) and fills its
// gpops; returns the validation result.
PopulationInfo begin_evaluation(const Prepared& p, const RulePopulation& pop, RuleCounts& out, Want want);

// The RuleEvaluator of the sequential and OpenMP backends: the (chunk, rule) tasks, chunk-major
// (a worker's consecutive tasks share a chunk's column slices; one chunk: parallel over rules),
// on a TaskRunner; each worker counts into its own array, summed in worker order afterwards
// (integer sums: the counts equal for any runner and thread count).
class CpuRuleEvaluator : public RuleEvaluator {
 public:
  nlohmann::ordered_json describe() const override { return {{"threads", tasks_->threads()}}; }
  void prepare(const Dataset& data) override { prep_.prepare(data); }
  void evaluate(const RulePopulation& pop, RuleCounts& out, PhaseTimer& t, Want want) override;

 protected:
  explicit CpuRuleEvaluator(std::unique_ptr<TaskRunner> tasks) : tasks_(std::move(tasks)) {}
  TaskRunner& tasks() { return *tasks_; }

 private:
  std::unique_ptr<TaskRunner> tasks_;
  Prepared prep_;
  std::vector<std::uint64_t> sums_;
};

}  // namespace gpudm::rules::cpu
