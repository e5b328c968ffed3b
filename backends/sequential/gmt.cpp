// Sequential GMT evaluator: the oracle. Runs the six procedures' work items in order on one
// thread (EvalWork holds the shared per-item code; see algorithms/gmt/eval_steps.hpp).
#include "backends/sequential/gmt.hpp"

#include "algorithms/core/stopwatch.hpp"
#include "algorithms/gmt/eval_steps.hpp"

namespace gpudm {
namespace backend {
namespace sequential {
namespace {

class GmtEvaluator final : public gmt::ModelTreeEvaluator {
 public:
  std::string backend() const override { return "sequential"; }
  void prepare(const Dataset& train) override {
    GPUDM_REQUIRE(train.task() == Task::regression, "gmt: dataset '" + train.name() + "' is not a regression dataset");
    data_ = &train;
  }
  void evaluate(const std::vector<const gmt::FlatTree*>& trees, std::vector<gmt::EvalOutput>& out,
                PhaseTimer& timer) override {
    GPUDM_REQUIRE(data_ != nullptr, "gmt: evaluate() called before prepare()");
    out.resize(trees.size());
    for (std::size_t k = 0; k < trees.size(); ++k) {
      { auto s = timer.scope("transfers"); work_.begin(*data_, *trees[k], options_, out[k]); }
      {
        auto s = timer.scope("redistribute");
        for (int c = 0; c < work_.n_chunks(); ++c) work_.redistribute_chunk(c);
      }
      {
        auto s = timer.scope("separate");
        work_.separate_offsets();
        for (int c = 0; c < work_.n_chunks(); ++c) work_.separate_chunk(c);
      }
      {
        auto s = timer.scope("reorganize");
        work_.reorganize_layout();
        for (int t = 0; t < work_.n_qr_tasks(); ++t) work_.reorganize_block(t);
      }
      {
        auto s = timer.scope("calc_models");
        for (int t = 0; t < work_.n_qr_tasks(); ++t) work_.qr_block(t);
        for (int l = 0; l < work_.n_leaves(); ++l) work_.solve_leaf(l);
      }
      {
        auto s = timer.scope("estimate_errors");
        for (int c = 0; c < work_.n_chunks(); ++c) work_.estimate_chunk(c);
      }
      {
        auto s = timer.scope("reduction");
        for (int l = 0; l < work_.n_leaves(); ++l) work_.reduce_leaf(l);
        work_.reduce_tree();
      }
    }
  }

 private:
  const Dataset* data_ = nullptr;
  gmt::EvalWork work_;
};

}  // namespace

std::unique_ptr<gmt::ModelTreeEvaluator> make_gmt_evaluator() { return std::make_unique<GmtEvaluator>(); }

}  // namespace sequential
}  // namespace backend
}  // namespace gpudm
