// OpenMP GMT evaluator: rows over threads in fixed chunks with per-chunk partial sums (merged in
// chunk order, so the results equal the sequential backend's bit for bit), TSQR blocks of all
// affected leaves over threads, then leaves over threads for the final solves and merges.
#include "backends/openmp/gmt.hpp"

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
    data_ = &train;
  }
  void evaluate(const std::vector<const gmt::FlatTree*>& trees, std::vector<gmt::EvalOutput>& out,
                PhaseTimer& timer) override {
    GPUDM_REQUIRE(data_ != nullptr, "gmt: evaluate() called before prepare()");
    const int threads = options_.threads > 0 ? options_.threads : omp_get_max_threads();
    out.resize(trees.size());
    // omp_mode "individuals", or "auto" on small data (fewer row chunks than threads; every set
    // under 16,384 rows has one chunk):
    // individuals over threads instead, each evaluated in order by its thread's own EvalWork —
    // the same per-individual arithmetic, so the results equal the sequential backend's bit for
    // bit. Phase seconds in this mode are the threads' summed phase times divided by the threads
    // that worked (they add up to about the wall time; per-phase wall times do not exist here).
    const std::size_t chunk = static_cast<std::size_t>(std::max(1, options_.chunk_rows));
    const int chunks = static_cast<int>((data_->rows() + chunk - 1) / chunk);
    using Mode = gmt::EvalOptions::OmpMode;
    const bool by_individual = options_.omp_mode == Mode::kIndividuals ||
                               (options_.omp_mode == Mode::kAuto && chunks < threads);
    if (trees.size() > 1 && by_individual) {
      const int used = static_cast<int>(std::min<std::size_t>(static_cast<std::size_t>(threads), trees.size()));
      if (works_.size() < static_cast<std::size_t>(used)) works_.resize(static_cast<std::size_t>(used));
      std::vector<PhaseTimer> timers(static_cast<std::size_t>(used));
      std::vector<std::exception_ptr> errors(trees.size());  // an exception must not leave the region
#pragma omp parallel for schedule(dynamic, 1) num_threads(used)
      for (std::size_t k = 0; k < trees.size(); ++k) {
        const auto me = static_cast<std::size_t>(omp_get_thread_num());
        try {
          gmt::evaluate_in_order(works_[me], *data_, *trees[k], options_, out[k], timers[me]);
        } catch (...) {
          errors[k] = std::current_exception();
        }
      }
      for (const auto& e : errors)
        if (e) std::rethrow_exception(e);
      timer.merge(PhaseTimer::mean(timers));
      return;
    }
    for (std::size_t k = 0; k < trees.size(); ++k) {
      { auto s = timer.scope("transfers"); work_.begin(*data_, *trees[k], options_, out[k]); }
      const int nc = work_.n_chunks();
      {
        auto s = timer.scope("redistribute");
#pragma omp parallel for schedule(static) num_threads(threads) if (nc > 1)
        for (int c = 0; c < nc; ++c) work_.redistribute_chunk(c);
      }
      {
        auto s = timer.scope("separate");
        work_.separate_offsets();
#pragma omp parallel for schedule(static) num_threads(threads) if (nc > 1)
        for (int c = 0; c < nc; ++c) work_.separate_chunk(c);
      }
      int nt = 0;
      {
        auto s = timer.scope("reorganize");
        work_.reorganize_layout();
        nt = work_.n_qr_tasks();
#pragma omp parallel for schedule(dynamic, 1) num_threads(threads) if (nt > 1)
        for (int t = 0; t < nt; ++t) work_.reorganize_block(t);
      }
      const int nl = work_.n_leaves();
      {
        auto s = timer.scope("calc_models");
#pragma omp parallel num_threads(threads) if (nt > 1 || nl > 1)
        {
#pragma omp for schedule(dynamic, 1)
          for (int t = 0; t < nt; ++t) work_.qr_block(t);
#pragma omp for schedule(dynamic, 1)
          for (int l = 0; l < nl; ++l) work_.solve_leaf(l);
        }
      }
      {
        auto s = timer.scope("estimate_errors");
#pragma omp parallel for schedule(static) num_threads(threads) if (nc > 1)
        for (int c = 0; c < nc; ++c) work_.estimate_chunk(c);
      }
      {
        auto s = timer.scope("reduction");
#pragma omp parallel for schedule(dynamic, 4) num_threads(threads) if (nl > 8)
        for (int l = 0; l < nl; ++l) work_.reduce_leaf(l);
        work_.reduce_tree();
      }
    }
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
