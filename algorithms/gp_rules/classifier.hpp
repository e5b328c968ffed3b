#pragma once
// What the three algorithms build: an ordered rule list (IF antecedent THEN class, first match
// decides) and a default class for the instances no rule covers. One construction for all
// three (our choice; the GP paper describes only how each algorithm picks its rules):
//   - order: Laplace precision on the training data, (tp + 1) / (tp + fp + K) with K classes,
//     highest first (CN2's rule quality; ties: fewer nodes, then the order the rules were found);
//   - default class: the majority class of the training instances no rule covers (all covered:
//     the overall majority; ties: the lowest class index).
// Scoring evaluates the rules with the rule engine (coverage bits) on any prepared dataset.
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "algorithms/core/dataset.hpp"
#include "algorithms/gp_rules/tree.hpp"
#include "algorithms/rules/evaluator.hpp"

namespace gpudm::gp_rules {

inline constexpr const char* kModelFormat = "gpudm.gp_rules.model/1";
// "version" 2: attributes record their category names ("values"); files without "version" are 1.
inline constexpr int kModelVersion = 2;

struct RuleEntry {
  Tree tree;                          // empty when read from a model file (tokens only)
  std::vector<std::uint32_t> tokens;  // the encoding (END-terminated)
  int consequent = 0;
  double fitness = 0.0;               // the algorithm's own fitness
  rules::ConfusionMatrix train;       // on the training data, for the consequent
};

struct Classifier {
  std::vector<RuleEntry> rules;
  int default_class = 0;
  rules::RulePopulation population() const;
};

struct Score {
  std::uint64_t rows = 0, correct = 0;
  std::uint64_t by_default = 0;  // rows no rule covered
  double accuracy() const { return rows ? static_cast<double>(correct) / static_cast<double>(rows) : 0.0; }
};

// Orders the rules and sets the default class from one engine evaluation of the rules on the
// training data (`engine` prepared on `train`); fills each rule's training confusion matrix.
void finish_classifier(Classifier& c, const Dataset& train, rules::RuleEvaluator& engine, PhaseTimer& engine_phases);
// Predictions (first covering rule, else the default) of every row of the dataset `engine` is
// prepared on; `predictions` may be null. Labels are read from `data`.
Score score(const Classifier& c, const Dataset& data, rules::RuleEvaluator& engine, PhaseTimer& engine_phases,
            std::vector<int>* predictions = nullptr);

// Readable listing: "1. IF (petal_width <= 0.6) THEN setosa   [tp 50 fp 0]" ... "ELSE virginica".
std::string to_text(const Classifier& c, const Dataset& d);

// Model files: {"format": kModelFormat, "version", "algorithm", "dataset", "attributes": [{name,
// kind, values (nominal)}], "classes": [...], "rules": [{"antecedent": token text
// (rules/expression.hpp), "class", "consequent", "text", "train": {tp, fp, tn, fn}}],
// "default_class", "info": {...}}.
nlohmann::ordered_json model_json(const Classifier& c, const Dataset& train, const std::string& algorithm,
                                  const nlohmann::ordered_json& info);
// Reads a model for scoring `data`, re-coding `data` to the model by name first
// (algorithms/core/schema.hpp: attributes in any order, categories and classes by name, a
// category the model never saw a missing value); every antecedent is validated (errors name the
// rule). A version 1 model (no category names) scores only data without nominal attributes.
Classifier model_from_json(const nlohmann::json& j, Dataset& data, const std::string& where);

}  // namespace gpudm::gp_rules
