#include "algorithms/pittsburgh/engine_evaluator.hpp"

#include <algorithm>
#include <bit>

#include "algorithms/core/comm.hpp"
#include "algorithms/core/stopwatch.hpp"
#include "algorithms/rules/sharded.hpp"

namespace gpudm::pittsburgh {

EngineRuleSetEvaluator::EngineRuleSetEvaluator(std::unique_ptr<rules::RuleEvaluator> engine, std::unique_ptr<TaskRunner> tasks)
    : engine_(rules::across_ranks(std::move(engine))), tasks_(std::move(tasks)) {}  // (rows split over MPI ranks)

void EngineRuleSetEvaluator::prepare(const Dataset& data) {
  data_ = nullptr;
  GPUDM_REQUIRE(data.task() == Task::classification,
                "pittsburgh: dataset '" + data.name() + "' is not a classification dataset");
  engine_->prepare(data);
  schema_ = rules::Schema::of(data);
  // Across ranks the decision list runs on this rank's rows only (the engine hands back their
  // coverage words, not every rank's) and the correct counts are summed over the ranks.
  row0_ = 0;
  local_rows_ = data.rows();
  sharded_ = false;
  if (auto* sharded = dynamic_cast<rules::ShardedEvaluator*>(engine_.get())) {
    sharded_ = true;  // (every rank: a rank may hold all rows, or none, and must still join the sums)
    sharded->set_local_coverage(true);
    row0_ = sharded->row_begin();  // (a multiple of 32: the words line up)
    local_rows_ = sharded->row_end() - sharded->row_begin();
  }
  words_ = (local_rows_ + 31) / 32;
  class_words_.assign(static_cast<std::size_t>(std::max(0, data.num_classes())) * words_, 0u);
  for (std::size_t i = 0; i < local_rows_; ++i)
    class_words_[static_cast<std::size_t>(data.label(row0_ + i)) * words_ + i / 32] |= 1u << (i % 32);
  data_ = &data;
}

std::uint32_t EngineRuleSetEvaluator::correct_words(const FlatPopulation& f, std::size_t ind, std::size_t first,
                                                    std::size_t w0, std::size_t w1) const {
  const std::size_t n = w1 - w0, rows = local_rows_;
  std::uint32_t und[kTaskWords], corr[kTaskWords];
  for (std::size_t k = 0; k < n; ++k) {
    const std::size_t row0 = (w0 + k) * 32;
    und[k] = rows - row0 >= 32 ? ~0u : (1u << (rows - row0)) - 1u;  // rows past the end are never undecided
    corr[k] = 0;
  }
  const std::uint32_t r0 = f.individual_rule_begin[ind], r1 = f.individual_rule_begin[ind + 1];
  for (std::uint32_t r = r0; r < r1; ++r) {
    const std::uint32_t* m = counts_.coverage_of(r - first) + w0;
    const std::uint32_t* e = class_words_.data() + static_cast<std::size_t>(f.rule_consequent[r]) * words_ + w0;
    for (std::size_t k = 0; k < n; ++k) {
      corr[k] |= m[k] & und[k] & e[k];
      und[k] &= ~m[k];
    }
  }
  const std::uint32_t* def = class_words_.data() + static_cast<std::size_t>(f.default_class[ind]) * words_ + w0;
  std::uint32_t ok = 0;
  for (std::size_t k = 0; k < n; ++k) ok += static_cast<std::uint32_t>(std::popcount(corr[k] | (und[k] & def[k])));
  return ok;
}

void EngineRuleSetEvaluator::evaluate(const Population& pop, EvaluationResult& res, PhaseTimer& timer) {
  GPUDM_REQUIRE(data_ != nullptr, "pittsburgh/" + name() + ": evaluate() before prepare()");
  Stopwatch enc;
  const FlatPopulation f = flatten(pop, schema_);
  const std::size_t rows = data_->rows();
  res.reset(f, rows);
  timer.add("encode", enc.seconds());
  const std::size_t per_rule = std::max<std::size_t>(1, words_) * sizeof(std::uint32_t);
  const std::size_t chunks = (words_ + kTaskWords - 1) / kTaskWords;
  // Phases: engine encode (validation) -> encode, its counting -> coverage; confusion matrices and
  // fitness -> rule_fitness; the decision-list pass (per-task correct counts) -> classification;
  // the per-individual sums and accuracies -> ruleset_fitness.
  double t_enc = 0, t_cov = 0, t_fit = 0, t_cls = 0, t_set = 0;
  for (std::size_t i0 = 0; i0 < f.individuals();) {
    // The batch: individuals [i0, i1) whose coverage bits fit the budget (at least one).
    std::size_t i1 = i0 + 1;
    while (i1 < f.individuals() &&
           (f.individual_rule_begin[i1 + 1] - f.individual_rule_begin[i0]) * per_rule <= kCoverageBytes)
      ++i1;
    const std::uint32_t first = f.individual_rule_begin[i0], last = f.individual_rule_begin[i1];
    const bool whole = i0 == 0 && i1 == f.individuals();
    if (!whole) {
      batch_.clear();
      for (std::uint32_t r = first; r < last; ++r) batch_.add(f.antecedents.rule(r), f.antecedents.rule_words(r));
    }
    PhaseTimer et;
    engine_->evaluate(whole ? f.antecedents : batch_, counts_, et, rules::Want::counts_and_coverage);
    t_enc += et.seconds("encode");
    t_cov += et.total() - et.seconds("encode");

    Stopwatch sw;
    for (std::uint32_t r = first; r < last; ++r) {
      res.rule_confusion[r] = counts_.confusion(r - first, f.rule_consequent[r]);
      res.rule_fitness[r] = rules::sensitivity_specificity(res.rule_confusion[r]);
    }
    t_fit += sw.seconds();
    sw.reset();
    const std::size_t tasks = (i1 - i0) * chunks;
    partial_.assign(tasks, 0u);
    tasks_->run(tasks, [&](std::size_t t) {
      const std::size_t ind = i0 + t / chunks, w0 = (t % chunks) * kTaskWords;
      partial_[t] = correct_words(f, ind, first, w0, std::min(words_, w0 + kTaskWords));
    });
    t_cls += sw.seconds();
    sw.reset();
    for (std::size_t t = 0; t < tasks; ++t) res.correct[i0 + t / chunks] += partial_[t];
    t_set += sw.seconds();
    i0 = i1;
  }
  Stopwatch sw;
  if (sharded_) {  // every rank's correct rows, summed (integers: exact)
    auto s = timer.scope("combine");
    world().sum(res.correct.data(), res.correct.size(), "pittsburgh: summing the ranks' correct rows");
  }
  for (std::size_t i = 0; i < f.individuals(); ++i)
    res.accuracy[i] = rows ? static_cast<double>(res.correct[i]) / static_cast<double>(rows) : 0.0;
  t_set += sw.seconds();
  timer.add("encode", t_enc);
  timer.add("coverage", t_cov);
  timer.add("rule_fitness", t_fit);
  timer.add("classification", t_cls);
  timer.add("ruleset_fitness", t_set);
}

}  // namespace gpudm::pittsburgh
