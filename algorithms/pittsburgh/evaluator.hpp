#pragma once
// RuleSetEvaluator: the interface every Pittsburgh backend implements (CUDA-free, C++17: the
// CUDA backend includes it). The lifecycle is backend.hpp's: configure(EvaluatorOptions), then
// prepare() once per dataset (uploads, layouts), then evaluate() batched over a whole
// population: every rule's confusion matrix (the paper's rule coverage + rule fitness kernels)
// and every individual's decision-list accuracy (rule-set classification + rule-set fitness
// kernels). All backends give identical integer results.
//
// Phases go to the PhaseTimer& of evaluate() (names follow the paper): encode, coverage,
// rule_fitness, classification, ruleset_fitness, and transfers (GPU). CPU phases use the host
// clock, GPU kernels the device clock (CUDA events). The CUDA fast path fuses coverage, rule
// fitness counting and classification into one kernel recorded as "coverage_fused" (see
// backends/cuda/pittsburgh/).
// Energy is measured by the family around its timed repetitions (algorithms/core/machine.hpp).
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "algorithms/core/backend.hpp"
#include "algorithms/core/dataset.hpp"
#include "algorithms/core/phase_timer.hpp"
#include "algorithms/pittsburgh/population.hpp"
#include "algorithms/rules/confusion.hpp"
#include "algorithms/rules/evaluator.hpp"

namespace gpudm::pittsburgh {

inline constexpr const char* kFamilyName = "pittsburgh";

// One sentence, written into every results JSON: the rule engine's definition.
inline constexpr const char* kGpopsDefinition = rules::kGpopsDefinition;

struct EvaluationResult {
  std::vector<rules::ConfusionMatrix> rule_confusion;  // per rule, population order
  std::vector<float> rule_fitness;                     // sensitivity x specificity, per rule
  std::vector<std::uint32_t> individual_rule_begin;    // CSR: rules of individual i
  std::vector<std::uint32_t> correct;                  // per individual
  std::vector<double> accuracy;                        // per individual: correct / rows
  std::uint64_t rows = 0;
  std::uint64_t gpops = 0;  // of this evaluation (kGpopsDefinition)

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

// The CUDA backend's kernel path (the paper's four kernels, or one fused kernel) and the fast
// path's layout of the instances (automatic = f16x2 when the data and the stacks allow it, else
// f32; f16x2 = two rows per word as the rule engine's ranked fp16 codes, an error when the data
// do not allow it): the rule engine's options, with its names ("faithful", "fast"; "auto",
// "f32", "f16x2").
using KernelPath = rules::Path;
using FeatureLayout = rules::Features;
using rules::to_string;
inline const std::vector<std::pair<std::string, KernelPath>>& kernel_path_names() { return rules::path_names(); }
inline const std::vector<std::pair<std::string, FeatureLayout>>& feature_layout_names() { return rules::features_names(); }

// Backend options (ignored where they do not apply); the family's ParamTable fills them.
struct EvaluatorOptions {
  int threads = 0;                                   // OpenMP: 0 = all
  KernelPath path = KernelPath::fast;                // CUDA
  int devices = 1;                                   // CUDA: population split over this many GPUs
  std::vector<int> device_ids;                       // CUDA: or the device of every slice (may repeat: [0, 0])
  FeatureLayout features = FeatureLayout::automatic; // CUDA fast path
};

// describe(): CUDA reports path_requested, path_used (+ fallback_reason), devices, features (+
// features_reason) and the fast kernel's launch shape; OpenMP its thread count.
class RuleSetEvaluator : public BackendOf<EvaluatorOptions> {
 public:
  // Validates the population against the prepared dataset (throws gpudm::Error naming the
  // individual and rule) and evaluates it into `result` (resized); phases are added to `timer`.
  virtual void evaluate(const Population& population, EvaluationResult& result, PhaseTimer& timer) = 0;
  // True when the backend itself splits the rows over the MPI ranks (the CPU backends: their rule
  // engine is sharded); otherwise across_ranks() (sharded.hpp) wraps it.
  virtual bool splits_rows_over_ranks() const { return false; }
};

}  // namespace gpudm::pittsburgh
