// OpenMP rule engine: the (chunk, rule) tasks of the sequential backend over threads, each
// thread counting into its own array (summed afterwards: integer sums, so the counts equal the
// sequential ones for any thread count). Tasks are chunk-major, so a thread's consecutive tasks
// share a chunk's column slices; small datasets (one chunk) are parallel over rules.
#include <omp.h>

#include <algorithm>
#include <vector>

#include "algorithms/core/error.hpp"
#include "algorithms/rules/cpu_engine.hpp"
#include "backends/rules.hpp"

namespace gpudm::backend::openmp {

namespace {

class OpenmpRuleEvaluator final : public rules::RuleEvaluator {
 public:
  std::string name() const override { return "openmp"; }
  Capabilities capabilities() const override {
    Capabilities c;
    c.threads = true;
    c.deterministic_over = "thread count (integer counts, summed per thread)";
    return c;
  }
  nlohmann::ordered_json describe() const override { return {{"threads", threads()}}; }
  void configure(const rules::EngineOptions& o) override {
    GPUDM_REQUIRE(o.threads >= 0, "rules/openmp: threads must be >= 0 (0 = the OpenMP default)");
    options_ = o;
  }
  void prepare(const Dataset& data) override { prep_.prepare(data); }

  void evaluate(const rules::RulePopulation& pop, rules::RuleCounts& out, PhaseTimer& t, rules::Want want) override {
    {
      auto s = t.scope("encode");
      rules::cpu::begin_evaluation(prep_, pop, out, want);
    }
    auto s = t.scope("count");
    const std::size_t classes = static_cast<std::size_t>(out.classes);
    const std::size_t nr = pop.size();
    const long long tasks = static_cast<long long>(prep_.chunks * nr);
    const int nt = std::max(1, std::min<int>(threads(), static_cast<int>(std::max<long long>(1, tasks))));
    const std::size_t per = nr * classes;
    sums_.assign(static_cast<std::size_t>(nt) * per, 0ull);
    std::uint32_t* cov = out.coverage.empty() ? nullptr : out.coverage.data();
    const std::size_t wpr = out.words_per_rule;
#pragma omp parallel num_threads(nt)
    {
      std::uint64_t* mine = sums_.data() + static_cast<std::size_t>(omp_get_thread_num()) * per;
#pragma omp for schedule(dynamic, 4)
      for (long long task = 0; task < tasks; ++task) {
        const std::size_t chunk = static_cast<std::size_t>(task) / nr, r = static_cast<std::size_t>(task) % nr;
        rules::cpu::count_chunk(prep_, pop, r, chunk, mine + r * classes, cov ? cov + r * wpr : nullptr);
      }
    }
    for (std::size_t i = 0; i < per; ++i) {
      std::uint64_t v = 0;
      for (int k = 0; k < nt; ++k) v += sums_[static_cast<std::size_t>(k) * per + i];
      out.covered[i] = static_cast<std::uint32_t>(v);
    }
  }

 private:
  int threads() const { return options_.threads > 0 ? options_.threads : omp_get_max_threads(); }
  rules::cpu::Prepared prep_;
  std::vector<std::uint64_t> sums_;
};

}  // namespace

std::unique_ptr<rules::RuleEvaluator> make_rule_evaluator() { return std::make_unique<OpenmpRuleEvaluator>(); }

}  // namespace gpudm::backend::openmp
