#include "algorithms/rules/population.hpp"

#include <algorithm>

#include "algorithms/core/error.hpp"

namespace gpudm::rules {

void RulePopulation::add(const std::uint32_t* tokens, std::size_t n) {
  words.insert(words.end(), tokens, tokens + n);
  // Walk the words as the interpreter reads them (an operand's bits may look like END).
  bool ended = false;
  for (std::size_t i = 0; i < n;) {
    const std::uint32_t op = opcode_of(tokens[i]);
    if (op == kEnd) {
      ended = i + 1 == n;
      break;
    }
    i += 1 + static_cast<std::size_t>(operand_count(op));
  }
  if (!ended) words.push_back(make_word(kEnd));
  rule_begin.push_back(static_cast<std::uint32_t>(words.size()));
}

void RulePopulation::add(const std::vector<std::uint32_t>& tokens) { add(tokens.data(), tokens.size()); }

PopulationInfo check_population(const RulePopulation& pop, const Schema& schema) {
  GPUDM_REQUIRE(!pop.rule_begin.empty() && pop.rule_begin.front() == 0 && pop.rule_begin.back() == pop.words.size(),
                "rule population: offsets do not cover the words (" + std::to_string(pop.words.size()) + " words)");
  PopulationInfo info;
  const std::size_t n = pop.size();
  for (std::size_t r = 0; r < n; ++r) {
    GPUDM_REQUIRE(pop.rule_begin[r] <= pop.rule_begin[r + 1],
                  "rule " + std::to_string(r) + " of " + std::to_string(n) + ": offsets decrease");
    ExpressionInfo e;
    const std::string why = check_expression(pop.rule(r), pop.rule_words(r), schema, &e);
    if (!why.empty())
      throw Error("rule " + std::to_string(r) + " of " + std::to_string(n) + ": " + why);
    info.max_depth = std::max(info.max_depth, e.max_depth);
    info.max_words = std::max(info.max_words, e.words);
    info.primitives += static_cast<std::uint64_t>(e.primitives);
  }
  return info;
}

std::vector<std::uint64_t> class_rows(const Dataset& data) {
  GPUDM_REQUIRE(data.task() == Task::classification,
                "rules: dataset '" + data.name() + "' is not a classification dataset");
  std::vector<std::uint64_t> n(static_cast<std::size_t>(std::max(0, data.num_classes())), 0);
  for (std::size_t i = 0; i < data.rows(); ++i) {
    const int y = data.label(i);
    GPUDM_REQUIRE(y >= 0 && y < data.num_classes(), "rules: dataset '" + data.name() + "' row " + std::to_string(i) +
                                                        " has label " + std::to_string(y) + " outside [0, " +
                                                        std::to_string(data.num_classes()) + ")");
    ++n[static_cast<std::size_t>(y)];
  }
  return n;
}

}  // namespace gpudm::rules
