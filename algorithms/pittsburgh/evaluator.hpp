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
// clock, GPU kernels the device clock (CUDA events). The CUDA fast path fuses the first three
// into one kernel and records it as "coverage_fused" (see backends/cuda/pittsburgh/).
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

// The CUDA backend's kernel path: the paper's four kernels, or one fused kernel.
enum class KernelPath { faithful, fast };
// The CUDA fast path's layout of the instances: automatic = f16x2 when every feature value is
// exact in fp16 and the stacks fit, else f32; f16x2 = two rows per word as fp16 (an error when
// the data do not allow it).
enum class FeatureLayout { automatic, f32, f16x2 };
const char* to_string(KernelPath p);
const char* to_string(FeatureLayout f);
// The names configs and the CLI use ("faithful", "fast"; "auto", "f32", "f16x2").
const std::vector<std::pair<std::string, KernelPath>>& kernel_path_names();
const std::vector<std::pair<std::string, FeatureLayout>>& feature_layout_names();

// Backend options (ignored where they do not apply); the family's ParamTable fills them.
struct EvaluatorOptions {
  int threads = 0;                                   // OpenMP: 0 = all
  KernelPath path = KernelPath::fast;                // CUDA
  int devices = 1;                                   // CUDA: population split over this many GPUs
  FeatureLayout features = FeatureLayout::automatic; // CUDA fast path
};

// describe(): CUDA reports path_requested, path_used (+ fallback_reason), devices, features (+
// features_reason) and the fast kernel's launch shape; OpenMP its thread count.
class RuleSetEvaluator : public BackendOf<EvaluatorOptions> {
 public:
  // Validates the population against the prepared dataset (throws gpudm::Error naming the
  // individual and rule) and evaluates it into `result` (resized); phases are added to `timer`.
  virtual void evaluate(const Population& population, EvaluationResult& result, PhaseTimer& timer) = 0;
};

}  // namespace gpudm::pittsburgh
