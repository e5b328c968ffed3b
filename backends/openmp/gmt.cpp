// OpenMP GMT evaluator: rows over threads in fixed chunks with per-chunk partial sums (merged in
// chunk order, so the results equal the sequential backend's bit for bit), TSQR blocks of all
// affected leaves over threads, then leaves over threads for the final solves and merges; or, on
// small data, the generation's individuals over threads (omp_mode). CpuGmtEvaluator on OmpTasks
// (dynamic, one task at a time).
#include "backends/gmt.hpp"

#include "algorithms/gmt/cpu_evaluator.hpp"
#include "backends/openmp/omp_tasks.hpp"

namespace gpudm::backend::openmp {
namespace {

class GmtEvaluator final : public gmt::CpuGmtEvaluator {
 public:
  GmtEvaluator() : CpuGmtEvaluator(std::make_unique<OmpTasks>()) {}
  std::string name() const override { return "openmp"; }
  Capabilities capabilities() const override {
    Capabilities c;
    c.threads = true;
    c.deterministic_over = "thread count and omp_mode (fixed row chunks merged in chunk order)";
    return c;
  }
  void configure(const gmt::EvalOptions& o) override {
    options_ = o;
    tasks().set_threads(o.threads);
  }
};

}  // namespace

std::unique_ptr<gmt::ModelTreeEvaluator> make_gmt_evaluator() { return std::make_unique<GmtEvaluator>(); }

}  // namespace gpudm::backend::openmp
