#include "algorithms/gmt/cpu_evaluator.hpp"

#include <algorithm>
#include <string>

namespace gpudm::gmt {

void CpuGmtEvaluator::prepare(const Dataset& train) {
  GPUDM_REQUIRE(train.task() == Task::regression, "gmt: dataset '" + train.name() + "' is not a regression dataset");
  GPUDM_REQUIRE(train.rows() < 0xFFFFFFFFull, "gmt: datasets of 2^32 - 1 rows or more are not supported");
  data_ = &train;
}

void CpuGmtEvaluator::evaluate(const EvalBatch& batch, PhaseTimer& timer) {
  GPUDM_REQUIRE(data_ != nullptr, "gmt: evaluate() called before prepare()");
  GPUDM_REQUIRE(batch.salts.size() == batch.trees.size(), "gmt: one salt per tree");
  const int threads = tasks_->threads();
  ++counters_.calls;
  std::vector<RepairOutcome> outcomes(batch.size());
  // omp_mode "individuals", or "auto" on small data (fewer row chunks than threads; every set
  // under 16,384 rows has one chunk): individuals as tasks, each evaluated in order by its
  // worker's own EvalWork — the same per-individual arithmetic, so the results equal the
  // sequential backend's bit for bit. Phase seconds in this mode are the workers' summed phase
  // times divided by the workers that worked (they add up to about the wall time).
  const std::size_t chunk = static_cast<std::size_t>(std::max(1, options_.chunk_rows));
  const int chunks = static_cast<int>((data_->rows() + chunk - 1) / chunk);
  using Mode = EvalOptions::OmpMode;
  const bool by_individual =
      comm_ == nullptr && (options_.omp_mode == Mode::kIndividuals || (options_.omp_mode == Mode::kAuto && chunks < threads));
  // A procedure's work items over the runner's threads (the rows modes below).
  const ForEach loop = [this](int n, const std::function<void(int)>& body) {
    tasks_->run(static_cast<std::size_t>(std::max(0, n)), [&](std::size_t i) { body(static_cast<int>(i)); });
  };
  if (batch.size() > 1 && by_individual) {
    const int used = tasks_->workers(batch.size());
    if (works_.size() < static_cast<std::size_t>(used)) works_.resize(static_cast<std::size_t>(used));
    std::vector<PhaseTimer> timers(static_cast<std::size_t>(used));
    tasks_->run_indexed(batch.size(), [&](std::size_t k, int me) {
      outcomes[k] = evaluate_tree(works_[static_cast<std::size_t>(me)], *data_, *batch.trees[k], batch.salts[k], options_,
                                  batch.repair, timers[static_cast<std::size_t>(me)], for_each_in_order());
    });
    timer.merge(PhaseTimer::mean(timers));
  } else if (comm_ != nullptr) {
    // Rows split over ranks: the trees in groups, phase by phase (4 collectives a group instead of
    // 4 a tree). A work holds 12 bytes a training row (leaf_of_, order_) and its leaves' matrices,
    // at most 8 x (attributes + 2) bytes a row (sized for all rows, filled with this rank's), so a
    // group is as many trees as that bound fits in 1 GiB (Armchair 1M: 24 trees; Year-shaped: 2).
    const std::size_t per_tree = std::max<std::size_t>(1, data_->rows() * (12 + 8 * (data_->cols() + 2)));
    const std::size_t group = std::clamp<std::size_t>((std::size_t{1} << 30) / per_tree, 1, std::max<std::size_t>(1, batch.size()));
    if (group_.size() < group) {
      group_.resize(group);
      for (EvalWork& w : group_) w.set_ranks(comm_);
    }
    for (std::size_t b = 0; b < batch.size(); b += group) {
      const std::size_t e = std::min(batch.size(), b + group);
      std::vector<EvalWork*> ws;
      for (std::size_t k = b; k < e; ++k) ws.push_back(&group_[k - b]);
      const std::vector<Tree*> ts(batch.trees.begin() + static_cast<std::ptrdiff_t>(b), batch.trees.begin() + static_cast<std::ptrdiff_t>(e));
      const std::vector<std::uint64_t> ss(batch.salts.begin() + static_cast<std::ptrdiff_t>(b), batch.salts.begin() + static_cast<std::ptrdiff_t>(e));
      const std::vector<RepairOutcome> r = evaluate_trees(ws, *data_, ts, ss, options_, batch.repair, timer, loop, &account_);
      std::copy(r.begin(), r.end(), outcomes.begin() + static_cast<std::ptrdiff_t>(b));
    }
  } else {
    for (std::size_t k = 0; k < batch.size(); ++k)
      outcomes[k] = evaluate_tree(work_, *data_, *batch.trees[k], batch.salts[k], options_, batch.repair, timer, loop);
  }
  for (const auto& r : outcomes) count_tree(r);
}

bool CpuGmtEvaluator::split_rows(Comm& comm) {
  comm_ = comm.size() > 1 ? &comm : nullptr;
  group_.clear();
  return true;
}

nlohmann::ordered_json CpuGmtEvaluator::describe() const {
  nlohmann::ordered_json j = ModelTreeEvaluator::describe();
  if (comm_ != nullptr) {
    j["ranks"] = comm_->size();
    j["rank_split"] = "rows";
    if (!group_.empty()) j["rank_chunks"] = nlohmann::ordered_json::array({group_.front().chunk_begin(), group_.front().chunk_end()});
    j["combine_calls"] = account_.calls;
    j["combine_bytes"] = account_.bytes;
  }
  return j;
}

}  // namespace gpudm::gmt
