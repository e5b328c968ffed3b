#include "algorithms/gp_rules/ga.hpp"

#include <algorithm>
#include <bit>
#include <memory>
#include <numeric>

#include "algorithms/core/error.hpp"
#include "algorithms/core/stopwatch.hpp"
#include "algorithms/gp_rules/pop_sample.hpp"
#include "algorithms/gp_rules/fitness.hpp"

namespace gpudm::gp_rules {

const std::vector<std::pair<std::string, Algorithm>>& algorithm_names() {
  static const std::vector<std::pair<std::string, Algorithm>> n = {
      {"falco", Algorithm::falco}, {"tan", Algorithm::tan}, {"bojarczuk", Algorithm::bojarczuk}};
  return n;
}
const char* to_string(Algorithm a) {
  return a == Algorithm::falco ? "falco" : (a == Algorithm::tan ? "tan" : "bojarczuk");
}

Grammar GpParams::grammar() const {
  switch (algorithm) {
    case Algorithm::falco: {
      Grammar g = Grammar::falco(max_depth);
      g.max_nodes = max_nodes;
      return g;
    }
    case Algorithm::tan: {
      Grammar g = Grammar::tan(max_depth);
      g.max_nodes = max_nodes;
      return g;
    }
    case Algorithm::bojarczuk: break;
  }
  return Grammar::bojarczuk(max_depth, max_nodes > 0 ? max_nodes : (1 << max_depth) - 1);
}

int GpParams::tournament() const {
  if (tournament_size > 0) return tournament_size;
  return algorithm == Algorithm::bojarczuk ? 2 : 4;
}

std::size_t tournament(Rng& rng, const std::vector<double>& fitness, int k, bool minimise) {
  std::size_t best = rng.below(fitness.size());
  for (int i = 1; i < k; ++i) {
    const std::size_t c = rng.below(fitness.size());
    if (minimise ? fitness[c] < fitness[best] : fitness[c] > fitness[best]) best = c;
  }
  return best;
}

std::vector<std::uint64_t> covered_tokens(const std::vector<const std::uint32_t*>& coverage,
                                          const std::vector<std::uint32_t>& tokens) {
  std::vector<std::uint64_t> covered(coverage.size(), 0);
  for (std::size_t i = 0; i < coverage.size(); ++i)
    for (std::size_t w = 0; w < tokens.size(); ++w)
      covered[i] += static_cast<std::uint64_t>(std::popcount(coverage[i][w] & tokens[w]));
  return covered;
}

std::vector<std::uint64_t> token_competition(const std::vector<const std::uint32_t*>& coverage,
                                             const std::vector<double>& raw, const std::vector<std::uint32_t>& tokens,
                                             std::vector<double>& adjusted) {
  return token_competition(coverage, raw, covered_tokens(coverage, tokens), tokens, adjusted);
}

std::vector<std::uint64_t> token_competition(const std::vector<const std::uint32_t*>& coverage,
                                             const std::vector<double>& raw, const std::vector<std::uint64_t>& covered,
                                             const std::vector<std::uint32_t>& tokens, std::vector<double>& adjusted) {
  const std::size_t n = coverage.size(), words = tokens.size();
  std::vector<std::size_t> order(n);
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return raw[a] > raw[b]; });
  // A competitor whose coverage words are those of one earlier in the order (the external
  // population's copies share their words) finds every token it covers already seized.
  std::vector<bool> repeat(n, false);
  {
    std::vector<std::size_t> rank(n), by_words(order);
    for (std::size_t r = 0; r < n; ++r) rank[order[r]] = r;
    std::sort(by_words.begin(), by_words.end(), [&](std::size_t a, std::size_t b) {
      return coverage[a] != coverage[b] ? std::less<const std::uint32_t*>()(coverage[a], coverage[b]) : rank[a] < rank[b];
    });
    for (std::size_t j = 1; j < n; ++j) repeat[by_words[j]] = coverage[by_words[j]] == coverage[by_words[j - 1]];
  }
  // Only the words that still hold a free token are visited; a word leaves the list when its
  // last token is seized. Dense loops over every word, twice, through a popcount that is a
  // library call without -mpopcnt, measured 90 %+ of Tan's run on large datasets.
  std::vector<std::uint32_t> free = tokens;
  std::vector<std::uint32_t> active;
  std::uint64_t left = 0;
  for (std::size_t w = 0; w < words; ++w)
    if (tokens[w] != 0) {
      active.push_back(static_cast<std::uint32_t>(w));
      left += static_cast<std::uint64_t>(std::popcount(tokens[w]));
    }
  std::vector<std::uint64_t> seized(n, 0);
  adjusted.assign(n, 0.0);
  for (std::size_t i : order) {
    std::uint64_t got = 0;
    if (left > 0 && covered[i] > 0 && !repeat[i]) {
      const std::uint32_t* cov = coverage[i];
      std::size_t kept = 0;
      for (const std::uint32_t w : active) {
        const std::uint32_t take = cov[w] & free[w];
        if (take != 0) {
          got += static_cast<std::uint64_t>(std::popcount(take));
          free[w] &= ~take;
        }
        active[kept] = w;
        kept += free[w] != 0 ? 1 : 0;
      }
      active.resize(kept);
      left -= got;
    }
    seized[i] = got;
    adjusted[i] = covered[i] > 0 ? raw[i] * static_cast<double>(got) / static_cast<double>(covered[i]) : 0.0;
  }
  return seized;
}

