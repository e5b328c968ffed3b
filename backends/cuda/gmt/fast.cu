// The fast path: a generation's modified individuals in one launch sequence (kernels_fast.cuh):
// count -> scan -> plan -> scatter -> gram -> solve [graph A], the exact QR solver for the few
// ambiguous or too-wide leaves (host-driven, cuSOLVER), errors -> kth -> reduce [graph B].
// Kernel arguments do not change between generations (sizes are read from the uploaded batch),
// so both sequences are captured once as CUDA graphs and replayed; a buffer that grows makes
// them be captured again.
#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

#include "algorithms/core/error.hpp"
#include "backends/cuda/common/error.cuh"
#include "backends/cuda/gmt/paths.cuh"
#include "backends/cuda/gmt/policy.cuh"

namespace gpudm::backend::cuda::gmt_cuda {

namespace {
long long max_params_for(long long rows, double rows_per_param) {
  if (rows_per_param <= 0) return std::numeric_limits<long long>::max();
  const double mp = std::floor(static_cast<double>(rows) / rows_per_param);
  return mp < 1.0 ? 1 : static_cast<long long>(mp);
}
}  // namespace

FastPath::FastPath(const Context& c) : c_(c) {
  const ::gpudm::gmt::EvalOptions& o = *c_.options;
  plan_ = plan_fast(c_.data, *c_.props, o.gram_engine == ::gpudm::gmt::EvalOptions::GramEngine::kDmma);
  tiles_max_ = gram_tiles(plan_.wmax);
#if defined(GPUDM_CUDA_DEBUG_SYNC)
  graphs_on_ = false;
  graph_note_ = "off: GPUDM_CUDA_DEBUG_SYNC synchronises after every launch";
#else
  graphs_on_ = o.cuda_graphs;
  graph_note_ = graphs_on_ ? "on" : "off (cuda_graphs = false)";
#endif
}

FastPath::~FastPath() { drop_graphs(); }

void FastPath::drop_graphs() {
  if (exec_a_) GPUDM_CUDA_CHECK_NOTHROW(cudaGraphExecDestroy(exec_a_));
  if (exec_b_) GPUDM_CUDA_CHECK_NOTHROW(cudaGraphExecDestroy(exec_b_));
  exec_a_ = exec_b_ = nullptr;
  graph_epoch_ = -1;
}

bool FastPath::ensure_capacity() {
  MemoryGuard& mem = *c_.memory;
  const std::size_t L = static_cast<std::size_t>(std::max(1, batch_.leaves()));
  const std::size_t ns = static_cast<std::size_t>(plan_.nb) * FastPolicy::kWarps;
  const std::size_t n = c_.data.rows;
  const std::size_t refit_trees = static_cast<std::size_t>(batch_.refit_trees());
  const std::size_t list_cap = std::max<std::size_t>(1, refit_trees * n);
  const std::size_t items_cap =
      refit_trees * ((n + FastPolicy::kSegRows - 1) / FastPolicy::kSegRows) + static_cast<std::size_t>(batch_.refit_leaves()) + 1;
  bool grew = false;
  grew |= reserve(d_batch_, batch_.bytes(), mem, "the generation's flattened individuals");
  grew |= reserve(cnt_, ns * L, mem, "the per-warp leaf counts");
  grew |= reserve(total_, L, mem, "the leaf counts");
  grew |= reserve(kth_sub_, L, mem, "the random-row positions");
  grew |= reserve(kth_local_, L, mem, "the random-row positions");
  grew |= reserve(list_begin_, L, mem, "the leaf row lists' offsets");
  grew |= reserve(seg_begin_, L, mem, "the Gram work items");
  grew |= reserve(seg_leaf_, items_cap, mem, "the Gram work items");
  grew |= reserve(seg_idx_, items_cap, mem, "the Gram work items");
  grew |= reserve(list_, list_cap, mem, "the affected leaves' row lists");
  grew |= reserve(gram_, items_cap * static_cast<std::size_t>(tiles_max_) * 16, mem, "the partial Gram matrices");
  grew |= reserve(rank_, L, mem, "the leaf ranks");
  grew |= reserve(amb_, L, mem, "the exact-solver list");
  grew |= reserve(scalars_, 4, mem, "the fast path's counters");
  grew |= reserve(psse_, static_cast<std::size_t>(plan_.nb) * L, mem, "estimate_errors' per-block sums");
  grew |= reserve(psae_, static_cast<std::size_t>(plan_.nb) * L, mem, "estimate_errors' per-block sums");
  grew |= reserve(plo_, static_cast<std::size_t>(plan_.nb) * L, mem, "estimate_errors' per-block dipoles");
  grew |= reserve(phi_, static_cast<std::size_t>(plan_.nb) * L, mem, "estimate_errors' per-block dipoles");
  grew |= reserve(rnd_, L, mem, "the leaves' random rows");
  grew |= reserve(scratch_, static_cast<std::size_t>(std::max(1, batch_.total_nodes())), mem, "the node statistics");
  grew |= reserve(out_, static_cast<std::size_t>(std::max(1, batch_.total_present())), mem, "the node results");
  reserve(h_batch_, batch_.bytes());
  reserve(h_scalars_, 4);
  reserve(h_rank_, L);
  reserve(h_amb_, L);
  reserve(h_total_, L);
  reserve(h_list_begin_, L);
  reserve(h_out_, static_cast<std::size_t>(std::max(1, batch_.total_present())));
  reserve(h_coef_, static_cast<std::size_t>(std::max(1, batch_.total_model())));
  if (grew) ++epoch_;
  return grew;
}

FastArgs FastPath::args() const {
  const ::gpudm::gmt::EvalOptions& o = *c_.options;
  FastArgs a{};
  a.d = c_.data;
  a.bv = reinterpret_cast<const BatchView*>(d_batch_.data());
  a.nb = plan_.nb;
  a.chunk = plan_.chunk;
  a.sub = plan_.sub;
  a.cnt = const_cast<int*>(cnt_.data());
  a.total = const_cast<int*>(total_.data());
  a.kth_sub = const_cast<int*>(kth_sub_.data());
  a.kth_local = const_cast<int*>(kth_local_.data());
  a.list_begin = const_cast<long long*>(list_begin_.data());
  a.seg_begin = const_cast<int*>(seg_begin_.data());
  a.seg_leaf = const_cast<int*>(seg_leaf_.data());
  a.seg_idx = const_cast<int*>(seg_idx_.data());
  a.items_cap = static_cast<long long>(seg_leaf_.size());
  a.list = const_cast<int*>(list_.data());
  a.list_cap = static_cast<long long>(list_.size());
  a.gram = const_cast<double*>(gram_.data());
  a.tiles_max = tiles_max_;
  a.rank = const_cast<int*>(rank_.data());
  a.amb = const_cast<int*>(amb_.data());
  a.scalars = const_cast<int*>(scalars_.data());
  a.psse = const_cast<double*>(psse_.data());
  a.psae = const_cast<double*>(psae_.data());
  a.plo = const_cast<unsigned long long*>(plo_.data());
  a.phi = const_cast<unsigned long long*>(phi_.data());
  a.rnd = const_cast<long long*>(rnd_.data());
  a.scratch = const_cast<NodeAcc*>(scratch_.data());
  a.out = const_cast<NodeOut*>(out_.data());
  a.rank_tol = o.rank_tol;
  a.rows_per_param = o.rows_per_param;
  a.pivot_guard = o.fast_pivot_guard;
  a.wmax = plan_.wmax;
  return a;
}

void FastPath::launch_a(PhaseMarks& marks, bool capture) {
  const cudaStream_t s = c_.stream;
  const FastArgs a = args();
  marks.begin("redistribute", s, capture);
  launch_fast_count(a, plan_, s);
  marks.end(s, capture);
  marks.begin("separate", s, capture);
  launch_fast_scan(a, plan_, s);
  launch_fast_plan(a, plan_, s);
  launch_fast_scatter(a, plan_, s);
  marks.end(s, capture);
  marks.begin("calc_models", s, capture);
  launch_fast_gram(a, plan_, s);
  launch_fast_solve(a, plan_, s);
  marks.end(s, capture);
}

void FastPath::launch_b(PhaseMarks& marks, bool capture) {
  const cudaStream_t s = c_.stream;
  const FastArgs a = args();
  marks.begin("estimate_errors", s, capture);
  launch_fast_errors(a, plan_, s);
  marks.end(s, capture);
  marks.begin("reduction", s, capture);
  launch_fast_kth(a, plan_, s);
  launch_fast_reduce(a, plan_, s);
  marks.end(s, capture);
}

void FastPath::capture_graphs() {
  drop_graphs();
  const cudaStream_t s = c_.stream;
  auto capture = [&](PhaseMarks& marks, bool first, cudaGraphExec_t* exec) {
    marks.clear();
    GPUDM_CUDA_CHECK(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal));
    try {
      if (first) launch_a(marks, true);
      else launch_b(marks, true);
    } catch (...) {
      cudaGraph_t g = nullptr;
      cudaStreamEndCapture(s, &g);  // leave capture mode whatever happened
      if (g) cudaGraphDestroy(g);
      (void)cudaGetLastError();
      throw;
    }
    cudaGraph_t g = nullptr;
    GPUDM_CUDA_CHECK(cudaStreamEndCapture(s, &g));
    const cudaError_t e = cudaGraphInstantiate(exec, g, 0);
    GPUDM_CUDA_CHECK_NOTHROW(cudaGraphDestroy(g));
    GPUDM_CUDA_CHECK(e);
  };
  capture(marks_a_, true, &exec_a_);
  capture(marks_b_, false, &exec_b_);
  graph_epoch_ = epoch_;
  ++captures_;
}

