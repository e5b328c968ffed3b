// OpenMP GMT evaluator: rows over threads in fixed chunks with per-chunk partial sums (merged in
// chunk order, so the results equal the sequential backend's bit for bit), TSQR blocks of all
// affected leaves over threads, then leaves over threads for the final solves and merges; or, on
// small data, the generation's individuals over threads (omp_mode).
#include "backends/gmt.hpp"

#include <omp.h>

#include <algorithm>
#include <exception>
#include <string>
#include <vector>

#include "algorithms/gmt/eval_steps.hpp"

namespace gpudm {
namespace backend {
namespace openmp {
namespace {

class GmtEvaluator final : public gmt::ModelTreeEvaluator {
 public:
  std::string name() const override { return "openmp"; }
  Capabilities capabilities() const override {
    Capabilities c;
    c.threads = true;
    c.deterministic_over = "thread count and omp_mode (fixed row chunks merged in chunk order)";
    return c;
  }
  void prepare(const Dataset& train) override {
    GPUDM_REQUIRE(train.task() == Task::regression, "gmt: dataset '" + train.name() + "' is not a regression dataset");
    GPUDM_REQUIRE(train.rows() < 0xFFFFFFFFull, "gmt: datasets of 2^32 - 1 rows or more are not supported");
    data_ = &train;
  }
  void evaluate(const gmt::EvalBatch& batch, PhaseTimer& timer) override {
    GPUDM_REQUIRE(data_ != nullptr, "gmt: evaluate() called before prepare()");
    GPUDM_REQUIRE(batch.salts.size() == batch.trees.size(), "gmt: one salt per tree");
    const int threads = options_.threads > 0 ? options_.threads : omp_get_max_threads();
    ++counters_.calls;
    std::vector<gmt::RepairOutcome> outcomes(batch.size());
    // omp_mode "individuals", or "auto" on small data (fewer row chunks than threads; every set
    // under 16,384 rows has one chunk): individuals over threads, each evaluated in order by its
    // thread's own EvalWork — the same per-individual arithmetic, so the results equal the
    // sequential backend's bit for bit. Phase seconds in this mode are the threads' summed phase
    // times divided by the threads that worked (they add up to about the wall time).
    const std::size_t chunk = static_cast<std::size_t>(std::max(1, options_.chunk_rows));
    const int chunks = static_cast<int>((data_->rows() + chunk - 1) / chunk);
    using Mode = gmt::EvalOptions::OmpMode;
    const bool by_individual = options_.omp_mode == Mode::kIndividuals || (options_.omp_mode == Mode::kAuto && chunks < threads);
    if (batch.size() > 1 && by_individual) {
      const int used = static_cast<int>(std::min<std::size_t>(static_cast<std::size_t>(threads), batch.size()));
      if (works_.size() < static_cast<std::size_t>(used)) works_.resize(static_cast<std::size_t>(used));
      std::vector<PhaseTimer> timers(static_cast<std::size_t>(used));
      std::vector<std::exception_ptr> errors(batch.size());  // an exception must not leave the region
#pragma omp parallel for schedule(dynamic, 1) num_threads(used)
      for (std::size_t k = 0; k < batch.size(); ++k) {
        const auto me = static_cast<std::size_t>(omp_get_thread_num());
        try {
          outcomes[k] = gmt::evaluate_tree(works_[me], *data_, *batch.trees[k], batch.salts[k], options_, batch.repair,
                                           timers[me], gmt::for_each_in_order());
        } catch (...) {
          errors[k] = std::current_exception();
        }
      }
      for (const auto& e : errors)
        if (e) std::rethrow_exception(e);
      timer.merge(PhaseTimer::mean(timers));
    } else {
      const gmt::ForEach loop = [threads](int n, const std::function<void(int)>& body) {
        std::exception_ptr error;
#pragma omp parallel for schedule(dynamic, 1) num_threads(threads) if (n > 1)
        for (int i = 0; i < n; ++i) {
          try {
            body(i);
          } catch (...) {
#pragma omp critical(gmt_omp_error)
            if (!error) error = std::current_exception();
          }
        }
        if (error) std::rethrow_exception(error);
      };
      for (std::size_t k = 0; k < batch.size(); ++k)
        outcomes[k] = gmt::evaluate_tree(work_, *data_, *batch.trees[k], batch.salts[k], options_, batch.repair, timer, loop);
    }
    for (const auto& r : outcomes) count_tree(r);
  }

 private:
  const Dataset* data_ = nullptr;
  gmt::EvalWork work_;
  std::vector<gmt::EvalWork> works_;  // individual-parallel mode: one per thread
};

}  // namespace

std::unique_ptr<gmt::ModelTreeEvaluator> make_gmt_evaluator() { return std::make_unique<GmtEvaluator>(); }

}  // namespace openmp
}  // namespace backend
}  // namespace gpudm