Replacement steady_state_replacement(const std::vector<const std::uint32_t*>& coverage, const std::vector<double>& raw,
                                     const std::vector<std::uint64_t>& covered, const std::vector<std::uint32_t>& tokens,
                                     std::size_t population, std::size_t elite,
                                     const std::function<bool(std::size_t, std::size_t)>& same) {
  Replacement r;
  r.seized = token_competition(coverage, raw, covered, tokens, r.adjusted);
  const std::size_t n = raw.size();
  std::vector<std::size_t> idx(n);
  std::iota(idx.begin(), idx.end(), std::size_t{0});
  std::stable_sort(idx.begin(), idx.end(), [&](std::size_t a, std::size_t b) {
    if ((r.seized[a] > 0) != (r.seized[b] > 0)) return r.seized[a] > 0;
    if (r.adjusted[a] != r.adjusted[b]) return r.adjusted[a] > r.adjusted[b];
    return raw[a] > raw[b];
  });
  r.survivors.assign(idx.begin(), idx.begin() + static_cast<std::ptrdiff_t>(std::min(population, n)));
  std::vector<std::size_t> cand;
  for (std::size_t i = 0; i < n; ++i)
    if (r.seized[i] > 0 && raw[i] > 0) cand.push_back(i);
  std::stable_sort(cand.begin(), cand.end(), [&](std::size_t a, std::size_t b) { return raw[a] > raw[b]; });
  for (std::size_t i : cand) {
    if (r.archive.size() >= elite) break;
    bool dup = false;
    for (std::size_t j : r.archive) dup = dup || same(i, j);
    if (!dup) r.archive.push_back(i);
  }
  return r;
}

namespace {

// One batched engine call per population; accounts evaluations and GPops.
class PopulationEvaluator {
 public:
  PopulationEvaluator(rules::RuleEvaluator& e, RunStats& s) : engine_(e), stats_(s) {}
  std::shared_ptr<rules::RuleCounts> operator()(const std::vector<Tree>& trees, rules::Want want) {
    tokens_.clear();
    for (const Tree& t : trees) tokens_.add(encode(t));
    // A result nobody holds any more is reused: Tan keeps every generation's coverage alive only
    // while its rules survive, and reusing a buffer of the same shape skips tens of MB of
    // allocation and zero-filling per generation on large datasets.
    std::shared_ptr<rules::RuleCounts> out;
    for (auto& p : pool_)
      if (p.use_count() == 1) {
        out = p;
        break;
      }
    if (!out) {
      out = std::make_shared<rules::RuleCounts>();
      pool_.push_back(out);
    }
    Stopwatch sw;
    engine_.evaluate(tokens_, *out, stats_.engine, want);
    stats_.engine_call_seconds += sw.seconds();
    if (stats_.recorder) stats_.recorder->on_call(tokens_, want, *out);
    ++stats_.evaluations;
    stats_.rules_evaluated += trees.size();
    stats_.gpops += out->gpops;
    return out;
  }

