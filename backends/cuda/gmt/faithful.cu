// The faithful path: the paper's evaluateIndividualAtGPU (Listing 1) for every individual of
// the batch in turn: flattened tree sent, redistribute, separate (CUB radix sort of (leaf, row)),
// counts back to the host, reorganize, calc_models (per affected leaf cuSOLVER geqrf + ormqr and
// cuBLAS trsm, host-driven as Listing 2, with the CPU's rank rule), estimate_errors (node tables
// in shared memory under 48 KB, else global), reduction, results back.
#include <cub/device/device_radix_sort.cuh>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <string>

#include "algorithms/core/error.hpp"
#include "backends/cuda/common/error.cuh"
#include "backends/cuda/gmt/paths.cuh"
#include "backends/cuda/gmt/policy.cuh"
#include "algorithms/gmt/eval_steps.hpp"
#include "algorithms/gmt/leaf_stats.hpp"
#include "algorithms/gmt/repair.hpp"

namespace gpudm::backend::cuda::gmt_cuda {

namespace {
int key_bits(int leaves) {
  int bits = 1;
  while (bits < 31 && (1LL << bits) < leaves) ++bits;
  return bits;
}
}  // namespace

void FaithfulPath::evaluate(const ::gpudm::gmt::EvalBatch& batch, ::gpudm::PhaseTimer& timer, ::gpudm::gmt::EvalCounters& counters) {
  if (batch.size() == 0) return;
  GPUDM_REQUIRE(batch.salts.size() == batch.trees.size(), "gmt: one salt per tree");
  const ::gpudm::gmt::EvalOptions& o = *c_.options;
  if (blocks_ == 0) {
    faithful_grid(c_.data.rows, &blocks_, &threads_);
    if (o.gpu_blocks > 0) blocks_ = o.gpu_blocks;
    if (o.gpu_threads > 0) threads_ = o.gpu_threads;
  }
  PhaseMarks marks;
  for (std::size_t k = 0; k < batch.size(); ++k) {
    evaluate_one(*batch.trees[k], batch.salts[k], batch.repair, marks, timer, counters);
    marks.flush(timer);  // evaluate_one synchronised at its end
    marks.clear();
    ++counters.trees;
  }
}

template <class T>
void FaithfulPath::calc_models(const PackedBatch& b, const std::vector<int>& counts, std::vector<double>& coef,
                               std::vector<int>& rank, T* mat, const std::vector<long long>& mat_off) {
  const ::gpudm::gmt::EvalOptions& o = *c_.options;
  const double tol = sizeof(T) == sizeof(float) ? std::max(o.rank_tol, FaithfulPolicy::kFloatRankTol) : o.rank_tol;
  std::vector<double> beta;
  for (int l = 0; l < b.leaves(); ++l) {
    const auto L = static_cast<std::size_t>(l);
    if (!b.leaf_refit()[L]) continue;
    const int na = b.leaf_nattr()[L];
    const int m0 = b.model_off()[L];
    const long long m = counts[L];
    if (m == 0) {
      rank[L] = 0;
      for (int j = 0; j <= na; ++j) coef[static_cast<std::size_t>(m0 + j)] = 0.0;
      continue;
    }
    beta.assign(static_cast<std::size_t>(na + 1), 0.0);
    rank[L] = c_.solver->solve<T>(mat + mat_off[L], m, na + 1, tol, ::gpudm::gmt::leafstats::max_leaf_params(m, o.rows_per_param), beta.data());
    for (int j = 0; j <= na; ++j) coef[static_cast<std::size_t>(m0 + j)] = beta[static_cast<std::size_t>(j)];
    ++leaves_solved_;
  }
}

void FaithfulPath::route(const ::gpudm::gmt::FlatTree& flat, std::vector<int>& counts, PhaseMarks& marks) {
  MemoryGuard& mem = *c_.memory;
  const cudaStream_t s = c_.stream;
  const DatasetView& d = c_.data;
  const std::size_t n = d.rows;
  // Listing 1, lines 5-8: the flattened individual is sent.
  const std::vector<const ::gpudm::gmt::FlatTree*> one{&flat};
  batch_.pack(one, static_cast<int>(d.cols), 0);
  const int L = batch_.leaves(), nn = batch_.total_nodes(), np = batch_.total_present();
  reserve(h_batch_, batch_.bytes());
  reserve(d_batch_, batch_.bytes(), mem, "the flattened individual");
  batch_.write(h_batch_.data(), d_batch_.data());
  const auto* bv = reinterpret_cast<const BatchView*>(d_batch_.data());
  if (reserve(iota_, n, mem, "the row ids")) {
    std::vector<int> ids(iota_.size());
    for (std::size_t i = 0; i < ids.size(); ++i) ids[i] = static_cast<int>(i);
    iota_.upload(ids);
  }
  reserve(leaf_of_, n, mem, "the rows' leaf ids");
  reserve(sorted_leaf_, n, mem, "the sorted leaf ids");
  reserve(sorted_row_, n, mem, "the sorted row ids");
  reserve(counts_, static_cast<std::size_t>(L), mem, "the leaf counts");
  reserve(leaf_begin_, static_cast<std::size_t>(L), mem, "the leaf offsets");
  reserve(mat_off_, static_cast<std::size_t>(L), mem, "the leaf matrix offsets");
  reserve(scratch_, static_cast<std::size_t>(nn), mem, "the node statistics");
  reserve(out_, static_cast<std::size_t>(np), mem, "the node results");
  reserve(h_counts_, static_cast<std::size_t>(L));
  reserve(h_layout_, 2 * static_cast<std::size_t>(L));
  reserve(h_out_, static_cast<std::size_t>(np));
  reserve(h_coef_, static_cast<std::size_t>(batch_.total_model()));

  marks.begin("transfers", s, false);
  d_batch_.upload_async(h_batch_.data(), batch_.bytes(), s);
  marks.end(s, false);

  marks.begin("redistribute", s, false);
  GPUDM_CUDA_CHECK(cudaMemsetAsync(counts_.data(), 0, sizeof(int) * static_cast<std::size_t>(L), s));
  launch_faithful_redistribute(d, bv, leaf_of_.data(), counts_.data(), blocks_, threads_, s);
  marks.end(s, false);

  marks.begin("separate", s, false);
  {
    const int end_bit = key_bits(L);
    std::size_t bytes = 0;
    GPUDM_CUDA_CHECK(cub::DeviceRadixSort::SortPairs(nullptr, bytes, leaf_of_.data(), sorted_leaf_.data(), iota_.data(),
                                                     sorted_row_.data(), static_cast<int>(n), 0, end_bit, s));
    reserve(sort_temp_, std::max<std::size_t>(bytes, 1), mem, "the radix sort's temporary storage");
    GPUDM_CUDA_CHECK(cub::DeviceRadixSort::SortPairs(sort_temp_.data(), bytes, leaf_of_.data(), sorted_leaf_.data(),
                                                     iota_.data(), sorted_row_.data(), static_cast<int>(n), 0, end_bit, s));
  }
  marks.end(s, false);

  // Listing 1, line 18: the counts go to the host.
  marks.begin("transfers", s, false);
  counts_.download_async(h_counts_.data(), static_cast<std::size_t>(L), s);
  marks.end(s, false);
  GPUDM_CUDA_CHECK(cudaStreamSynchronize(s));
  counts.assign(h_counts_.data(), h_counts_.data() + L);
}

void FaithfulPath::evaluate_one(::gpudm::gmt::Tree& tree, std::uint64_t salt, const ::gpudm::gmt::RepairSpec& repair,
                                PhaseMarks& marks, ::gpudm::PhaseTimer& host, ::gpudm::gmt::EvalCounters& counters) {
  const ::gpudm::gmt::EvalOptions& o = *c_.options;
  MemoryGuard& mem = *c_.memory;
  const cudaStream_t s = c_.stream;
  const DatasetView& d = c_.data;
  const std::size_t n = d.rows;
  const bool use_float = o.gpu_precision == ::gpudm::gmt::EvalOptions::GpuPrecision::kFloat;
  std::vector<int> counts;
  for (int round = 0; round < 2; ++round) {
    {
      auto sc = host.scope("flattening");  // the paper's copyTreeToTable
      ::gpudm::gmt::flatten(tree, salt, static_cast<int>(d.cols), flat_);
    }
    route(flat_, counts, marks);
    if (round > 0 || repair.min_rows <= 0) break;
    // The repair rule from the counts; the rows of the leaves under the limit come from the sorted
    // row ids (a few per such leaf).
    auto sc = host.scope("repair");
    ::gpudm::gmt::RoutedCounts routed;
    routed.reset(tree.size());
    long long begin = 0;
    std::vector<std::pair<int, long long>> small;  // (slot, begin)
    for (int l = 0; l < flat_.n_leaves(); ++l) {
      const int node = flat_.compact[static_cast<std::size_t>(l)];
      routed.count[static_cast<std::size_t>(node)] = counts[static_cast<std::size_t>(l)];
      if (counts[static_cast<std::size_t>(l)] > 0 && counts[static_cast<std::size_t>(l)] < repair.min_rows) small.emplace_back(l, begin);
      begin += counts[static_cast<std::size_t>(l)];
    }
    if (!::gpudm::gmt::needs_repair(tree, repair, routed.count)) break;
    std::size_t total = 0;
    for (const auto& [l, b] : small) total += static_cast<std::size_t>(counts[static_cast<std::size_t>(l)]);
    reserve(h_rows_, std::max<std::size_t>(total, 1));
    std::size_t at = 0;
    for (const auto& [l, b] : small) {
      const auto m = static_cast<std::size_t>(counts[static_cast<std::size_t>(l)]);
      GPUDM_CUDA_CHECK(cudaMemcpyAsync(h_rows_.data() + at, sorted_row_.data() + b, m * sizeof(int), cudaMemcpyDeviceToHost, s));
      at += m;
    }
    GPUDM_CUDA_CHECK(cudaStreamSynchronize(s));
    at = 0;
    for (const auto& [l, b] : small) {
      const int node = flat_.compact[static_cast<std::size_t>(l)];
      const auto m = static_cast<std::size_t>(counts[static_cast<std::size_t>(l)]);
      routed.small_begin[static_cast<std::size_t>(node)] = static_cast<std::int32_t>(routed.small_rows.size());
      for (std::size_t q = 0; q < m; ++q) routed.small_rows.push_back(h_rows_[at + q]);  // ascending: the sort is stable
      at += m;
    }
    const ::gpudm::gmt::RepairOutcome rep = ::gpudm::gmt::repair_tree(tree, repair, routed, *c_.host);
    GPUDM_REQUIRE(rep.complete, "gmt/cuda: repair could not find a small leaf's rows (internal error)");
    counters.repairs += rep.repairs;
    if (rep.repairs == 0) break;
    ++counters.repaired_trees;
  }
  const int L = batch_.leaves(), nn = batch_.total_nodes(), np = batch_.total_present();
  const auto* bv = reinterpret_cast<const BatchView*>(d_batch_.data());
  const std::size_t tables = static_cast<std::size_t>(blocks_) * static_cast<std::size_t>(nn);
  reserve(t_sse_, tables, mem, "estimate_errors' node tables");
  reserve(t_sae_, tables, mem, "estimate_errors' node tables");
  reserve(t_lo_, tables, mem, "estimate_errors' node tables");
  reserve(t_hi_, tables, mem, "estimate_errors' node tables");
  reserve(t_rnd_, tables, mem, "estimate_errors' node tables");
  std::vector<long long> mat_off(static_cast<std::size_t>(L), -1);
  long long begin = 0, mat_size = 0;
  for (int l = 0; l < L; ++l) {
    const auto li = static_cast<std::size_t>(l);
    h_layout_[li] = begin;
    begin += counts[li];
    if (batch_.leaf_refit()[li] && counts[li] > 0) {
      mat_off[li] = mat_size;
      mat_size += static_cast<long long>(counts[li]) * (batch_.leaf_nattr()[li] + 2);
    }
    h_layout_[static_cast<std::size_t>(L) + li] = mat_off[li];
  }
  if (begin != static_cast<long long>(n))
    throw ::gpudm::Error("gmt/cuda: redistribute counted " + std::to_string(begin) + " rows of " + std::to_string(n));
  marks.begin("transfers", s, false);
  leaf_begin_.upload_async(h_layout_.data(), static_cast<std::size_t>(L), s);
  mat_off_.upload_async(h_layout_.data() + L, static_cast<std::size_t>(L), s);
  marks.end(s, false);

  std::vector<double> coef(static_cast<std::size_t>(batch_.total_model()));
  std::memcpy(coef.data(), h_batch_.data() + batch_.coef_offset(), coef.size() * sizeof(double));
  std::vector<int> rank(static_cast<std::size_t>(L), -1);
  marks.begin("reorganize", s, false);
  if (use_float) reserve(mat_f_, static_cast<std::size_t>(mat_size), mem, "the leaves' matrices");
  else reserve(mat_d_, static_cast<std::size_t>(mat_size), mem, "the leaves' matrices");
  if (mat_size > 0) {
    if (use_float)
      launch_faithful_reorganize<float>(d, bv, sorted_leaf_.data(), sorted_row_.data(), leaf_begin_.data(), counts_.data(),
                                        mat_off_.data(), mat_f_.data(), blocks_, threads_, s);
    else
      launch_faithful_reorganize<double>(d, bv, sorted_leaf_.data(), sorted_row_.data(), leaf_begin_.data(), counts_.data(),
                                         mat_off_.data(), mat_d_.data(), blocks_, threads_, s);
  }
  marks.end(s, false);

  marks.begin("calc_models", s, false);
  c_.solver->reset_calls();
  if (use_float) calc_models<float>(batch_, counts, coef, rank, mat_f_.data(), mat_off);
  else calc_models<double>(batch_, counts, coef, rank, mat_d_.data(), mat_off);
  qr_calls_ += c_.solver->calls();
  marks.end(s, false);
  marks.begin("transfers", s, false);
  std::copy(coef.begin(), coef.end(), h_coef_.data());
  GPUDM_CUDA_CHECK(cudaMemcpyAsync(d_batch_.data() + batch_.coef_offset(), h_coef_.data(), coef.size() * sizeof(double),
                                   cudaMemcpyHostToDevice, s));
  marks.end(s, false);

  marks.begin("estimate_errors", s, false);
  NodeTables part{t_sse_.data(), t_sae_.data(), t_lo_.data(), t_hi_.data(), t_rnd_.data()};
  last_shared_tables_ = faithful_tables_fit_shared(nn);
  if (!last_shared_tables_) {
    GPUDM_CUDA_CHECK(cudaMemsetAsync(part.sse, 0, tables * sizeof(double), s));
    GPUDM_CUDA_CHECK(cudaMemsetAsync(part.sae, 0, tables * sizeof(double), s));
    GPUDM_CUDA_CHECK(cudaMemsetAsync(part.lo, 0xFF, tables * sizeof(unsigned long long), s));
    GPUDM_CUDA_CHECK(cudaMemsetAsync(part.hi, 0, tables * sizeof(unsigned long long), s));
    GPUDM_CUDA_CHECK(cudaMemsetAsync(part.rnd, 0xFF, tables * sizeof(unsigned long long), s));
  }
  launch_faithful_estimate_errors(d, bv, sorted_leaf_.data(), sorted_row_.data(), part, nn, blocks_, threads_, s);
  marks.end(s, false);

  marks.begin("reduction", s, false);
  launch_faithful_reduction(bv, blocks_, part, counts_.data(), scratch_.data(), out_.data(), s);
  marks.end(s, false);

  marks.begin("transfers", s, false);
  out_.download_async(h_out_.data(), static_cast<std::size_t>(np), s);
  marks.end(s, false);
  GPUDM_CUDA_CHECK(cudaStreamSynchronize(s));

  // Results into the compact tree: every leaf's statistics and (refit leaves) model, then the
  // internal nodes from their leaves.
  auto sc = host.scope("reduction_host");  // (the device's reduction is the "reduction" phase)
  const auto& present = batch_.present_nodes();
  std::vector<int> present_of(flat_.attr.size(), -1);
  for (std::size_t p = 0; p < present.size(); ++p) present_of[static_cast<std::size_t>(present[p])] = static_cast<int>(p);
  for (int l = 0; l < L; ++l) {
    const auto li = static_cast<std::size_t>(l);
    const int node = flat_.compact[li];
    const NodeOut& r = h_out_[static_cast<std::size_t>(present_of[static_cast<std::size_t>(flat_.leaf_node[li])])];
    if (batch_.leaf_refit()[li]) ::gpudm::gmt::set_leaf_fit(tree, node, coef.data() + batch_.model_off()[li], rank[li]);
    ::gpudm::gmt::NodeStats& st = tree.node(node).stats;
    st.count = r.count;
    st.sse = r.sse;
    st.sae = r.sae;
    st.dipole_lo = r.lo;
    st.dipole_hi = r.hi;
    st.dipole_rand = r.rnd;
  }
  ::gpudm::gmt::propagate_stats(tree, *c_.host, salt);
}

nlohmann::ordered_json FaithfulPath::describe() const {
  nlohmann::ordered_json j;
  j["path"] = "faithful";
  j["grid"] = {blocks_, threads_};
  j["precision"] = c_.options->gpu_precision == ::gpudm::gmt::EvalOptions::GpuPrecision::kFloat ? "float" : "double";
  j["estimate_errors_tables"] = last_shared_tables_ ? "shared" : "global";
  j["leaf_solves"] = leaves_solved_;
  j["geqrf_calls"] = qr_calls_;
  return j;
}

}  // namespace gpudm::backend::cuda::gmt_cuda
