#pragma once
// GMT over the ranks of an MPI run. The EA runs identically on every rank from the same
// seed; an evaluate() call is split one of two ways (EvalOptions::rank_split):
//  - rows (ModelTreeEvaluator::split_rows): the sequential and OpenMP backends
//    (CpuGmtEvaluator) work on a block of whole row chunks of every tree and the ranks combine the
//    leaf counts, the small leaves' rows, the TSQR R factors and the error partials
//    (eval_steps.hpp); the CUDA fast path's GPU holds a block of whole merge groups of the rows and
//    the ranks combine the counts, keys, small leaves' rows and the groups' statistics between its
//    stats pass and its solve (backends/cuda/gmt/fused.cuh FusedGroups, fast.cu launch_split);
//  - individuals (any backend, ShardedEvaluator below): each call's trees are split into
//    contiguous blocks, each rank evaluates its block on all rows with its own backend, and the
//    evaluated trees (structure after repairs, leaf models, per-node statistics) are gathered in
//    tree order onto every rank — the GMT authors' earlier MPI design (individuals over the nodes).
// Either way every rank ends each call with exactly one process's trees, so the run is
// bit-identical to one process at any rank count. Every rank holds the whole training set. With
// one rank it is the inner backend.
#include <memory>

#include "algorithms/core/comm.hpp"
#include "algorithms/gmt/evaluator.hpp"

namespace gpudm::gmt {

class ShardedEvaluator final : public ModelTreeEvaluator {
 public:
  ShardedEvaluator(std::unique_ptr<ModelTreeEvaluator> inner, Comm& comm);
  std::string name() const override { return inner_->name(); }
  Capabilities capabilities() const override { return inner_->capabilities(); }
  nlohmann::ordered_json describe() const override;
  void configure(const EvalOptions& options) override;
  void prepare(const Dataset& data) override;
  void evaluate(const EvalBatch& batch, PhaseTimer& timer) override;
  double sse_tolerance() const override { return inner_->sse_tolerance(); }
  HostWorkers* host_pool() override { return inner_->host_pool(); }

 private:
  std::unique_ptr<ModelTreeEvaluator> inner_;
  Comm& comm_;
  int cols_ = 0;
  long long calls_ = 0;
  std::uint64_t bytes_combined_ = 0;
  double combine_seconds_ = 0.0;
};

// `eval` itself with one rank, else split over world()'s ranks as `split` says (kAuto: rows where
// the backend splits rows and the data has at least one row chunk a rank, `chunks`; else
// individuals). Throws when rows are asked of a backend that cannot split them.
std::unique_ptr<ModelTreeEvaluator> across_ranks(std::unique_ptr<ModelTreeEvaluator> eval,
                                                 EvalOptions::RankSplit split = EvalOptions::RankSplit::kAuto,
                                                 long long chunks = 0);

}  // namespace gpudm::gmt
