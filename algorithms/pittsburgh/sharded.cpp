#include "algorithms/pittsburgh/sharded.hpp"

#include "algorithms/core/error.hpp"
#include "algorithms/core/stopwatch.hpp"

namespace gpudm::pittsburgh {

RowShardedEvaluator::RowShardedEvaluator(std::unique_ptr<RuleSetEvaluator> inner, Comm& comm) : inner_(std::move(inner)), comm_(comm) {
  GPUDM_REQUIRE(inner_ != nullptr, "pittsburgh: a row-sharded evaluator needs a backend");
}

void RowShardedEvaluator::configure(const EvaluatorOptions& options) {
  RuleSetEvaluator::configure(options);
  inner_->configure(options);
}

void RowShardedEvaluator::prepare(const Dataset& data) {
  data_ = &data;
  const Dataset& mine = rows_.of(data, comm_);
  if (comm_.size() == 1 || rows_.end > rows_.begin) inner_->prepare(mine);  // (a rank without rows evaluates nothing and adds zeros)
  // The ranks leave prepare() together, so the first evaluate()'s combine does not count the wait
  // for a slower rank's preparation (without the barrier it does: 2-rank weak scaling's combine read 0.23 s).
  if (comm_.size() > 1) comm_.barrier("pittsburgh: the ranks' preparation");
}

void RowShardedEvaluator::evaluate(const Population& pop, EvaluationResult& res, PhaseTimer& timer) {
  GPUDM_REQUIRE(data_ != nullptr, "pittsburgh: evaluate() before prepare()");
  if (comm_.size() == 1) {
    inner_->evaluate(pop, res, timer);
    return;
  }
  ++calls_;
  if (rows_.end > rows_.begin) {
    inner_->evaluate(pop, res, timer);
  } else {
    std::vector<std::uint32_t> irb{0};
    for (const Individual& ind : pop.individuals) irb.push_back(irb.back() + static_cast<std::uint32_t>(ind.rules.size()));
    res.reset_counts(std::move(irb), 0);
  }
  auto s = timer.scope("combine");
  const Stopwatch sw;
  // every rule's four counts, then every individual's correct count: one integer sum
  std::vector<std::uint32_t> v;
  v.reserve(4 * res.rule_confusion.size() + res.correct.size());
  for (const rules::ConfusionMatrix& m : res.rule_confusion) v.insert(v.end(), {m.tp, m.tn, m.fp, m.fn});
  v.insert(v.end(), res.correct.begin(), res.correct.end());
  comm_.sum(v.data(), v.size(), "pittsburgh: summing the ranks' rule counts and correct rows");
  std::uint64_t gpops = res.gpops;
  comm_.sum(&gpops, 1, "pittsburgh: summing the ranks' GPops");
  std::size_t k = 0;
  for (rules::ConfusionMatrix& m : res.rule_confusion) {
    m.tp = v[k++];
    m.tn = v[k++];
    m.fp = v[k++];
    m.fn = v[k++];
  }
  for (std::uint32_t& c : res.correct) c = v[k++];
  res.gpops = gpops;
  res.rows = data_->rows();
  res.finish();
  bytes_combined_ += integer_sum_bytes(v.size() * sizeof(std::uint32_t) + sizeof(gpops), comm_.size());
  combine_seconds_ += sw.seconds();
}

nlohmann::ordered_json RowShardedEvaluator::describe() const {
  nlohmann::ordered_json j = inner_->describe();
  j["ranks"] = comm_.size();
  j["rank_rows"] = {rows_.begin, rows_.end};
  j["combine_calls"] = calls_;
  j["combine_bytes"] = bytes_combined_;
  j["combine_seconds"] = combine_seconds_;
  return j;
}

std::unique_ptr<RuleSetEvaluator> across_ranks(std::unique_ptr<RuleSetEvaluator> ev) {
  if (world().size() == 1 || ev->splits_rows_over_ranks()) return ev;
  return std::make_unique<RowShardedEvaluator>(std::move(ev), world());
}

}  // namespace gpudm::pittsburgh
