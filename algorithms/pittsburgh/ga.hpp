#pragma once
// A Pittsburgh GA over decision lists, on top of any RuleSetEvaluator (the whole population is
// evaluated in one batched call per generation, on whichever backend was chosen).
//
//   fitness(individual) = accuracy_train - length_penalty * (primitives / primitives_scale)
//   selection: tournament (size tournament); elitism: the best `elite` individuals survive;
//   crossover (p_crossover): one-point crossover of the two parents' rule lists (cut points
//     drawn independently, so lengths vary), default class from either parent;
//   mutation (p_mutation per child): one of
//     - change a condition's threshold (Gaussian step of 10% of the attribute range) or value,
//     - replace a condition's operator by another of its kind,
//     - insert a new random rule at a random position (if below max_rules),
//     - delete a random rule (if more than one),
//     - change a rule's consequent or the default class.
// Same seed + same backend results => same run (the GA's decisions depend only on the integer
// confusion counts, which all backends give identically).
#include <cstdint>
#include <functional>

#include <nlohmann/json.hpp>

#include "algorithms/pittsburgh/evaluator.hpp"

namespace gpudm::pittsburgh {

struct GaParams {
  int population = 50;
  int generations = 50;
  int tournament = 3;
  int elite = 2;
  double p_crossover = 0.8;
  double p_mutation = 0.5;
  double length_penalty = 0.002;  // per primitive-scale unit
  double primitives_scale = 20.0; // one average rule
  int max_rules = 20;
  RandomRuleSpec init;            // initial rules (rules_per_individual 0 = classes)
  std::uint64_t seed = 1;
  nlohmann::ordered_json to_json() const;
};

struct GaResult {
  Individual best;
  double best_fitness = 0;
  double train_accuracy = 0;
  int generations = 0;
  std::uint64_t evaluations = 0;  // individuals evaluated
  std::uint64_t gpops = 0;        // total interpreted
  double evaluation_seconds = 0;  // inside evaluator->evaluate
  std::vector<double> best_fitness_history;
};

// Runs the GA on `train` (already prepared in `evaluator`). `on_generation(g)` for progress.
GaResult run_ga(RuleSetEvaluator& evaluator, const Dataset& train, const GaParams& params,
                const std::function<void(int)>& on_generation = {});

// Accuracy of one individual on `data` (through the evaluator, which must be prepared on it).
double accuracy_of(RuleSetEvaluator& evaluator, const Individual& ind);

}  // namespace gpudm::pittsburgh
