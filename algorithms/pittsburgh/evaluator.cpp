#include "algorithms/pittsburgh/evaluator.hpp"

#include "algorithms/core/family.hpp"

namespace gpudm::pittsburgh {

void EvaluationResult::reset(const FlatPopulation& f, std::uint64_t n) {
  rule_confusion.assign(f.rules(), rules::ConfusionMatrix{});
  rule_fitness.assign(f.rules(), 0.0f);
  individual_rule_begin = f.individual_rule_begin;
  correct.assign(f.individuals(), 0);
  accuracy.assign(f.individuals(), 0.0);
  rows = n;
  gpops = f.primitives * n;
  phases.clear();
}

void EvaluationResult::finish() {
  rule_fitness.resize(rule_confusion.size());
  for (std::size_t r = 0; r < rule_confusion.size(); ++r)
    rule_fitness[r] = rules::sensitivity_specificity(rule_confusion[r]);
  accuracy.resize(correct.size());
  for (std::size_t i = 0; i < correct.size(); ++i)
    accuracy[i] = rows ? static_cast<double>(correct[i]) / static_cast<double>(rows) : 0.0;
}

std::string EvaluationResult::checksum() const {
  std::string h = checksum_hex(rule_confusion.data(), rule_confusion.size() * sizeof(rules::ConfusionMatrix));
  return checksum_hex(correct.data(), correct.size() * sizeof(std::uint32_t), std::stoull(h, nullptr, 16));
}

}  // namespace gpudm::pittsburgh
