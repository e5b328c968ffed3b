// CUDA ModelTreeEvaluator: owns the stream, the training set (uploaded once, column-major,
// padded: the paper's SoA layout), the exact leaf solver (cuSOLVER/cuBLAS handles) and one of
// the two paths (paths.cuh): "fast" (default) or "faithful" (the paper's design).
//
// Agreement with the sequential oracle (tests/gmt/test_cuda.cpp, test_reference.cpp):
//  - identical: node counts, leaf assignment (through counts and the dipole rows lo / hi / rand),
//    rank decisions (the same columns dropped), the repairs (decided from the counts);
//  - double (both paths): SSE within 1e-8 relative (+ 1e-12 x sum y^2 for exact fits);
//    coefficients within 1e-8 x the leaf's largest coefficient on well-conditioned leaves, 1e-6
//    at worst on real data with correlated attributes (fast path). The faithful path solves the
//    same QR problem in another order (~1e-13). The fast path solves the normal equations of a
//    centred Gram matrix accumulated in FP64 (shifted by the leaf's first row, so constant
//    columns are exactly zero; leaf_stats.hpp); its error grows like eps x cond(G) =
//    eps x cond(X)^2, and every pivot at or below fast_pivot_guard (1e-6) x its column's centred
//    norm^2, i.e. cond(X) >~ 1e3 in that column, or within 100x of the CPU's rank_tol, is solved
//    again by the exact QR solver, so no rank decision is taken from a rounded pivot and the
//    coefficients' error stays below ~1e-6. The fast path's SSE comes from the same statistics
//    (C_yy - |L^-1 C_xy|^2: no second pass over the rows), so its error is eps x cond(G) x the
//    leaf's centred sum of squares; its SAE is not computed (NaN: nothing in the EA reads it).
//  - float (faithful path, the paper's precision): counts identical; rank_tol is raised to 1e-5
//    (float rounding), so rank decisions can differ on nearly dependent columns; SSE within 1e-3.
// Results of the fast path do not depend on scheduling (fixed summation orders); the faithful
// path sums with atomics as the paper (last bits vary between runs).
#include <chrono>
#include <cstdlib>
#include <memory>
#include <thread>
#include <optional>
#include <string>

#include "backends/cuda/common/common.cuh"
#include "backends/gmt.hpp"
#include "backends/cuda/gmt/leaf_solver.cuh"
#include "backends/cuda/gmt/paths.cuh"

namespace gpudm::backend::cuda {

namespace {

namespace g = gmt_cuda;
using ::gpudm::gmt::EvalOptions;

class CudaGmtEvaluator final : public ::gpudm::gmt::ModelTreeEvaluator {
 public:
  CudaGmtEvaluator() : device_(require_device()) {}

  std::string name() const override { return "cuda"; }
  Capabilities capabilities() const override {
    Capabilities c;
    c.placement = Placement::device;
    c.devices = 1;
    c.deterministic_over = faithful() ? "" : "launch shape and scheduling (fixed summation orders)";
    return c;
  }
  double sse_tolerance() const override {
    return faithful() && options_.gpu_precision == EvalOptions::GpuPrecision::kFloat ? 1e-3 : 1e-7;
  }

