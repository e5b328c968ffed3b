// Sequential rule engine, the oracle of the engine's equivalence tests: every (chunk, rule)
// task of algorithms/rules/cpu_engine in order on one core, chunk-major so a chunk's column
// slices stay in cache while the whole population runs on them.
#include <vector>

#include "algorithms/rules/cpu_engine.hpp"
#include "backends/rules.hpp"

namespace gpudm::backend::sequential {

namespace {

class SequentialRuleEvaluator final : public rules::RuleEvaluator {
 public:
  std::string name() const override { return "sequential"; }
  Capabilities capabilities() const override {
    Capabilities c;
    c.reference = true;
    return c;
  }
  nlohmann::ordered_json describe() const override { return {{"threads", 1}}; }
  void prepare(const Dataset& data) override { prep_.prepare(data); }

  void evaluate(const rules::RulePopulation& pop, rules::RuleCounts& out, PhaseTimer& t, rules::Want want) override {
    {
      auto s = t.scope("encode");
      rules::cpu::begin_evaluation(prep_, pop, out, want);
    }
    auto s = t.scope("count");
    const std::size_t classes = static_cast<std::size_t>(out.classes);
    sums_.assign(pop.size() * classes, 0ull);
    for (std::size_t chunk = 0; chunk < prep_.chunks; ++chunk)
      for (std::size_t r = 0; r < pop.size(); ++r)
        rules::cpu::count_chunk(prep_, pop, r, chunk, sums_.data() + r * classes,
                                out.coverage.empty() ? nullptr : out.coverage.data() + r * out.words_per_rule);
    for (std::size_t i = 0; i < sums_.size(); ++i) out.covered[i] = static_cast<std::uint32_t>(sums_[i]);
  }

 private:
  rules::cpu::Prepared prep_;
  std::vector<std::uint64_t> sums_;
};

}  // namespace

std::unique_ptr<rules::RuleEvaluator> make_rule_evaluator() { return std::make_unique<SequentialRuleEvaluator>(); }

}  // namespace gpudm::backend::sequential
