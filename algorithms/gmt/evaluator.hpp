#pragma once
// ModelTreeEvaluator: the backend interface of the GMT family (CUDA-free). The EA flattens each
// modified individual (flat_tree.hpp) and hands a whole generation to evaluate() in one call.
// Every backend runs the paper's six procedures and records each as a PhaseTimer phase:
//   redistribute    rows -> leaves (route every training row through the tree)
//   separate        group row ids by leaf (stable counting sort; CUB radix sort on the GPU)
//   reorganize      per-leaf matrices [1, model attributes, y] of the affected leaves
//   calc_models     Householder QR least squares in every affected leaf
//   estimate_errors per-chunk partial SSE/SAE and dipole candidates per leaf
//   reduction       merge the partials, propagate errors and dipoles up to the root
// plus "transfers" (moving the flat trees in and the results out; host copies on CPU backends).
// The EA itself records "flattening" and "cpu_ea".
#include <memory>
#include <string>
#include <vector>

#include "algorithms/core/backend.hpp"
#include "algorithms/core/dataset.hpp"
#include "algorithms/core/phase_timer.hpp"
#include "algorithms/gmt/flat_tree.hpp"

namespace gpudm {
namespace gmt {

// Numerical policy shared by every backend so that their results agree.
struct EvalOptions {
  // Rows per fixed chunk of the data-parallel passes. Partial sums are kept per chunk and merged
  // in chunk order, so results do not depend on the number of threads.
  int chunk_rows = 16384;
  // Rows per TSQR block of a leaf (a leaf's QR is the QR of its blocks' stacked R factors).
  int qr_block_rows = 8192;
  // Rank rule: a column whose remaining norm during the Householder sweep is <= rank_tol times
  // its original norm (or exactly zero) is dropped: its coefficient is 0 and it does not count.
  double rank_tol = 1e-9;
  // Degrees-of-freedom guard (0 = off, the default): a leaf with n rows keeps at most
  // max(1, floor(n / rows_per_param)) model parameters, the intercept first, then the attributes
  // in order; the rest are dropped as by the rank rule. Off, a 5-row leaf can fit 4 attributes
  // exactly (SSE 0), which BIC rewards (Mv in results/h200/gmt_weka_study).
  double rows_per_param = 0.0;
  int threads = 0;  // OpenMP backend: threads (0 = OpenMP default)
  // OpenMP backend: what the threads share out. kRows: the fixed row chunks of each individual
  // (and the TSQR blocks and leaves), one individual after the other (the paper's OpenMP GMT);
  // kIndividuals: the generation's individuals, each evaluated in order by one thread with its own
  // work buffers; kAuto: individuals when the data has fewer row chunks than threads, else rows.
  // Every mode runs the same per-individual arithmetic, so results are identical.
  enum class OmpMode { kAuto, kRows, kIndividuals };
  OmpMode omp_mode = OmpMode::kAuto;

  // ---- CUDA backend only (backends/cuda/gmt/evaluator.cu states its tolerances) ----
  // kFast (default): a generation's trees in one launch sequence, per-leaf sufficient statistics
  // in FP64, batched solves. kFaithful: the paper's six procedures per individual (CUB radix sort,
  // cuSOLVER geqrf/ormqr, cuBLAS trsm per affected leaf).
  enum class GpuPath { kFast, kFaithful };
  GpuPath gpu_path = GpuPath::kFast;
  // Faithful path: least squares in float (the paper) or double (the CPU evaluators).
  enum class GpuPrecision { kDouble, kFloat };
  GpuPrecision gpu_precision = GpuPrecision::kDouble;
  // Faithful path: blocks x threads of redistribute / reorganize / estimate_errors (0 = the
  // paper's Sec. 5.3 settings by training rows: 64x32 ... 256x256).
  int gpu_blocks = 0, gpu_threads = 0;
  // Exact leaf solver (CUDA faithful path's calc_models, the fast path's fallback): leaves of
  // more rows take Q^T y from geqrf of [A | y] instead of ormqr, as a leaf whose ormqr workspace
  // query fails always does (backends/cuda/gmt/leaf_solver.cu). Not a config param (it would change
  // every run's identity); tests set it to 1 to check the fallback on every leaf.
  long long ormqr_max_rows = 0x7FFFFFFFLL;
  // Fast path: Gram accumulation on FP64 CUDA cores (kFp64) or FP64 tensor cores (kDmma, sm_80+).
  enum class GramEngine { kFp64, kDmma };
  GramEngine gram_engine = GramEngine::kFp64;
  // Fast path: a pivot of the centred Gram at or below fast_pivot_guard x its column's centred
  // norm^2 (near-dependent columns, ill-conditioned leaves) sends the leaf to the exact QR solver.
  double fast_pivot_guard = 1e-6;
  // Fast path: replay the generation's kernels as CUDA graphs (launch overhead of small data).
  bool cuda_graphs = true;
  // Usable device memory in bytes (0 = what the device has free); a test lowers it to check
  // the out-of-memory message.
  double device_memory_limit = 0.0;
};

// The lifecycle of backend.hpp: configure(EvalOptions), prepare(training set) once (uploads and
// layouts; the dataset must outlive the evaluator's use), then evaluate() per generation.
class ModelTreeEvaluator : public BackendOf<EvalOptions> {
 public:
  // Evaluates a batch of individuals (one generation's modified ones); out is resized to match.
  virtual void evaluate(const std::vector<const FlatTree*>& trees, std::vector<EvalOutput>& out,
                        PhaseTimer& timer) = 0;
  // Relative difference of a tree's SSE from the reference backend's that this backend
  // guarantees (the family's validation): the CPU backends share the reference's arithmetic.
  virtual double sse_tolerance() const { return 1e-9; }
};

}  // namespace gmt
}  // namespace gpudm
