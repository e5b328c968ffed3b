#include "algorithms/rules/cpu_engine.hpp"

#include <algorithm>
#include <bit>

#include "algorithms/core/error.hpp"

namespace gpudm::rules::cpu {

ClassBits ClassBits::of(const Dataset& data) {
  ClassBits cb;
  cb.classes = data.num_classes();
  const std::size_t batches = (data.rows() + kBatchRows - 1) / kBatchRows;
  cb.words = batches * kBatchWords;
  cb.bits.assign(static_cast<std::size_t>(cb.classes) * cb.words, 0ull);
  for (std::size_t i = 0; i < data.rows(); ++i)
    cb.bits[static_cast<std::size_t>(data.label(i)) * cb.words + i / 64] |= 1ull << (i % 64);
  return cb;
}

void Prepared::prepare(const Dataset& d) {
  GPUDM_REQUIRE(d.task() == Task::classification, "rules: dataset '" + d.name() + "' is not a classification dataset");
  class_rows = rules::class_rows(d);  // checks the labels
  schema = Schema::of(d);
  class_bits = ClassBits::of(d);
  batches = (d.rows() + kBatchRows - 1) / kBatchRows;
  chunks = (batches + kChunkBatches - 1) / kChunkBatches;
  data = &d;
}

void count_chunk(const Prepared& p, const RulePopulation& pop, std::size_t r, std::size_t chunk, std::uint64_t* counts,
                 std::uint32_t* coverage) {
  const Dataset& d = *p.data;
  const std::uint32_t* tokens = pop.rule(r);
  const std::size_t b0 = chunk * kChunkBatches, b1 = std::min(p.batches, b0 + kChunkBatches);
  const std::size_t wpr32 = (d.rows() + 31) / 32;
  std::uint64_t mask[kBatchWords];
  for (std::size_t b = b0; b < b1; ++b) {
    const std::size_t begin = b * kBatchRows;
    const std::size_t n = std::min(kBatchRows, d.rows() - begin);
    evaluate_batch(tokens, d, begin, n, mask);
    const std::size_t w0 = b * kBatchWords;
    for (int c = 0; c < p.class_bits.classes; ++c) {
      const std::uint64_t* cls = p.class_bits.of_class(c) + w0;
      std::uint64_t s = 0;
      for (std::size_t k = 0; k < kBatchWords; ++k) s += static_cast<std::uint64_t>(std::popcount(mask[k] & cls[k]));
      counts[c] += s;
    }
    if (coverage) {
      for (std::size_t k = 0; k < kBatchWords; ++k) {
        const std::size_t w32 = 2 * (w0 + k);
        if (w32 < wpr32) coverage[w32] = static_cast<std::uint32_t>(mask[k]);
        if (w32 + 1 < wpr32) coverage[w32 + 1] = static_cast<std::uint32_t>(mask[k] >> 32);
      }
    }
  }
}

PopulationInfo begin_evaluation(const Prepared& p, const RulePopulation& pop, RuleCounts& out, Want want) {
  GPUDM_REQUIRE(p.data != nullptr, "rules: evaluate() before prepare()");
  const PopulationInfo info = check_population(pop, p.schema);
  out.reset(pop.size(), p.data->rows(), p.class_rows, want == Want::counts_and_coverage);
  out.gpops = info.primitives * p.data->rows();
  return info;
}

void CpuRuleEvaluator::evaluate(const RulePopulation& pop, RuleCounts& out, PhaseTimer& t, Want want) {
  {
    auto s = t.scope("encode");
    begin_evaluation(prep_, pop, out, want);
  }
  auto s = t.scope("count");
  const std::size_t classes = static_cast<std::size_t>(out.classes);
  const std::size_t nr = pop.size();
  const std::size_t tasks = prep_.chunks * nr;
  const int workers = tasks_->workers(tasks);
  const std::size_t per = nr * classes;
  sums_.assign(static_cast<std::size_t>(workers) * per, 0ull);
  std::uint32_t* cov = out.coverage.empty() ? nullptr : out.coverage.data();
  const std::size_t wpr = out.words_per_rule;
  tasks_->run_indexed(
      tasks,
      [&](std::size_t task, int worker) {
        const std::size_t chunk = task / nr, r = task % nr;
        count_chunk(prep_, pop, r, chunk, sums_.data() + static_cast<std::size_t>(worker) * per + r * classes,
                    cov ? cov + r * wpr : nullptr);
      },
      {TaskSchedule::Kind::dynamic, 4});
  for (std::size_t i = 0; i < per; ++i) {
    std::uint64_t v = 0;
    for (int k = 0; k < workers; ++k) v += sums_[static_cast<std::size_t>(k) * per + i];
    out.covered[i] = static_cast<std::uint32_t>(v);
  }
}

}  // namespace gpudm::rules::cpu
