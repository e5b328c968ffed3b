#include "algorithms/pittsburgh/evaluator.hpp"

#include "algorithms/core/family.hpp"

namespace gpudm::pittsburgh {

void EvaluationResult::reset(const FlatPopulation& f, std::uint64_t n) {
  reset_counts(f.individual_rule_begin, n);
  gpops = f.primitives * n;
}

void EvaluationResult::reset_counts(std::vector<std::uint32_t> irb, std::uint64_t n) {
  if (irb.empty()) irb.push_back(0);
  const std::size_t individuals = irb.size() - 1, nrules = irb.back();
  rule_confusion.assign(nrules, rules::ConfusionMatrix{});
  rule_fitness.assign(nrules, 0.0f);
  individual_rule_begin = std::move(irb);
  correct.assign(individuals, 0);
  accuracy.assign(individuals, 0.0);
  rows = n;
  gpops = 0;
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