void FastPath::exact_solves(int n, PhaseMarks& marks) {
  const cudaStream_t s = c_.stream;
  const ::gpudm::gmt::EvalOptions& o = *c_.options;
  const int L = batch_.leaves();
  marks.begin("transfers", s, false);
  amb_.download_async(h_amb_.data(), static_cast<std::size_t>(n), s);
  total_.download_async(h_total_.data(), static_cast<std::size_t>(L), s);
  list_begin_.download_async(h_list_begin_.data(), static_cast<std::size_t>(L), s);
  marks.end(s, false);
  GPUDM_CUDA_CHECK(cudaStreamSynchronize(s));
  std::vector<int> leaves(h_amb_.data(), h_amb_.data() + n);
  std::sort(leaves.begin(), leaves.end());
  // Staging for every leaf's result (one slot each: the copies stay in flight until the end).
  std::size_t coefs = 0;
  for (int gl : leaves) coefs += static_cast<std::size_t>(batch_.leaf_nattr()[static_cast<std::size_t>(gl)] + 1);
  reserve(h_exact_coef_, coefs + static_cast<std::size_t>(n));
  const auto* bv = reinterpret_cast<const BatchView*>(d_batch_.data());
  marks.begin("calc_models", s, false);
  std::size_t at = 0;
  std::vector<double> beta;
  for (std::size_t k = 0; k < leaves.size(); ++k) {
    const int gl = leaves[k];
    const auto g = static_cast<std::size_t>(gl);
    const long long m = h_total_[g];
    const int na = batch_.leaf_nattr()[g];
    reserve(exact_mat_, static_cast<std::size_t>(m) * static_cast<std::size_t>(na + 2), *c_.memory, "the exact solver's leaf matrix");
    launch_gather_leaf(c_.data, bv, gl, list_.data() + h_list_begin_[g], m, exact_mat_.data(), s);
    beta.assign(static_cast<std::size_t>(na + 1), 0.0);
    const int r = c_.solver->solve<double>(exact_mat_.data(), m, na + 1, o.rank_tol, max_params_for(m, o.rows_per_param), beta.data());
    double* slot = h_exact_coef_.data() + at;
    std::copy(beta.begin(), beta.end(), slot);
    GPUDM_CUDA_CHECK(cudaMemcpyAsync(d_batch_.data() + batch_.coef_offset() +
                                         sizeof(double) * static_cast<std::size_t>(batch_.model_off()[g]),
                                     slot, sizeof(double) * beta.size(), cudaMemcpyHostToDevice, s));
    at += beta.size();
    int* rslot = reinterpret_cast<int*>(h_exact_coef_.data() + coefs + k);
    *rslot = r;
    GPUDM_CUDA_CHECK(cudaMemcpyAsync(rank_.data() + gl, rslot, sizeof(int), cudaMemcpyHostToDevice, s));
  }
  marks.end(s, false);
  exact_leaves_ += n;
}

