// A rows split's call (EvalOptions::RankSplit::kRows over MPI ranks, a GPU a rank): the stats pass
// and the merge's level 1 on this rank's rows, one all-gather of the ranks' leaf results and group
// records, level 2 and the solve on every rank from the same records, the residuals combined.
#include <algorithm>
#include <string>
#include <vector>

#include "algorithms/core/comm.hpp"
#include "algorithms/core/stopwatch.hpp"
#include "algorithms/core/error.hpp"
#include "backends/cuda/common/device.cuh"
#include "backends/cuda/common/error.cuh"
#include "backends/cuda/gmt/fast_detail.cuh"

namespace gpudm::backend::cuda::gmt_cuda {

namespace ls = ::gpudm::gmt::leafstats;
using namespace fast_detail;

void FastPath::launch_split(PhaseMarks& direct, ::gpudm::PhaseTimer& timer) {
  const cudaStream_t s = c_.stream;
  ::gpudm::Comm& comm = *c_.comm;
  const Host& h = *h_;
  const RowBlock& rb = c_.block;
  const auto rec = static_cast<std::size_t>(FusedGroups::record(h.S, h.coef_total, h.stat_total));
  const auto G = static_cast<std::size_t>(rb.G), S = static_cast<std::size_t>(h.S), L = static_cast<std::size_t>(h.L);
  const auto cap = static_cast<std::size_t>(h.stray_cap);
  const auto g0 = static_cast<std::size_t>(rb.g0), g1 = static_cast<std::size_t>(rb.g1);
  reserve(h_grec_, G * rec + 1);
  reserve(h_gres_, G * std::max<std::size_t>(1, S));
  // part A: the stats pass and the merge's level 1 on this rank's rows; its counts, keys, small
  // leaves' rows and group records down
  ::gpudm::Stopwatch launch;
  direct.begin("transfers", s, false);
  GPUDM_CUDA_CHECK(cudaMemcpyAsync(d_in_.data(), h_in_.data(), in_bytes_, cudaMemcpyHostToDevice, s));
  direct.end(s, false);
  run_part(kPartA, direct);
  direct.begin("transfers", s, false);
  GPUDM_CUDA_CHECK(cudaMemcpyAsync(h_out_.data(), d_out_.data(), out_bytes_, cudaMemcpyDeviceToHost, s));
  if (g1 > g0)
    GPUDM_CUDA_CHECK(cudaMemcpyAsync(h_grec_.data() + g0 * rec, grec_.data() + g0 * rec, (g1 - g0) * rec * sizeof(double), cudaMemcpyDeviceToHost, s));
  direct.end(s, false);
  in_flight_ = true;
  host_launch_s_ += launch.seconds();
  ::gpudm::Stopwatch wait;
  GPUDM_CUDA_CHECK(cudaStreamSynchronize(s));
  in_flight_ = false;
  host_wait_s_ += wait.seconds();
  attach_outputs();
  // the combine: one all-gather of every rank's part; counts summed (integers), keys by min / max,
  // small leaves' rows in rank order (the host sorts them), the groups' records into place
  {
    auto sc = timer.scope("combine");
    const ::gpudm::Stopwatch sw;
    std::vector<std::uint32_t> words;
    // each rank's part opens with what shapes it (checked below: the ranks must agree on them)
    const auto shape = [&](int r) {
      const auto [rg0, rg1] = ::gpudm::shard(G, r, comm.size());
      return std::vector<std::uint64_t>{G, rg0, rg1, L, S, cap, rec};
    };
    const std::vector<std::uint64_t> mine = shape(comm.rank());
    put_bytes(words, mine.data(), mine.size() * sizeof(std::uint64_t));
    put_bytes(words, h.leaf_out, L * sizeof(LeafOut));
    std::vector<int> nstray(S);
    for (std::size_t i = 0; i < S; ++i) nstray[i] = h.stat_out[i].nstray;
    put_bytes(words, nstray.data(), S * sizeof(int));
    put_bytes(words, h.strays, S * cap * sizeof(int));
    put_bytes(words, h_grec_.data() + g0 * rec, (g1 - g0) * rec * sizeof(double));
    const std::vector<std::uint32_t> all = comm.gather_all(words, "gmt/cuda: combining the ranks' leaf statistics");
    ++combine_calls_;
    combine_bytes_ += all.size() * sizeof(std::uint32_t);
    LeafOut none{};
    none.lo = ls::kNoLoKey;
    none.hi = ls::kNoHiKey;
    none.rnd = ls::kNoLoKey;
    comb_leaf_.assign(L, none);
    comb_nstray_.assign(S, 0);
    comb_strays_.assign(S * cap, 0);
    std::vector<LeafOut> lo(L);
    std::vector<int> ns(S), st(S * cap);
    std::size_t at = 0;
    for (int r = 0; r < comm.size(); ++r) {
      std::vector<std::uint64_t> theirs(mine.size());
      take_bytes(all, at, theirs.data(), theirs.size() * sizeof(std::uint64_t), "the leaf results");
      GPUDM_REQUIRE(theirs == shape(r), "gmt/cuda: rank " + std::to_string(r) + "'s part of the combine has another shape (merge groups, "
                                        "leaves or records) than rank " + std::to_string(comm.rank()) + " expects: the ranks disagree on the data or the batch");
      take_bytes(all, at, lo.data(), L * sizeof(LeafOut), "the leaf results");
      take_bytes(all, at, ns.data(), S * sizeof(int), "the small leaves' rows");
      take_bytes(all, at, st.data(), S * cap * sizeof(int), "the small leaves' rows");
      for (std::size_t i = 0; i < L; ++i) {
        LeafOut& o = comb_leaf_[i];
        o.count += lo[i].count;
        o.lo = std::min(o.lo, lo[i].lo);
        o.hi = std::max(o.hi, lo[i].hi);
        o.rnd = std::min(o.rnd, lo[i].rnd);
      }
      for (std::size_t i = 0; i < S; ++i) {
        const std::size_t have = static_cast<std::size_t>(std::max(0, comb_nstray_[i]));
        const std::size_t mine = std::min<std::size_t>(static_cast<std::size_t>(std::max(0, ns[i])), cap);
        for (std::size_t q = 0; q < mine && have + q < cap; ++q) comb_strays_[i * cap + have + q] = st[i * cap + q];
        comb_nstray_[i] += ns[i];
      }
      const auto [rg0, rg1] = ::gpudm::shard(G, r, comm.size());
      take_bytes(all, at, h_grec_.data() + rg0 * rec, (rg1 - rg0) * rec * sizeof(double), "the merge's group records");
    }
    GPUDM_REQUIRE(at == all.size(), "gmt/cuda: the ranks' leaf statistics do not add up (internal error)");
    combine_s_ += sw.seconds();
  }
  // part B: every group's record up, the merge's level 2 and the solve (every rank solves every
  // leaf from the same records), the residual pass on this rank's rows
  launch.reset();
  direct.begin("transfers", s, false);
  GPUDM_CUDA_CHECK(cudaMemcpyAsync(grec_.data(), h_grec_.data(), G * rec * sizeof(double), cudaMemcpyHostToDevice, s));
  direct.end(s, false);
  run_part(kPartB, direct);
  direct.begin("transfers", s, false);
  GPUDM_CUDA_CHECK(cudaMemcpyAsync(h_out_.data(), d_out_.data(), out_bytes_, cudaMemcpyDeviceToHost, s));
  if (g1 > g0 && S > 0)
    GPUDM_CUDA_CHECK(cudaMemcpyAsync(h_gres_.data() + g0 * S, gres_.data() + g0 * S, (g1 - g0) * S * sizeof(double), cudaMemcpyDeviceToHost, s));
  direct.end(s, false);
  in_flight_ = true;
  host_launch_s_ += launch.seconds();
  wait.reset();
  GPUDM_CUDA_CHECK(cudaStreamSynchronize(s));
  in_flight_ = false;
  host_wait_s_ += wait.seconds();
  // the combined results into the download, as one process's would be
  unsigned char* ob = h_out_.data();
  auto* leaf_out = reinterpret_cast<LeafOut*>(ob);
  auto* stat_out = reinterpret_cast<StatOut*>(ob + bytes_of<LeafOut>(L));
  auto* strays = reinterpret_cast<int*>(ob + bytes_of<LeafOut>(L) + bytes_of<StatOut>(S) + bytes_of<double>(static_cast<std::size_t>(h.stat_total)) +
                                        bytes_of<double>(static_cast<std::size_t>(h.coef_total)));
  std::copy(comb_leaf_.begin(), comb_leaf_.end(), leaf_out);
  for (std::size_t i = 0; i < S; ++i) stat_out[i].nstray = comb_nstray_[i];
  std::copy(comb_strays_.begin(), comb_strays_.end(), strays);
  // the residuals' level 2 (the device's fused_residual_merge_kernel level 2: the same additions in
  // group order), when a leaf's SSE is summed from its residuals (the same leaves on every rank)
  bool any = false;
  for (std::size_t i = 0; i < S; ++i) any = any || stat_out[i].resid != 0;
  if (any) {
    auto sc = timer.scope("combine");
    const ::gpudm::Stopwatch sw;
    std::vector<std::uint32_t> words;
    put_bytes(words, h_gres_.data() + g0 * S, (g1 - g0) * S * sizeof(double));
    const std::vector<std::uint32_t> all = comm.gather_all(words, "gmt/cuda: combining the ranks' residuals");
    ++combine_calls_;
    combine_bytes_ += all.size() * sizeof(std::uint32_t);
    std::size_t at = 0;
    for (int r = 0; r < comm.size(); ++r) {
      const auto [rg0, rg1] = ::gpudm::shard(G, r, comm.size());
      take_bytes(all, at, h_gres_.data() + rg0 * S, (rg1 - rg0) * S * sizeof(double), "the residuals");
    }
    GPUDM_REQUIRE(at == all.size(), "gmt/cuda: the ranks' residuals do not add up (internal error)");
    for (std::size_t i = 0; i < S; ++i) {
      if (!stat_out[i].resid) continue;
      double sse = 0.0;
      for (std::size_t g = 0; g < G; ++g) sse += h_gres_[g * S + i];
      stat_out[i].sse = sse;
    }
    combine_s_ += sw.seconds();
  }
}

}  // namespace gpudm::backend::cuda::gmt_cuda
