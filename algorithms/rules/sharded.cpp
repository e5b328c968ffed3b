#include "algorithms/rules/sharded.hpp"

#include <algorithm>

#include "algorithms/core/error.hpp"
#include "algorithms/core/stopwatch.hpp"

namespace gpudm::rules {

ShardedEvaluator::ShardedEvaluator(std::unique_ptr<RuleEvaluator> inner, Comm& comm) : inner_(std::move(inner)), comm_(comm) {
  GPUDM_REQUIRE(inner_ != nullptr, "rules: a sharded engine needs a backend");
}

void ShardedEvaluator::configure(const EngineOptions& options) {
  RuleEvaluator::configure(options);
  inner_->configure(options);
}

void ShardedEvaluator::prepare(const Dataset& data) {
  data_ = &data;
  class_rows_ = class_rows(data);
  const Dataset& mine = rows_.of(data, comm_);
  inner_->prepare(mine);
}

void ShardedEvaluator::evaluate(const RulePopulation& pop, RuleCounts& out, PhaseTimer& timer, Want want) {
  GPUDM_REQUIRE(data_ != nullptr, "rules: evaluate before prepare");
  if (comm_.size() == 1) {
    inner_->evaluate(pop, out, timer, want);
    return;
  }
  ++calls_;
  inner_->evaluate(pop, part_, timer, want);
  auto s = timer.scope("combine");
  const Stopwatch sw;
  struct Add {  // combine_seconds_ += the step's time on every way out
    const Stopwatch& w;
    double& to;
    ~Add() { to += w.seconds(); }
  } add{sw, combine_seconds_};
  out.reset(pop.size(), data_->rows(), class_rows_, want == Want::counts_and_coverage && !local_coverage_);
  // Counts: each rank's block summed in rank order (integers, exact); GPops with them.
  wide_.assign(part_.covered.begin(), part_.covered.end());
  wide_.push_back(part_.gpops);
  comm_.sum(wide_.data(), wide_.size(), "rule engine: summing the ranks' counts");
  for (std::size_t i = 0; i < out.covered.size(); ++i) out.covered[i] = static_cast<std::uint32_t>(wide_[i]);
  out.gpops = wide_.back();
  bytes_combined_ += integer_sum_bytes(wide_.size() * sizeof(std::uint64_t), comm_.size());
  if (want != Want::counts_and_coverage || pop.size() == 0) return;
  if (local_coverage_) {  // this rank's words only (the caller sums what it derives from them)
    out.words_per_rule = part_.words_per_rule;
    out.coverage.swap(part_.coverage);
    return;
  }
  // Coverage: rank r's words of rule i are words [begin_r / 32, end_r / 32) of the rule's row; every
  // block but the last is whole words (boundaries are multiples of 32 rows).
  const std::vector<std::uint32_t> all = comm_.gather_all(part_.coverage, "rule engine: gathering the ranks' coverage");
  bytes_combined_ += all.size() * sizeof(std::uint32_t);
  std::size_t at = 0;
  for (int r = 0; r < comm_.size(); ++r) {
    const auto [b, e] = shard(data_->rows(), r, comm_.size(), 32);
    const std::size_t words = (e - b + 31) / 32, w0 = b / 32;
    for (std::size_t i = 0; i < pop.size(); ++i)
      std::copy_n(all.begin() + static_cast<std::ptrdiff_t>(at + i * words), words,
                  out.coverage.begin() + static_cast<std::ptrdiff_t>(i * out.words_per_rule + w0));
    at += words * pop.size();
  }
  GPUDM_REQUIRE(at == all.size(), "rules: the ranks' coverage blocks do not add up (internal error)");
}

std::unique_ptr<RuleEvaluator> across_ranks(std::unique_ptr<RuleEvaluator> engine) {
  if (world().size() == 1) return engine;
  return std::make_unique<ShardedEvaluator>(std::move(engine), world());
}

nlohmann::ordered_json ShardedEvaluator::describe() const {
  nlohmann::ordered_json j = inner_->describe();
  j["ranks"] = comm_.size();
  j["rank_rows"] = {rows_.begin, rows_.end};
  j["combine_calls"] = calls_;
  j["combine_bytes"] = bytes_combined_;
  j["combine_seconds"] = combine_seconds_;
  return j;
}

}  // namespace gpudm::rules
