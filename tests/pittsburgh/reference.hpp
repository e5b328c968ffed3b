#pragma once
// An independent, small reference evaluator written from the paper (Cano, Zafra, Ventura 2014,
// Sections 3.2-3.3), for the tests only. It shares nothing with the backends but the opcode
// interpreter (algorithms/rules/opcodes.hpp, rules::evaluate) and the population types: no
// flattening, no outcome-code buffers, no row chunks. One rule on one instance at a time:
//   rule coverage + rule fitness: a rule covering an instance of its consequent's class is a
//     true positive, of another class a false positive; not covering its own class a false
//     negative, another class a true negative; fitness = sensitivity x specificity
//     (tp / (tp + fn)) x (tn / (tn + fp)), 0 when a denominator is 0;
//   rule-set classification + fitness: the instance's predicted class is the consequent of the
//     first rule (in list order) that covers it, else the individual's default class;
//     accuracy = correctly predicted instances / instances.
#include <cstdint>
#include <string>
#include <vector>

#include "algorithms/core/dataset.hpp"
#include "algorithms/pittsburgh/evaluator.hpp"
#include "algorithms/pittsburgh/population.hpp"
#include "algorithms/rules/confusion.hpp"
#include "algorithms/rules/expression.hpp"
#include "algorithms/rules/opcodes.hpp"

namespace pitt_test {

struct ReferenceRule {
  std::uint32_t tp = 0, tn = 0, fp = 0, fn = 0;
  float fitness = 0.0f;
};

struct ReferenceResult {
  std::vector<std::vector<ReferenceRule>> rules;  // [individual][rule]
  std::vector<std::uint32_t> correct;             // [individual]
  std::vector<double> accuracy;                   // [individual]
  std::uint64_t gpops = 0;                        // sum over rules of primitives x instances
};

// Whether `rule` covers instance `row` of `d` (a missing value fails every comparison).
inline bool reference_covers(const gpudm::pittsburgh::Rule& rule, const gpudm::Dataset& d, std::size_t row) {
  return gpudm::rules::evaluate(rule.tokens.data(), [&](std::uint32_t attribute) { return d.column(attribute)[row]; });
}

// `p` must be valid for `d` (gpudm::pittsburgh::validate).
inline ReferenceResult reference_evaluate(const gpudm::pittsburgh::Population& p, const gpudm::Dataset& d) {
  ReferenceResult out;
  const std::size_t n = d.rows();
  for (const auto& ind : p.individuals) {
    std::vector<ReferenceRule> rules;
    for (const auto& rule : ind.rules) {
      ReferenceRule m;
      for (std::size_t row = 0; row < n; ++row) {
        const bool covers = reference_covers(rule, d, row);
        const bool same_class = d.labels()[row] == rule.consequent;
        if (covers && same_class) ++m.tp;
        else if (covers) ++m.fp;
        else if (same_class) ++m.fn;
        else ++m.tn;
      }
      const float sensitivity = m.tp + m.fn ? m.tp / static_cast<float>(m.tp + m.fn) : 0.0f;
      const float specificity = m.tn + m.fp ? m.tn / static_cast<float>(m.tn + m.fp) : 0.0f;
      m.fitness = sensitivity * specificity;
      rules.push_back(m);
      out.gpops += static_cast<std::uint64_t>(gpudm::rules::primitives(rule.tokens.data())) * n;
    }
    std::uint32_t correct = 0;
    for (std::size_t row = 0; row < n; ++row) {
      std::int32_t predicted = ind.default_class;
      for (const auto& rule : ind.rules)
        if (reference_covers(rule, d, row)) {
          predicted = rule.consequent;
          break;
        }
      correct += predicted == d.labels()[row];
    }
    out.rules.push_back(std::move(rules));
    out.correct.push_back(correct);
    out.accuracy.push_back(n ? static_cast<double>(correct) / static_cast<double>(n) : 0.0);
  }
  return out;
}

// The first difference between the reference and a backend's result ("" when bit-identical:
// every count, every fitness, every accuracy, the GPops).
inline std::string reference_difference(const ReferenceResult& want, const gpudm::pittsburgh::EvaluationResult& got) {
  if (got.correct.size() != want.correct.size()) return "individual count differs";
  for (std::size_t i = 0; i < want.rules.size(); ++i) {
    const std::size_t have = got.individual_rule_begin.at(i + 1) - got.individual_rule_begin.at(i);
    if (have != want.rules[i].size()) return "individual " + std::to_string(i) + ": rule count differs";
    for (std::size_t k = 0; k < want.rules[i].size(); ++k) {
      const ReferenceRule& w = want.rules[i][k];
      const gpudm::rules::ConfusionMatrix& g = got.rule(i, k);
      const std::string where = "individual " + std::to_string(i) + ", rule " + std::to_string(k) + ": ";
      if (g.tp != w.tp || g.tn != w.tn || g.fp != w.fp || g.fn != w.fn)
        return where + "(tp,tn,fp,fn) = (" + std::to_string(g.tp) + "," + std::to_string(g.tn) + "," +
               std::to_string(g.fp) + "," + std::to_string(g.fn) + "), the reference (" + std::to_string(w.tp) + "," +
               std::to_string(w.tn) + "," + std::to_string(w.fp) + "," + std::to_string(w.fn) + ")";
      if (got.rule_fitness.at(got.individual_rule_begin[i] + k) != w.fitness) return where + "fitness differs";
    }
    if (got.correct[i] != want.correct[i])
      return "individual " + std::to_string(i) + ": " + std::to_string(got.correct[i]) + " correct, the reference " +
             std::to_string(want.correct[i]);
    if (got.accuracy.at(i) != want.accuracy[i]) return "individual " + std::to_string(i) + ": accuracy differs";
  }
  if (got.gpops != want.gpops) return "gpops " + std::to_string(got.gpops) + ", the reference " + std::to_string(want.gpops);
  return "";
}

}  // namespace pitt_test