 private:
  rules::RuleEvaluator& engine_;
  RunStats& stats_;
  rules::RulePopulation tokens_;
  std::vector<std::shared_ptr<rules::RuleCounts>> pool_;
};

// Selection, crossover and mutation (pm = 0: none, and no mutation phase) of one generation.
std::vector<Tree> breed(Rng& rng, const std::vector<Tree>& pop, const std::vector<double>& fit, bool minimise,
                        const GpParams& p, const Terminals& terms, double pm, RunStats& st) {
  const std::size_t n = pop.size();
  std::vector<std::size_t> parents(n);
  {
    auto s = st.phases.scope("selection");
    for (std::size_t i = 0; i < n; ++i) parents[i] = tournament(rng, fit, p.tournament(), minimise);
  }
  std::vector<Tree> kids(n);
  {
    auto s = st.phases.scope("crossover");
    for (std::size_t i = 0; i + 1 < n; i += 2) {
      const Tree& a = pop[parents[i]];
      const Tree& b = pop[parents[i + 1]];
      if (rng.bernoulli(p.crossover_probability)) crossover(rng, terms.grammar(), a, b, kids[i], kids[i + 1]);
      else {
        kids[i] = a;
        kids[i + 1] = b;
      }
    }
    if (n % 2) kids[n - 1] = pop[parents[n - 1]];
  }
  if (pm > 0) {
    auto s = st.phases.scope("mutation");
    for (Tree& k : kids)
      if (rng.bernoulli(pm)) mutate(rng, terms, k);
  }
  return kids;
}

bool perfect(const rules::ConfusionMatrix& m) { return m.fp == 0 && m.fn == 0; }

// Index of the best value (first on ties).
std::size_t best_index(const std::vector<double>& f, bool minimise) {
  std::size_t b = 0;
  for (std::size_t i = 1; i < f.size(); ++i)
    if (minimise ? f[i] < f[b] : f[i] > f[b]) b = i;
  return b;
}
std::size_t worst_index(const std::vector<double>& f, bool minimise) { return best_index(f, !minimise); }

// ---- Falco et al.: one run per class, the best rule of each run ----
void falco_class(const Dataset& d, int k, const GpParams& p, std::uint64_t seed, const Terminals& terms,
                 PopulationEvaluator& eval, RunStats& st, RuleEntry& out) {
  Rng rng = Rng(seed).split(static_cast<std::uint64_t>(k));
  const std::size_t n = static_cast<std::size_t>(p.population);
  std::vector<Tree> pop;
  {
    auto s = st.phases.scope("init_creation");
    pop = ramped_half_and_half(rng, terms, n);
  }
  std::vector<double> fit(n);
  std::vector<rules::ConfusionMatrix> conf(n);
  const auto assess = [&](const std::vector<Tree>& trees, std::vector<double>& f, std::vector<rules::ConfusionMatrix>& m) {
    const auto counts = eval(trees, rules::Want::counts);
    for (std::size_t i = 0; i < trees.size(); ++i) {
      m[i] = counts->confusion(i, k);
      f[i] = falco_fitness(m[i], d.rows(), size(trees[i]), p.alpha);
    }
  };
  {
    auto s = st.phases.scope("init_evaluation");
    assess(pop, fit, conf);
  }
  std::size_t b = best_index(fit, true);
  {
    auto s = st.phases.scope("control");
    st.trace.push_back(fit[b]);
  }
  for (int g = 0; g < p.generations; ++g) {
    if (p.stop_when_perfect && perfect(conf[b])) break;
    std::vector<Tree> kids = breed(rng, pop, fit, true, p, terms, p.mutation_probability, st);
    std::vector<double> kfit(n);
    std::vector<rules::ConfusionMatrix> kconf(n);
    {
      auto s = st.phases.scope("evaluation");
      assess(kids, kfit, kconf);
    }
    {
      auto s = st.phases.scope("replacement");  // generational, the best rule survives
      const std::size_t w = worst_index(kfit, true);
      if (fit[b] < kfit[w]) {
        kids[w] = pop[b];
        kfit[w] = fit[b];
        kconf[w] = conf[b];
      }
      pop = std::move(kids);
      fit = std::move(kfit);
      conf = std::move(kconf);
    }
    {
      auto s = st.phases.scope("control");
      b = best_index(fit, true);
      st.trace.push_back(fit[b]);
      ++st.generations;
    }
  }
  out.tree = pop[b];
  out.consequent = k;
  out.fitness = fit[b];
  out.train = conf[b];
}

// ---- Tan et al.: one run per class, token competition, external population ----
struct Member {
  Tree tree;
  double raw = 0.0, adjusted = 0.0;
  std::uint64_t seized = 0;
  rules::ConfusionMatrix m;
  std::shared_ptr<const rules::RuleCounts> counts;  // holds the coverage words
  std::size_t index = 0;                            // in counts
  const std::uint32_t* coverage() const { return counts->coverage_of(index); }
};

void tan_class(const Dataset& d, int k, const GpParams& p, std::uint64_t seed, const Terminals& terms,
               PopulationEvaluator& eval, RunStats& st, std::vector<RuleEntry>& out) {
  Rng rng = Rng(seed).split(static_cast<std::uint64_t>(k));
  const std::size_t n = static_cast<std::size_t>(p.population);
  std::vector<std::uint32_t> tokens((d.rows() + 31) / 32, 0u);  // the positive instances
  for (std::size_t i = 0; i < d.rows(); ++i)
    if (d.label(i) == k) tokens[i / 32] |= 1u << (i % 32);
  const auto assess = [&](std::vector<Tree> trees) {
    const std::shared_ptr<const rules::RuleCounts> counts = eval(trees, rules::Want::counts_and_coverage);
    std::vector<Member> ms(trees.size());
    for (std::size_t i = 0; i < trees.size(); ++i) {
      ms[i].tree = std::move(trees[i]);
      ms[i].m = counts->confusion(i, k);
      ms[i].raw = tan_fitness(ms[i].m, p.w1, p.w2);
      ms[i].counts = counts;
      ms[i].index = i;
    }
    return ms;
  };
  std::vector<Tree> init;
  {
    auto s = st.phases.scope("init_creation");
    init = ramped_half_and_half(rng, terms, n);
  }
  // Token competition over `ms` (adjusted fitness and tokens seized); the next population and
  // external population when `population` > 0.
  const auto compete = [&](std::vector<Member>& ms, std::size_t population, std::size_t elite_n,
                           std::vector<Member>* next_pop, std::vector<Member>* next_archive) {
    std::vector<const std::uint32_t*> cov;
    std::vector<double> raw;
    std::vector<std::uint64_t> covered;  // the positive instances covered: the engine's tp
    for (const Member& m : ms) {
      cov.push_back(m.coverage());
      raw.push_back(m.raw);
      covered.push_back(m.m.tp);
    }
    const Replacement r = steady_state_replacement(cov, raw, covered, tokens, population, elite_n,
                                                   [&](std::size_t i, std::size_t j) { return ms[i].tree == ms[j].tree; });
    for (std::size_t i = 0; i < ms.size(); ++i) {
      ms[i].seized = r.seized[i];
      ms[i].adjusted = r.adjusted[i];
    }
    if (next_archive) {
      next_archive->clear();
      for (std::size_t i : r.archive) next_archive->push_back(ms[i]);
    }
    if (next_pop) {
      std::vector<Member> np;
      for (std::size_t i : r.survivors) np.push_back(std::move(ms[i]));
      *next_pop = std::move(np);
    }
  };
  const std::size_t elite_n = static_cast<std::size_t>(p.elite_size);
  std::vector<Member> pop, archive;
  {
    auto s = st.phases.scope("init_evaluation");  // token competition adjusts the fitness
    pop = assess(std::move(init));
    compete(pop, n, elite_n, nullptr, &archive);
  }
  const auto best_raw = [](const std::vector<Member>& ms) {
    std::size_t b = 0;
    for (std::size_t i = 1; i < ms.size(); ++i)
      if (ms[i].raw > ms[b].raw) b = i;
    return b;
  };
  {
    auto s = st.phases.scope("control");
    st.trace.push_back(pop[best_raw(pop)].raw);
  }
  for (int g = 0; g < p.generations; ++g) {
    if (p.stop_when_perfect && !archive.empty() && perfect(archive.front().m)) break;
    std::vector<Tree> trees;
    std::vector<double> fit;
    for (const Member& m : pop) {
      trees.push_back(m.tree);
      fit.push_back(m.adjusted);
    }
    std::vector<Tree> kids = breed(rng, trees, fit, false, p, terms, p.mutation_probability, st);
    std::vector<Member> born;
    {
      auto s = st.phases.scope("evaluation");
      born = assess(std::move(kids));
    }
    {
      auto s = st.phases.scope("replacement");
      std::vector<Member> all = std::move(pop);
      all.insert(all.end(), std::make_move_iterator(born.begin()), std::make_move_iterator(born.end()));
      all.insert(all.end(), archive.begin(), archive.end());
      compete(all, n, elite_n, &pop, &archive);
    }
    {
      auto s = st.phases.scope("control");
      st.trace.push_back(archive.empty() ? pop[best_raw(pop)].raw : archive.front().raw);
      ++st.generations;
    }
  }
  // The class's rules: the external population's rules that still seize tokens among themselves.
  compete(archive, 0, 0, nullptr, nullptr);
  for (const Member& m : archive)
    if (m.seized > 0 && m.raw > 0) {
      RuleEntry e;
      e.tree = m.tree;
      e.consequent = k;
      e.fitness = m.raw;
      e.train = m.m;
      out.push_back(std::move(e));
    }
}

// ---- Bojarczuk et al.: one run, every class at once ----
void bojarczuk_run(const Dataset& d, const GpParams& p, std::uint64_t seed, const Terminals& terms,
                   PopulationEvaluator& eval, RunStats& st, std::vector<RuleEntry>& out) {
  Rng rng = Rng(seed).split(0);
  const std::size_t n = static_cast<std::size_t>(p.population);
  const int classes = d.num_classes();
  const int maxnodes = terms.grammar().max_nodes;
  std::vector<RuleEntry> best(static_cast<std::size_t>(classes));
  std::vector<bool> have(static_cast<std::size_t>(classes), false);
  // Fitness for the best class (the consequent); the per-class bests seen so far.
  const auto assess = [&](const std::vector<Tree>& trees, std::vector<double>& fit) {
    const auto counts = eval(trees, rules::Want::counts);
    fit.assign(trees.size(), 0.0);
    for (std::size_t i = 0; i < trees.size(); ++i) {
      const int nodes = size(trees[i]);
      for (int c = 0; c < classes; ++c) {
        const rules::ConfusionMatrix m = counts->confusion(i, c);
        const double f = bojarczuk_fitness(m, nodes, maxnodes);
        fit[i] = std::max(fit[i], f);
        RuleEntry& bc = best[static_cast<std::size_t>(c)];
        if (!have[static_cast<std::size_t>(c)] || f > bc.fitness) {
          have[static_cast<std::size_t>(c)] = true;
          bc.tree = trees[i];
          bc.consequent = c;
          bc.fitness = f;
          bc.train = m;
        }
      }
    }
  };
  std::vector<Tree> pop;
  {
    auto s = st.phases.scope("init_creation");
    pop = ramped_half_and_half(rng, terms, n);
  }
  std::vector<double> fit;
  {
    auto s = st.phases.scope("init_evaluation");
    assess(pop, fit);
  }
  const auto all_perfect = [&] {
    for (int c = 0; c < classes; ++c)
      if (d.rows() > 0 && !perfect(best[static_cast<std::size_t>(c)].train)) return false;
    return true;
  };
  {
    auto s = st.phases.scope("control");
    st.trace.push_back(fit[best_index(fit, false)]);
  }
  for (int g = 0; g < p.generations; ++g) {
    if (p.stop_when_perfect && all_perfect()) break;
    std::vector<Tree> kids = breed(rng, pop, fit, false, p, terms, 0.0, st);  // no mutation
    std::vector<double> kfit;
    {
      auto s = st.phases.scope("evaluation");
      assess(kids, kfit);
    }
    {
      auto s = st.phases.scope("replacement");
      const std::size_t b = best_index(fit, false), w = worst_index(kfit, false);
      if (fit[b] > kfit[w]) {
        kids[w] = pop[b];
        kfit[w] = fit[b];
      }
      pop = std::move(kids);
      fit = std::move(kfit);
    }
    {
      auto s = st.phases.scope("control");
      st.trace.push_back(fit[best_index(fit, false)]);
      ++st.generations;
    }
  }
  for (int c = 0; c < classes; ++c)
    if (have[static_cast<std::size_t>(c)] && best[static_cast<std::size_t>(c)].fitness > 0)
      out.push_back(best[static_cast<std::size_t>(c)]);
}

}  // namespace

