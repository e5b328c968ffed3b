// Sequential Pittsburgh evaluator: the family's reference backend. One individual at a time,
// the paper's four steps in order over all rows (coverage codes buffered per individual, reused).
#include "backends/pittsburgh.hpp"

#include <vector>

#include "algorithms/core/stopwatch.hpp"
#include "algorithms/pittsburgh/cpu_kernels.hpp"

namespace gpudm::backend::sequential {

namespace {
class SequentialRuleSetEvaluator final : public pittsburgh::RuleSetEvaluator {
 public:
  std::string name() const override { return "sequential"; }
  Capabilities capabilities() const override {
    Capabilities c;
    c.reference = true;
    return c;
  }
  void prepare(const Dataset& data) override {
    GPUDM_REQUIRE(data.task() == Task::classification,
                  "pittsburgh: dataset '" + data.name() + "' is not a classification dataset");
    data_ = &data;
    schema_ = rules::Schema::of(data);
  }
  void evaluate(const pittsburgh::Population& pop, pittsburgh::EvaluationResult& res,
                PhaseTimer& timer) override {
    GPUDM_REQUIRE(data_ != nullptr, "pittsburgh/sequential: evaluate() before prepare()");
    Stopwatch enc;
    const pittsburgh::FlatPopulation f = pittsburgh::flatten(pop, schema_);
    const std::size_t n = data_->rows();
    res.reset(f, n);
    timer.add("encode", enc.seconds());
    codes_.resize(static_cast<std::size_t>(f.max_rules) * n);
    correct_.resize(n);
    double t_cov = 0, t_fit = 0, t_cls = 0, t_set = 0;
    for (std::size_t i = 0; i < f.individuals(); ++i) {
      Stopwatch sw;
      auto lap = [&sw] {
        const double s = sw.seconds();
        sw.reset();
        return s;
      };
      pittsburgh::cpu::coverage(f, *data_, i, 0, n, codes_.data(), n);
      t_cov += lap();
      pittsburgh::cpu::count_rules(f, i, codes_.data(), n, n, res.rule_confusion.data() + f.individual_rule_begin[i]);
      for (std::uint32_t r = f.individual_rule_begin[i]; r < f.individual_rule_begin[i + 1]; ++r)
        res.rule_fitness[r] = rules::sensitivity_specificity(res.rule_confusion[r]);
      t_fit += lap();
      pittsburgh::cpu::classify(f, *data_, i, codes_.data(), n, 0, n, correct_.data());
      t_cls += lap();
      res.correct[i] = pittsburgh::cpu::count_correct(correct_.data(), n);
      t_set += lap();
    }
    timer.add("coverage", t_cov);
    timer.add("rule_fitness", t_fit);
    timer.add("classification", t_cls);
    timer.add("ruleset_fitness", t_set);
    res.finish();
  }

 private:
  const Dataset* data_ = nullptr;
  rules::Schema schema_;
  std::vector<std::uint8_t> codes_, correct_;
};
}  // namespace

std::unique_ptr<pittsburgh::RuleSetEvaluator> make_pittsburgh_evaluator() {
  return std::make_unique<SequentialRuleSetEvaluator>();
}

}  // namespace gpudm::backend::sequential
