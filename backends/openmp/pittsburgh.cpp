// OpenMP Pittsburgh evaluator: the paper's four steps, each one parallel region over tasks
// (individual x row chunk), so the phase times are wall clock. Individuals are processed in
// batches whose coverage codes fit a fixed buffer; per-task partial counts are reduced in a
// fixed order, so results do not depend on the thread count.
#include "backends/pittsburgh.hpp"

#include <omp.h>

#include <algorithm>
#include <vector>

#include "algorithms/core/stopwatch.hpp"
#include "algorithms/pittsburgh/cpu_kernels.hpp"

namespace gpudm::backend::openmp {

namespace {
struct OmpPolicy {
  static constexpr std::size_t kChunkRows = 4096;            // rows per task
  static constexpr std::size_t kCodeBufferBytes = 256u << 20;  // coverage codes per batch
};

class OpenMPRuleSetEvaluator final : public pittsburgh::RuleSetEvaluator {
 public:
  std::string name() const override { return "openmp"; }
  Capabilities capabilities() const override {
    Capabilities c;
    c.threads = true;
    c.deterministic_over = "thread count (per-task partial counts reduced in a fixed order)";
    return c;
  }
  nlohmann::ordered_json describe() const override { return {{"threads", thread_count()}}; }
  void prepare(const Dataset& data) override {
    GPUDM_REQUIRE(data.task() == Task::classification,
                  "pittsburgh: dataset '" + data.name() + "' is not a classification dataset");
    data_ = &data;
    schema_ = rules::Schema::of(data);
  }
  void evaluate(const pittsburgh::Population& pop, pittsburgh::EvaluationResult& res,
                PhaseTimer& timer) override {
    GPUDM_REQUIRE(data_ != nullptr, "pittsburgh/openmp: evaluate() before prepare()");
    const int threads = thread_count();
    Stopwatch enc;
    const pittsburgh::FlatPopulation f = pittsburgh::flatten(pop, schema_);
    const std::size_t n = data_->rows();
    res.reset(f, n);
    timer.add("encode", enc.seconds());
    if (f.individuals() == 0 || n == 0) {
      res.finish();
      return;
    }
    const std::size_t chunk = OmpPolicy::kChunkRows;
    const std::size_t nchunks = (n + chunk - 1) / chunk;
    const std::size_t mr = static_cast<std::size_t>(std::max(1, f.max_rules));
    // Per individual: mr * n code bytes + n correct bytes.
    const std::size_t per_ind = (mr + 1) * n;
    const std::size_t batch = std::max<std::size_t>(1, OmpPolicy::kCodeBufferBytes / per_ind);
    const std::size_t bsz = std::min(batch, f.individuals());
    codes_.resize(bsz * mr * n);
    correct_.resize(bsz * n);
    partial_.resize(bsz * nchunks * mr);
    partial_correct_.resize(bsz * nchunks);
    double t_cov = 0, t_fit = 0, t_cls = 0, t_set = 0;
    const Dataset& d = *data_;
    for (std::size_t i0 = 0; i0 < f.individuals(); i0 += bsz) {
      const std::size_t i1 = std::min(f.individuals(), i0 + bsz);
      const auto tasks = static_cast<long long>((i1 - i0) * nchunks);
      auto codes_of = [&](std::size_t i) { return codes_.data() + (i - i0) * mr * n; };
      Stopwatch sw;
#pragma omp parallel for num_threads(threads) schedule(dynamic, 1)
      for (long long t = 0; t < tasks; ++t) {
        const std::size_t i = i0 + static_cast<std::size_t>(t) / nchunks;
        const std::size_t b = (static_cast<std::size_t>(t) % nchunks) * chunk, e = std::min(n, b + chunk);
        pittsburgh::cpu::coverage(f, d, i, b, e, codes_of(i) + b, n);
      }
      t_cov += sw.seconds();
      sw.reset();
#pragma omp parallel for num_threads(threads) schedule(dynamic, 1)
      for (long long t = 0; t < tasks; ++t) {
        const std::size_t i = i0 + static_cast<std::size_t>(t) / nchunks;
        const std::size_t c = static_cast<std::size_t>(t) % nchunks;
        const std::size_t b = c * chunk, e = std::min(n, b + chunk);
        rules::ConfusionMatrix* m = partial_.data() + static_cast<std::size_t>(t) * mr;
        std::fill(m, m + mr, rules::ConfusionMatrix{});
        pittsburgh::cpu::count_rules(f, i, codes_of(i) + b, n, e - b, m);
      }
      for (std::size_t i = i0; i < i1; ++i)
        for (std::size_t c = 0; c < nchunks; ++c) {
          const rules::ConfusionMatrix* m = partial_.data() + ((i - i0) * nchunks + c) * mr;
          for (std::uint32_t r = 0; r < f.rules_of(i); ++r) {
            rules::ConfusionMatrix& o = res.rule_confusion[f.individual_rule_begin[i] + r];
            o.tp += m[r].tp;
            o.tn += m[r].tn;
            o.fp += m[r].fp;
            o.fn += m[r].fn;
          }
        }
      for (std::size_t r = f.individual_rule_begin[i0]; r < f.individual_rule_begin[i1]; ++r)
        res.rule_fitness[r] = rules::sensitivity_specificity(res.rule_confusion[r]);
      t_fit += sw.seconds();
      sw.reset();
#pragma omp parallel for num_threads(threads) schedule(dynamic, 1)
      for (long long t = 0; t < tasks; ++t) {
        const std::size_t i = i0 + static_cast<std::size_t>(t) / nchunks;
        const std::size_t b = (static_cast<std::size_t>(t) % nchunks) * chunk, e = std::min(n, b + chunk);
        pittsburgh::cpu::classify(f, d, i, codes_of(i) + b, n, b, e, correct_.data() + (i - i0) * n + b);
      }
      t_cls += sw.seconds();
      sw.reset();
#pragma omp parallel for num_threads(threads) schedule(dynamic, 1)
      for (long long t = 0; t < tasks; ++t) {
        const std::size_t i = i0 + static_cast<std::size_t>(t) / nchunks;
        const std::size_t b = (static_cast<std::size_t>(t) % nchunks) * chunk, e = std::min(n, b + chunk);
        partial_correct_[static_cast<std::size_t>(t)] =
            pittsburgh::cpu::count_correct(correct_.data() + (i - i0) * n + b, e - b);
      }
      for (std::size_t i = i0; i < i1; ++i)
        for (std::size_t c = 0; c < nchunks; ++c) res.correct[i] += partial_correct_[(i - i0) * nchunks + c];
      t_set += sw.seconds();
    }
    timer.add("coverage", t_cov);
    timer.add("rule_fitness", t_fit);
    timer.add("classification", t_cls);
    timer.add("ruleset_fitness", t_set);
    res.finish();
  }

 private:
  int thread_count() const { return options_.threads > 0 ? options_.threads : omp_get_max_threads(); }

  const Dataset* data_ = nullptr;
  rules::Schema schema_;
  std::vector<std::uint8_t> codes_, correct_;
  std::vector<rules::ConfusionMatrix> partial_;
  std::vector<std::uint32_t> partial_correct_;
};
}  // namespace

std::unique_ptr<pittsburgh::RuleSetEvaluator> make_pittsburgh_evaluator() {
  return std::make_unique<OpenMPRuleSetEvaluator>();
}

}  // namespace gpudm::backend::openmp
