#include "algorithms/pittsburgh/ga.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

#include "algorithms/core/stopwatch.hpp"

namespace gpudm::pittsburgh {

nlohmann::ordered_json GaParams::to_json() const {
  return {{"population", population},       {"generations", generations},   {"tournament", tournament},
          {"elite", elite},                 {"p_crossover", p_crossover},   {"p_mutation", p_mutation},
          {"length_penalty", length_penalty}, {"primitives_scale", primitives_scale},
          {"max_rules", max_rules},         {"init", init.to_json()},       {"seed", seed}};
}

namespace {

struct Ranges {
  std::vector<float> lo, hi;
};

Ranges ranges_of(const Dataset& d) {
  Ranges r;
  r.lo.assign(d.cols(), 0.0f);
  r.hi.assign(d.cols(), 1.0f);
  for (std::size_t c = 0; c < d.cols(); ++c) {
    float lo = std::numeric_limits<float>::infinity(), hi = -lo;
    const float* x = d.column(c);
    for (std::size_t i = 0; i < d.rows(); ++i)
      if (x[i] == x[i]) {
        lo = std::min(lo, x[i]);
        hi = std::max(hi, x[i]);
      }
    if (lo <= hi) {
      r.lo[c] = lo;
      r.hi[c] = hi;
    }
  }
  return r;
}

// Positions of the comparison words of a rule.
std::vector<std::size_t> comparisons(const Rule& r) {
  std::vector<std::size_t> out;
  for (std::size_t i = 0;;) {
    const std::uint32_t op = rules::opcode_of(r.tokens[i]);
    if (op == rules::kEnd) break;
    if (rules::is_comparison(op)) out.push_back(i);
    i += 1 + static_cast<std::size_t>(rules::operand_count(op));
  }
  return out;
}

void mutate(Individual& ind, const Dataset& d, const Ranges& rg, const GaParams& p, Rng& rng) {
  using namespace rules;
  const int classes = std::max(1, d.num_classes());
  const int kind = rng.below_int(5);
  if (kind == 2 && static_cast<int>(ind.rules.size()) < p.max_rules) {
    const auto pos = static_cast<std::ptrdiff_t>(rng.below(ind.rules.size() + 1));
    ind.rules.insert(ind.rules.begin() + pos, random_rule(d, p.init, rng));
    return;
  }
  if (kind == 3 && ind.rules.size() > 1) {
    ind.rules.erase(ind.rules.begin() + static_cast<std::ptrdiff_t>(rng.below(ind.rules.size())));
    return;
  }
  if (ind.rules.empty() || kind == 4) {
    if (!ind.rules.empty() && rng.bernoulli(0.5))
      ind.rules[rng.below(ind.rules.size())].consequent = rng.below_int(classes);
    else
      ind.default_class = rng.below_int(classes);
    return;
  }
  Rule& r = ind.rules[rng.below(ind.rules.size())];
  const auto cmp = comparisons(r);
  if (cmp.empty()) {
    r.consequent = rng.below_int(classes);
    return;
  }
  const std::size_t at = cmp[rng.below(cmp.size())];
  const std::uint32_t w = r.tokens[at];
  const std::uint32_t op = opcode_of(w), a = attribute_of(w);
  if (kind == 0) {  // threshold / value
    const Attribute& attr = d.attribute(a);
    if (is_nominal_op(op) && !attr.values.empty()) {
      r.tokens[at + 1] = float_as_word(static_cast<float>(rng.below(attr.values.size())));
    } else {
      const double span = std::max(1e-6, static_cast<double>(rg.hi[a] - rg.lo[a]));
      for (int k = 1; k <= operand_count(op); ++k) {
        const double v = word_as_float(r.tokens[at + k]) + rng.normal(0.0, 0.1 * span);
        r.tokens[at + k] = float_as_word(static_cast<float>(std::clamp(v, static_cast<double>(rg.lo[a]), static_cast<double>(rg.hi[a]))));
      }
      if (operand_count(op) == 2 && word_as_float(r.tokens[at + 1]) > word_as_float(r.tokens[at + 2]))
        std::swap(r.tokens[at + 1], r.tokens[at + 2]);
    }
  } else {  // operator of the same kind
    std::uint32_t nop = op;
    if (is_nominal_op(op)) nop = op == kEq ? kNe : kEq;
    else if (op == kIn || op == kOut) nop = op == kIn ? kOut : kIn;
    else nop = kGt + static_cast<std::uint32_t>(rng.below(4));
    r.tokens[at] = make_word(nop, a);
  }
}

Individual crossover(const Individual& a, const Individual& b, Rng& rng, int max_rules) {
  Individual c;
  const std::size_t ca = rng.below(a.rules.size() + 1), cb = rng.below(b.rules.size() + 1);
  c.rules.assign(a.rules.begin(), a.rules.begin() + static_cast<std::ptrdiff_t>(ca));
  c.rules.insert(c.rules.end(), b.rules.begin() + static_cast<std::ptrdiff_t>(cb), b.rules.end());
  if (static_cast<int>(c.rules.size()) > max_rules) c.rules.resize(static_cast<std::size_t>(max_rules));
  c.default_class = rng.bernoulli(0.5) ? a.default_class : b.default_class;
  return c;
}

}  // namespace

double accuracy_of(RuleSetEvaluator& evaluator, const Individual& ind) {
  Population p;
  p.individuals.push_back(ind);
  EvaluationResult r;
  PhaseTimer untimed;
  evaluator.evaluate(p, r, untimed);
  return r.accuracy.at(0);
}

GaResult run_ga(RuleSetEvaluator& ev, const Dataset& train, const GaParams& p,
                const std::function<void(int)>& on_generation) {
  GPUDM_REQUIRE(p.population >= 2, "pittsburgh GA: population must be >= 2");
  GPUDM_REQUIRE(p.generations >= 0, "pittsburgh GA: generations must be >= 0");
  const Ranges rg = ranges_of(train);
  Rng rng(p.seed);
  Population pop = random_population(train, static_cast<std::size_t>(p.population), p.init, rng.next());
  const rules::Schema schema = rules::Schema::of(train);
  GaResult out;
  std::vector<double> fit;
  EvaluationResult res;
  PhaseTimer phases;  // the GA reports evaluation_seconds only
  auto evaluate = [&] {
    Stopwatch sw;
    ev.evaluate(pop, res, phases);
    out.evaluation_seconds += sw.seconds();
    out.evaluations += pop.size();
    out.gpops += res.gpops;
    fit.assign(pop.size(), 0.0);
    for (std::size_t i = 0; i < pop.size(); ++i) {
      double prims = 0;
      for (const auto& rule : pop.individuals[i].rules) prims += rules::primitives(rule.tokens.data());
      fit[i] = res.accuracy[i] - p.length_penalty * prims / p.primitives_scale;
    }
  };
  auto best_index = [&] {
    return static_cast<std::size_t>(std::max_element(fit.begin(), fit.end()) - fit.begin());
  };
  evaluate();
  for (int g = 0; g < p.generations; ++g) {
    std::vector<std::size_t> order(pop.size());
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return fit[a] > fit[b]; });
    out.best_fitness_history.push_back(fit[order[0]]);
    auto tournament = [&]() -> const Individual& {
      std::size_t best = rng.below(pop.size());
      for (int k = 1; k < p.tournament; ++k) {
        const std::size_t c = rng.below(pop.size());
        if (fit[c] > fit[best]) best = c;
      }
      return pop.individuals[best];
    };
    Population next;
    for (int e = 0; e < std::min<int>(p.elite, static_cast<int>(pop.size())); ++e)
      next.individuals.push_back(pop.individuals[order[static_cast<std::size_t>(e)]]);
    while (next.size() < pop.size()) {
      const Individual& a = tournament();
      Individual child = rng.bernoulli(p.p_crossover) ? crossover(a, tournament(), rng, p.max_rules) : a;
      if (rng.bernoulli(p.p_mutation)) mutate(child, train, rg, p, rng);
      next.individuals.push_back(std::move(child));
    }
    pop = std::move(next);
    validate(pop, schema);  // operators keep individuals valid; a bug here fails loudly
    evaluate();
    out.generations = g + 1;
    if (on_generation) on_generation(g);
  }
  const std::size_t b = best_index();
  out.best = pop.individuals[b];
  out.best_fitness = fit[b];
  out.train_accuracy = res.accuracy[b];
  return out;
}

}  // namespace gpudm::pittsburgh