Classifier train(const Dataset& d, const GpParams& p, std::uint64_t seed, rules::RuleEvaluator& engine, RunStats& st) {
  GPUDM_REQUIRE(d.task() == Task::classification, "gp_rules: dataset '" + d.name() + "' is not a classification dataset");
  GPUDM_REQUIRE(d.rows() > 0, "gp_rules: dataset '" + d.name() + "' has no rows");
  GPUDM_REQUIRE(p.population >= 2, "gp_rules: population must be >= 2");
  const Grammar g = p.grammar();
  const Terminals terms(d, g);
  PopulationEvaluator eval(engine, st);
  const int classes = d.num_classes();
  Classifier c;
  const std::uint64_t per_run = 1 + static_cast<std::uint64_t>(std::max(0, p.generations));
  switch (p.algorithm) {
    case Algorithm::falco:
      st.planned_evaluations = per_run * static_cast<std::uint64_t>(classes);
      for (int k = 0; k < classes; ++k) {
        RuleEntry e;
        falco_class(d, k, p, seed, terms, eval, st, e);
        c.rules.push_back(std::move(e));
      }
      break;
    case Algorithm::tan:
      st.planned_evaluations = per_run * static_cast<std::uint64_t>(classes);
      for (int k = 0; k < classes; ++k) tan_class(d, k, p, seed, terms, eval, st, c.rules);
      break;
    case Algorithm::bojarczuk:
      st.planned_evaluations = per_run;
      bojarczuk_run(d, p, seed, terms, eval, st, c.rules);
      break;
  }
  {
    auto s = st.phases.scope("control");  // the classifier: rule order and default class
    for (RuleEntry& e : c.rules) e.tokens = encode(e.tree);
    finish_classifier(c, d, engine, st.engine);
  }
  return c;
}

}  // namespace gpudm::gp_rules
