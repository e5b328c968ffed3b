#pragma once
// Pittsburgh individuals: an individual is a decision list of rules (antecedent tokens in the
// encoding of algorithms/rules/opcodes.hpp + a consequent class) followed by a default class.
// The first rule whose antecedent covers an instance predicts its class; if none covers it,
// the default class does (Cano, Zafra, Ventura 2014, Section 3.3.1).
//
// Population JSON (format "gpudm-pittsburgh-population", version 1):
//   {
//     "format": "gpudm-pittsburgh-population", "version": 1,
//     "attributes": 4, "classes": 3,            // optional; checked against the dataset
//     "individuals": [
//       {"default_class": 0,
//        "rules": [
//          {"antecedent": [">", 2, 2.45, "<=", 3, 1.75, "AND"], "consequent": 1},
//          {"antecedent": ["IN", 2, 4.9, 7.0, "NOT"], "consequent": 2}
//        ]}
//     ]
//   }
// The antecedent's token syntax is documented in algorithms/rules/expression.hpp.
// An individual may have zero rules (it then predicts its default class everywhere).
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "algorithms/core/rng.hpp"
#include "algorithms/rules/expression.hpp"
#include "algorithms/rules/population.hpp"

namespace gpudm::pittsburgh {

struct Rule {
  std::vector<std::uint32_t> tokens;  // END-terminated antecedent
  std::int32_t consequent = 0;
};

struct Individual {
  std::vector<Rule> rules;
  std::int32_t default_class = 0;
};

struct Population {
  std::vector<Individual> individuals;
  // The file header's "attributes" / "classes" (-1 when absent): check_header() compares them
  // with the dataset the population is evaluated on.
  long long declared_attributes = -1, declared_classes = -1;
  std::size_t size() const { return individuals.size(); }
  std::size_t total_rules() const {
    std::size_t n = 0;
    for (const auto& i : individuals) n += i.rules.size();
    return n;
  }
};

// Throws gpudm::Error naming the individual and rule of the first violation: malformed
// expression (stack underflow/overflow, missing END, unknown opcode, too long), attribute out
// of range, nominal operator on a numeric attribute, consequent or default class out of range.
void validate(const Population& p, const rules::Schema& schema);

// The structure-of-arrays form every backend consumes (rules in population order).
struct FlatPopulation {
  rules::RulePopulation antecedents;                // every rule's antecedent, the rule engine's input
  std::vector<std::int32_t> rule_consequent;        // per rule
  std::vector<std::uint32_t> rule_primitives;       // per rule: GPops per instance
  std::vector<std::uint32_t> individual_rule_begin; // size individuals + 1 (CSR)
  std::vector<std::uint32_t> individual_word_begin; // size individuals + 1
  std::vector<std::int32_t> default_class;          // per individual
  int max_rules = 0;       // most rules in one individual
  int max_depth = 0;       // deepest boolean stack of any rule
  int max_individual_words = 0;
  std::uint64_t primitives = 0;  // sum of rule_primitives: GPops per instance

  std::size_t individuals() const { return default_class.size(); }
  std::size_t rules() const { return rule_consequent.size(); }
  std::uint32_t rules_of(std::size_t ind) const { return individual_rule_begin[ind + 1] - individual_rule_begin[ind]; }
};

// Validates (against `schema`) and flattens.
FlatPopulation flatten(const Population& p, const rules::Schema& schema);
// Individuals [begin, end) only, offsets from 0 (errors name the individual's index in `p`): what
// one device of a multi-GPU evaluation flattens on its own host thread.
FlatPopulation flatten(const Population& p, const rules::Schema& schema, std::size_t begin, std::size_t end);

// Throws gpudm::Error "<source>: the header declares N attributes, dataset 'd' has M" (or
// classes) when a declared count differs from the dataset's.
void check_header(const Population& p, const Dataset& d, const std::string& source);

// ---- JSON ----
Population population_from_json(const nlohmann::json& j, const std::string& source = "population");
nlohmann::ordered_json population_to_json(const Population& p, const rules::Schema* schema = nullptr);
Population load_population(const std::string& path);
void save_population(const Population& p, const std::string& path, const rules::Schema* schema = nullptr);

// ---- random populations for the experiments ----
// The distribution (stated in configs and results): each individual has `rules_per_individual`
// rules (the experiments use the number of classes), consequents drawn uniformly, default class
// uniform. A rule has k conditions, k uniform in [1, max_conditions] with
// max_conditions = min(cap, 2 * attributes) ("rule length varies randomly according to the
// number of attributes"; cap = 9 gives the paper's ~20 primitives per rule, 5 conditions on
// average). A condition picks an attribute uniformly; nominal attributes get = or != against a
// uniform value index, numeric ones one of > >= < <= against a threshold drawn uniformly
// between the column's min and max (IN/OUT intervals with probability p_interval). Conditions
// are joined left-deep by AND (probability 1 - p_or) or OR; each condition is negated with
// probability p_not.
struct RandomRuleSpec {
  int rules_per_individual = 0;  // 0: number of classes
  int max_conditions_cap = 9;
  double p_or = 0.25;
  double p_not = 0.1;
  double p_interval = 0.1;
  nlohmann::ordered_json to_json() const;
};
Rule random_rule(const Dataset& d, const RandomRuleSpec& spec, Rng& rng);
Population random_population(const Dataset& d, std::size_t individuals, const RandomRuleSpec& spec, std::uint64_t seed);

}  // namespace gpudm::pittsburgh