  void prepare(const Dataset& train) override {
    GPUDM_REQUIRE(train.task() == Task::regression, "gmt: dataset '" + train.name() + "' is not a regression dataset");
    GPUDM_REQUIRE(train.rows() >= 1 && train.cols() >= 1, "gmt: dataset '" + train.name() + "' is empty");
    GPUDM_REQUIRE(train.rows() < 0x7FFFFFFFull, "gmt/cuda: datasets of 2^31 rows or more are not supported");
    counters_ = {};
    set_device(device_);
    fast_.reset();  // every buffer this evaluator held is freed here ...
    faithful_.reset();
    data_ = DeviceDataset();
    memory_ = g::MemoryGuard();  // ... so the count starts again
    memory_.set_limit(options_.device_memory_limit);
    // The rows this device holds: all of them, or a rows split's block (the host keeps every row:
    // the finish's repairs read any row)
    const bool split = comm_ != nullptr && comm_->size() > 1;
    GPUDM_REQUIRE(!split || !faithful(), "gmt/cuda: rank_split 'rows' needs the fast path (gpu_path 'fast'; the faithful path splits individuals)");
    // (the fast path's chunking, from the SM count: a rows split takes the ranks' least, so every
    // rank cuts the same chunks; one process with the same SM count then gives the same bits)
    if (!faithful()) {
      int sms = device_props(device_).sm_count;
      if (split) sms = static_cast<int>(-comm_->max(-static_cast<double>(sms), "gmt/cuda: the ranks' least SM count"));
      ctx_.block = g::RowBlock::of(static_cast<long long>(train.rows()), sms, split ? comm_->rank() : 0, split ? comm_->size() : 1);
    }
    slice_ = split ? train.slice(static_cast<std::size_t>(ctx_.block.row0), static_cast<std::size_t>(ctx_.block.row0 + ctx_.block.rows)) : Dataset();
    const Dataset& held = split ? slice_ : train;
    const std::size_t bytes = held.padded_rows() * held.cols() * sizeof(float) + held.rows() * sizeof(float) +
                              (held.has_missing() ? held.padded_rows() * held.cols() : 0);
    memory_.take(bytes, "dataset '" + train.name() + "' (" + std::to_string(held.rows()) + " x " +
                            std::to_string(held.cols()) + ")");
    data_ = upload_dataset(held, stream_);
    ctx_.comm = split ? comm_ : nullptr;
    if (!solver_) solver_ = std::make_unique<g::LeafSolver>(stream_.get());
    solver_->set_ormqr_max_rows(options_.ormqr_max_rows);
    ctx_.stream = stream_.get();
    ctx_.data = data_.view();
    ctx_.host = &train;
    ctx_.options = &options_;
    ctx_.solver = solver_.get();
    ctx_.props = &device_props(device_);
    ctx_.memory = &memory_;
    // The host pool, made at the first prepare with the host_threads option (the EA keeps a
    // reference to it from its construction on, so a later prepare keeps it).
    if (!pool_) pool_ = std::make_unique<::gpudm::HostWorkers>(host_threads() - 1);
    pool_->set_spin(std::chrono::microseconds(options_.host_spin_us));
    ctx_.pool = pool_.get();
    if (faithful()) faithful_ = std::make_unique<g::FaithfulPath>(ctx_);
    else fast_ = std::make_unique<g::FastPath>(ctx_);
  }

  void evaluate(const ::gpudm::gmt::EvalBatch& batch, PhaseTimer& timer) override {
    if (!fast_ && !faithful_) throw Error("gmt/cuda: evaluate() before prepare()");
    set_device(device_);
    ++counters_.calls;
    if (fast_) fast_->evaluate(batch, timer, counters_);
    else faithful_->evaluate(batch, timer, counters_);
  }

  ::gpudm::HostWorkers* host_pool() override { return pool_.get(); }
  bool split_rows(::gpudm::Comm& comm) override {
    comm_ = &comm;
    return true;
  }
  nlohmann::ordered_json describe() const override {
    nlohmann::ordered_json j = fast_ ? fast_->describe() : faithful_ ? faithful_->describe() : nlohmann::ordered_json::object();
    j["device"] = device_props(device_).name;
    j["device_bytes_held"] = memory_.held();
    j["host_threads"] = pool_ ? pool_->workers() + 1 : host_threads();
    j["host_spin_us"] = options_.host_spin_us;
    return j;
  }

 private:
  bool faithful() const { return options_.gpu_path == EvalOptions::GpuPath::kFaithful; }
  std::size_t host_threads() const {
    return options_.host_threads > 0 ? static_cast<std::size_t>(options_.host_threads) : ::gpudm::default_host_threads(16);
  }

  int device_;
  ::gpudm::Comm* comm_ = nullptr;  // a rows split's ranks (split_rows)
  Dataset slice_;                  // its block of the rows (the device's copy is uploaded from it)
  Stream stream_;  // declared before everything that frees memory on it
  g::MemoryGuard memory_;
  DeviceDataset data_;
  std::unique_ptr<g::LeafSolver> solver_;
  g::Context ctx_;
  std::unique_ptr<g::FastPath> fast_;
  std::unique_ptr<g::FaithfulPath> faithful_;
  // Threads for the host steps of a generation (the EA's operators, the fast path's per-tree
  // finish and propagation): the host_threads option, of which a step wakes as many as its trees'
  // nodes ask for (threads_for_nodes; docs/perf-notes-gmt.md, "Host threads that help").
  std::unique_ptr<::gpudm::HostWorkers> pool_;
};

}  // namespace

std::unique_ptr<::gpudm::gmt::ModelTreeEvaluator> make_gmt_evaluator() { return std::make_unique<CudaGmtEvaluator>(); }

}  // namespace gpudm::backend::cuda
