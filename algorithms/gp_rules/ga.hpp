#pragma once
// The three GP classification algorithms of the GP paper (Cano, Zafra, Ventura 2012, Sec. 6.1)
// on the shared rule engine: the evolutionary loop runs on the host, every population is
// evaluated in one batched engine call. Everything random is drawn on the host from the seed,
// and the engine's integer counts are identical on every backend, so the same seed gives the
// same run (same rules, same fitness trace) on every backend.
//
// Phases (the paper's Table 1): init_creation, init_evaluation; selection, crossover, mutation,
// evaluation, replacement, control. Evaluation includes encoding the population and computing
// the fitness from the counts; the engine's own phases are kept apart (RunStats::engine).
//
// Reconstructed choices (the GP paper gives the fitness functions, operators and the protocol
// population 200 x 100 generations; the rest is ours, see algorithms/gp_rules/README.md):
//   all: ramped half-and-half initialisation (depths 3..max_depth) with values drawn from the
//        training data; tournament selection; pairwise crossover with probability
//        crossover_probability; a stop when a rule classifies the training data perfectly
//        (the paper's control stage, stop_when_perfect).
//   falco: one run per class; generational replacement with elitism (the best rule so far
//        replaces the worst offspring); mutation_probability per offspring; tournament 4; the
//        class's rule is the best rule of its run (Falco et al. 2001).
//   tan: one run per class; modified steady state: offspring and current population compete
//        for the places after token competition (Wong & Leung 2000: rules in fitness order seize
//        the positive instances they cover; adjusted fitness = fitness x seized / covered; a
//        rule that seizes nothing ranks last), an external population (elite_size best rules
//        that seize tokens) rejoins every competition (elitism); the class's rules are the
//        external population's rules that seize tokens at the end (Tan et al. 2002).
//   bojarczuk: one run; each rule is evaluated for every class, its consequent is the class of
//        highest Se*Sp*Sy; no mutation; tournament 2; generational with elitism; the classifier
//        takes, per class, the best rule for that class seen during the run (Bojarczuk et al.
//        2004). maxnodes of Sy: the largest size the depth limit admits (2^max_depth - 1)
//        unless max_nodes is given.
#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "algorithms/core/phase_timer.hpp"
#include "algorithms/gp_rules/classifier.hpp"
#include "algorithms/rules/evaluator.hpp"

namespace gpudm::gp_rules {

class PopulationRecorder;  // pop_sample.hpp

enum class Algorithm { falco, tan, bojarczuk };
const std::vector<std::pair<std::string, Algorithm>>& algorithm_names();
const char* to_string(Algorithm a);

struct GpParams {
  Algorithm algorithm = Algorithm::falco;
  int population = 200;
  int generations = 100;
  int max_depth = 6;
  int max_nodes = 0;        // 0: none (Bojarczuk: 2^max_depth - 1, also Sy's maxnodes)
  int tournament_size = 0;  // 0: the algorithm's (falco, tan 4; bojarczuk 2)
  double crossover_probability = 0.9;
  double mutation_probability = 0.1;  // falco, tan
  double alpha = 0.05;                // falco
  double w1 = 0.6, w2 = 10.0;         // tan
  int elite_size = 10;                // tan: the external population
  bool stop_when_perfect = true;

  Grammar grammar() const;
  int tournament() const;
};

struct RunStats {
  PhaseTimer phases;  // the paper's Table 1 phases, host clock
  PhaseTimer engine;  // the engine's phases (encode, upload, match_count, ...)
  std::uint64_t evaluations = 0;          // engine calls of the evolution
  std::uint64_t planned_evaluations = 0;  // of the whole run (every generation of every class run)
  std::uint64_t rules_evaluated = 0;
  std::uint64_t gpops = 0;                // kGpopsDefinition, over the evolution's evaluations
  int generations = 0;                    // run, summed over class runs
  std::vector<double> trace;              // best fitness after initialisation and each generation
  double engine_call_seconds = 0.0;       // wall time inside the engine's evaluate calls
  PopulationRecorder* recorder = nullptr;  // when set, sees every engine call (pop_sample.hpp)
  double evaluation_seconds() const { return phases.seconds("init_evaluation") + phases.seconds("evaluation"); }
};

// Runs the algorithm on `train` (`engine` prepared on it) and builds the classifier.
Classifier train(const Dataset& train, const GpParams& p, std::uint64_t seed, rules::RuleEvaluator& engine, RunStats& stats);

// ---- pieces, exposed for the tests ----
// Index of the tournament winner among k uniform draws (with replacement); ties keep the
// earlier draw.
std::size_t tournament(Rng& rng, const std::vector<double>& fitness, int k, bool minimise);

// Token competition (Wong & Leung 2000) over rules given by their coverage words (RuleCounts
// layout) and raw fitness: rules in decreasing raw fitness (ties: lower index) seize the tokens
// (rows set in `tokens`) they cover that no earlier rule seized. Returns per rule the tokens
// seized; adjusted[i] = raw[i] * seized / covered tokens (0 when it covers none).
// `covered[i]`: the tokens rule i covers (popcount of coverage & tokens; for a class's positive
// rows, the rule's tp, which the engine already counted). Only the words that still hold a free
// token are read.
std::vector<std::uint64_t> token_competition(const std::vector<const std::uint32_t*>& coverage,
                                             const std::vector<double>& raw, const std::vector<std::uint64_t>& covered,
                                             const std::vector<std::uint32_t>& tokens, std::vector<double>& adjusted);
// The same with `covered` counted from the coverage words.
std::vector<std::uint64_t> token_competition(const std::vector<const std::uint32_t*>& coverage,
                                             const std::vector<double>& raw, const std::vector<std::uint32_t>& tokens,
                                             std::vector<double>& adjusted);
std::vector<std::uint64_t> covered_tokens(const std::vector<const std::uint32_t*>& coverage,
                                          const std::vector<std::uint32_t>& tokens);

// Tan's replacement (the modified steady state): the current population, the offspring and the
// external population compete together (token competition on `coverage` / `raw` / `covered`); the next
// population is the first `population` by (seizes tokens, adjusted fitness, raw fitness) and the
// next external population the best `elite` distinct rules by raw fitness that seize tokens
// (same(i, j): rules i and j are the same rule). Indexes into the competitors, stable on ties.
struct Replacement {
  std::vector<std::size_t> survivors, archive;
  std::vector<std::uint64_t> seized;
  std::vector<double> adjusted;
};
Replacement steady_state_replacement(const std::vector<const std::uint32_t*>& coverage, const std::vector<double>& raw,
                                     const std::vector<std::uint64_t>& covered, const std::vector<std::uint32_t>& tokens,
                                     std::size_t population, std::size_t elite,
                                     const std::function<bool(std::size_t, std::size_t)>& same);

}  // namespace gpudm::gp_rules