void FastPath::evaluate(const std::vector<const ::gpudm::gmt::FlatTree*>& trees, std::vector<::gpudm::gmt::EvalOutput>& out,
                        ::gpudm::PhaseTimer& timer) {
  out.resize(trees.size());
  if (trees.empty()) return;
  const cudaStream_t s = c_.stream;
  ++generations_;
  batch_.pack(trees, static_cast<int>(c_.data.cols), FastPolicy::kErrKeys);
  refit_leaves_ += batch_.refit_leaves();
  ensure_capacity();
  batch_.write(h_batch_.data(), d_batch_.data());

  PhaseMarks& direct = direct_;
  direct.clear();
  direct.begin("transfers", s, false);
  d_batch_.upload_async(h_batch_.data(), batch_.bytes(), s);
  direct.end(s, false);

  bool graph = graphs_on_;
  if (graph && graph_epoch_ != epoch_) {
    try {
      capture_graphs();
    } catch (const ::gpudm::Error& e) {
      drop_graphs();
      graphs_on_ = graph = false;
      graph_note_ = std::string("off: capture failed (") + e.what() + ")";
    }
  }
  if (graph) GPUDM_CUDA_CHECK(cudaGraphLaunch(exec_a_, s));
  else launch_a(direct, false);

  direct.begin("transfers", s, false);
  scalars_.download_async(h_scalars_.data(), 3, s);
  direct.end(s, false);
  GPUDM_CUDA_CHECK(cudaStreamSynchronize(s));
  if (h_scalars_[2] != 0)
    throw ::gpudm::Error("gmt/cuda: fast path work lists overflowed their capacity (an internal sizing error)");
  if (h_scalars_[1] > 0) exact_solves(h_scalars_[1], direct);

  if (graph) GPUDM_CUDA_CHECK(cudaGraphLaunch(exec_b_, s));
  else launch_b(direct, false);

  const int L = batch_.leaves();
  direct.begin("transfers", s, false);
  out_.download_async(h_out_.data(), static_cast<std::size_t>(batch_.total_present()), s);
  rank_.download_async(h_rank_.data(), static_cast<std::size_t>(L), s);
  GPUDM_CUDA_CHECK(cudaMemcpyAsync(h_coef_.data(), d_batch_.data() + batch_.coef_offset(),
                                   sizeof(double) * static_cast<std::size_t>(batch_.total_model()), cudaMemcpyDeviceToHost, s));
  direct.end(s, false);
  GPUDM_CUDA_CHECK(cudaStreamSynchronize(s));
  direct.flush(timer);
  if (graph) {
    // Event-record nodes (cudaEventRecordExternal) time the graphs' phases; should a driver not
    // time them, the graphs are dropped (next generations launch directly) rather than the run.
    try {
      PhaseTimer phases;
      marks_a_.flush(phases);
      marks_b_.flush(phases);
      timer.merge(phases);
    } catch (const ::gpudm::Error& e) {
      drop_graphs();
      graphs_on_ = false;
      graph_note_ = std::string("off: graph phase timing failed (") + e.what() + ")";
    }
  }
  assemble_outputs(trees, batch_, h_out_.data(), h_rank_.data(), h_coef_.data(), out, 0);
}

nlohmann::ordered_json FastPath::describe() const {
  nlohmann::ordered_json j;
  j["path"] = "fast";
  j["rows_blocks"] = plan_.nb;
  j["rows_per_block"] = plan_.chunk;
  j["block"] = FastPolicy::kBlock;
  j["gram_engine"] = plan_.dmma ? "dmma" : "fp64";
  j["gram_rows_per_item"] = FastPolicy::kSegRows;
  j["widest_batched_model"] = plan_.wmax;
  j["cuda_graphs"] = graph_note_;
  j["graph_captures"] = captures_;
  j["generations"] = generations_;
  j["refit_leaves"] = refit_leaves_;
  j["exact_solver_leaves"] = exact_leaves_;
  return j;
}

}  // namespace gpudm::backend::cuda::gmt_cuda
