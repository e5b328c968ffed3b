#pragma once
// The CPU backends' rule-set evaluation on the shared rule engine (algorithms/rules): the
// sequential and OpenMP pittsburgh backends are this class over the engine backend of the same
// kind, differing only in how the decision-list tasks are spread (OpenMP pragmas stay in
// backends/openmp/). The paper's four steps:
//   coverage        one engine evaluation of every rule of a batch of individuals, with the
//                   covered rows as bits (Want::counts_and_coverage);
//   rule_fitness    confusion[r] = counts.confusion(r, consequent[r]) and sensitivity x
//                   specificity (the engine counts covered rows per class);
//   classification  the decision list over the coverage bits, 32 rows a word: per word the
//                   undecided rows start as every row, a rule decides the undecided rows it
//                   covers (correct where the row's class is its consequent), the default class
//                   the rest; each task counts its correct rows with popcounts in the same pass;
//   ruleset_fitness the tasks' counts summed per individual, accuracy = correct / rows.
// Batches of individuals keep the coverage bits under kCoverageBytes.
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include "algorithms/core/task_runner.hpp"
#include "algorithms/pittsburgh/evaluator.hpp"
#include "algorithms/rules/evaluator.hpp"

namespace gpudm::pittsburgh {

class EngineRuleSetEvaluator : public RuleSetEvaluator {
 public:
  static constexpr std::size_t kCoverageBytes = 256u << 20;  // coverage bits of one batch
  static constexpr std::size_t kTaskWords = 256;             // decision-list task: 8,192 rows of one individual

  void prepare(const Dataset& data) override;
  void evaluate(const Population& pop, EvaluationResult& res, PhaseTimer& timer) override;
  // The rule engine's own account (its threads; across ranks the combine step's calls, bytes and
  // seconds).
  nlohmann::ordered_json describe() const override { return engine_->describe(); }
  bool splits_rows_over_ranks() const override { return true; }  // (its engine is rules::across_ranks)

 protected:
  // The decision-list tasks run on `tasks` (inline for sequential, OpenMP threads for openmp).
  EngineRuleSetEvaluator(std::unique_ptr<rules::RuleEvaluator> engine, std::unique_ptr<TaskRunner> tasks);
  rules::RuleEvaluator& engine() { return *engine_; }
  TaskRunner& tasks() { return *tasks_; }
  const TaskRunner& tasks() const { return *tasks_; }

 private:
  // Correct rows of individual `ind` (batch-local rules from `first`) over coverage words [w0, w1).
  std::uint32_t correct_words(const FlatPopulation& f, std::size_t ind, std::size_t first, std::size_t w0,
                              std::size_t w1) const;

  std::unique_ptr<rules::RuleEvaluator> engine_;
  std::unique_ptr<TaskRunner> tasks_;
  const Dataset* data_ = nullptr;
  rules::Schema schema_;
  bool sharded_ = false;                    // the engine is split over MPI ranks
  std::size_t row0_ = 0, local_rows_ = 0;  // the rows the decision list covers (across ranks: this rank's)
  std::size_t words_ = 0;                  // 32-row words per rule (of those rows)
  std::vector<std::uint32_t> class_words_; // classes x words_: rows of each class as bits
  rules::RulePopulation batch_;
  rules::RuleCounts counts_;
  std::vector<std::uint32_t> partial_;
};

}  // namespace gpudm::pittsburgh
