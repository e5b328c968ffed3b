#pragma once
// RuleSetEvaluator: the interface every Pittsburgh backend implements (CUDA-free).
// prepare() once per dataset (uploads, layouts), then evaluate() batched over a whole
// population: every rule's confusion matrix (the paper's rule coverage + rule fitness
// kernels) and every individual's decision-list accuracy (rule-set classification + rule-set
// fitness kernels). All backends give identical integer results.
//
// Phases recorded in EvaluationResult::phases (names follow the paper): coverage, rule_fitness,
// classification, ruleset_fitness, and transfers (GPU). CPU phases use the host clock, GPU
// kernels the device clock (CUDA events). The CUDA fast path fuses the first three into one
// kernel and records it as "coverage_fused" (see backends/cuda/pittsburgh/).
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "algorithms/core/dataset.hpp"
#include "algorithms/core/phase_timer.hpp"
#include "algorithms/pittsburgh/population.hpp"
#include "algorithms/rules/confusion.hpp"

namespace gpudm::pittsburgh {

inline constexpr const char* kFamilyName = "pittsburgh";

// One sentence, written into every results JSON.
inline constexpr const char* kGpopsDefinition =
    "GPops = sum over rules of primitives x instances; a comparison counts operator, attribute and "
    "value(s) (3, IN/OUT 4: terminals count), AND/OR/NOT count 1, END 0 (the paper's primitives)";

struct EvaluationResult {
  std::vector<rules::ConfusionMatrix> rule_confusion;  // per rule, population order
  std::vector<float> rule_fitness;                     // sensitivity x specificity, per rule
  std::vector<std::uint32_t> individual_rule_begin;    // CSR: rules of individual i
  std::vector<std::uint32_t> correct;                  // per individual
  std::vector<double> accuracy;                        // per individual: correct / rows
  std::uint64_t rows = 0;
  std::uint64_t gpops = 0;  // of this evaluation (kGpopsDefinition)
  PhaseTimer phases;        // of the last evaluate() call

  const rules::ConfusionMatrix& rule(std::size_t individual, std::size_t r) const {
    return rule_confusion.at(individual_rule_begin.at(individual) + r);
  }
  // Resizes for `f` and zeroes every count.
  void reset(const FlatPopulation& f, std::uint64_t rows);
  // The same from the rules' CSR offsets alone (gpops left 0 for the caller): a multi-device
  // evaluation sizes the result before its slices are flattened.
  void reset_counts(std::vector<std::uint32_t> individual_rule_begin, std::uint64_t rows);
  // Fills rule_fitness and accuracy from the counts.
  void finish();
  // FNV-1a over the confusion matrices and correct counts: equal across backends.
  std::string checksum() const;
};

// Backend options (ignored where they do not apply).
struct EvaluatorOptions {
  int threads = 0;             // OpenMP: 0 = all
  std::string path = "fast";   // CUDA: "faithful" (the paper's four kernels) | "fast"
  int devices = 1;             // CUDA: population split over this many GPUs
  // CUDA fast path: "auto" (two rows per word as fp16 when every feature value is exact in
  // fp16, else f32) | "f32" | "f16x2" (error when the data does not allow it)
  std::string features = "auto";
};

class RuleSetEvaluator {
 public:
  virtual ~RuleSetEvaluator() = default;
  virtual std::string backend() const = 0;
  virtual void configure(const EvaluatorOptions& options) { options_ = options; }
  const EvaluatorOptions& options() const { return options_; }
  // Keeps a reference to `data`, which must outlive the evaluator's use of it.
  virtual void prepare(const Dataset& data) = 0;
  // Validates the population against the prepared dataset (throws gpudm::Error naming the
  // individual and rule) and evaluates it.
  virtual void evaluate(const Population& population, EvaluationResult& result) = 0;
  // What the last evaluate() did beyond the options (CUDA: path used, launch shapes).
  virtual nlohmann::ordered_json info() const { return nlohmann::ordered_json::object(); }
  // Device energy over a region of evaluate() calls (CUDA: NVML, summed over the devices).
  virtual void energy_begin() {}
  virtual nlohmann::ordered_json energy_end() {
    return {{"available", false}, {"reason", "no device energy meter for backend " + backend()}};
  }

 protected:
  EvaluatorOptions options_;
};

}  // namespace gpudm::pittsburgh
