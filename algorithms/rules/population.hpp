#pragma once
// A population of rule antecedents in the shared token encoding (opcodes.hpp), flattened for
// the rule engine (evaluator.hpp): every rule's END-terminated words back to back, CSR offsets.
// Consequents are not part of it: the engine counts covered instances per class, from which
// tp/fp/tn/fn follow for any consequent (RuleCounts::confusion).
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "algorithms/rules/expression.hpp"

namespace gpudm::rules {

struct RulePopulation {
  std::vector<std::uint32_t> words;
  std::vector<std::uint32_t> rule_begin{0};  // rules + 1 offsets into words

  std::size_t size() const { return rule_begin.size() - 1; }
  bool empty() const { return size() == 0; }
  const std::uint32_t* rule(std::size_t r) const { return words.data() + rule_begin[r]; }
  std::size_t rule_words(std::size_t r) const { return rule_begin[r + 1] - rule_begin[r]; }
  void clear() {
    words.clear();
    rule_begin.assign(1, 0);
  }
  // Appends an END-terminated expression (END appended when missing).
  void add(const std::vector<std::uint32_t>& tokens);
  void add(const std::uint32_t* tokens, std::size_t n);
};

// What validation learned about a population (the engine's path choices use it).
struct PopulationInfo {
  int max_depth = 0;      // deepest boolean stack of any rule
  int max_words = 0;      // longest rule, END included
  std::uint64_t primitives = 0;  // sum over rules of primitives(rule): GPops per instance
};

// Checks every rule against the schema before any backend interprets it (interpreters do no
// bounds checks). Throws gpudm::Error naming the rule and the word:
//   "rule 7 of 200: word 3 (>): attribute 9 out of range (dataset has 4 attributes)".
PopulationInfo check_population(const RulePopulation& pop, const Schema& schema);

// Rows of each class of a classification dataset (labels in [0, classes)).
std::vector<std::uint64_t> class_rows(const Dataset& data);

}  // namespace gpudm::rules
