// What both paths share: phase marks, the memory guard, output assembly.
#include <algorithm>
#include <string>

#include "algorithms/core/error.hpp"
#include "backends/cuda/common/error.cuh"
#include "backends/cuda/gmt/paths.cuh"

namespace gpudm::backend::cuda::gmt_cuda {

void PhaseMarks::record(Event& e, cudaStream_t s, bool capture) {
  if (capture) GPUDM_CUDA_CHECK(cudaEventRecordWithFlags(e.get(), s, cudaEventRecordExternal));
  else e.record(s);
}

void PhaseMarks::begin(const char* name, cudaStream_t s, bool capture) {
  if (open_) throw ::gpudm::Error(std::string("gmt/cuda: phase '") + name + "' begun inside another");
  if (used_ == marks_.size()) marks_.emplace_back();
  Mark& m = marks_[used_];
  m.name = name;
  record(m.start, s, capture);
  open_ = true;
}

void PhaseMarks::end(cudaStream_t s, bool capture) {
  if (!open_) throw ::gpudm::Error("gmt/cuda: phase end without begin");
  record(marks_[used_].stop, s, capture);
  ++used_;
  open_ = false;
}

void PhaseMarks::flush(::gpudm::PhaseTimer& timer) const {
  if (open_) throw ::gpudm::Error("gmt/cuda: phases flushed with one still open");
  for (std::size_t i = 0; i < used_; ++i)
    timer.add(marks_[i].name, elapsed_seconds(marks_[i].start, marks_[i].stop), ::gpudm::PhaseClock::device);
}

void MemoryGuard::take(std::size_t more, const std::string& what) {
  std::size_t free_b = 0, total_b = 0;
  GPUDM_CUDA_CHECK(cudaMemGetInfo(&free_b, &total_b));
  double avail = static_cast<double>(free_b);
  if (limit_ > 0) avail = std::min(avail, std::max(0.0, limit_ - static_cast<double>(held_)));
  if (static_cast<double>(more) > avail) {
    const std::string cap = limit_ > 0 ? " (device_memory_limit " + std::to_string(static_cast<long long>(limit_)) + " bytes, " +
                                             std::to_string(held_) + " held)"
                                       : "";
    throw ::gpudm::Unavailable("gmt/cuda: " + what + " needs " + std::to_string(more) + " bytes of device memory, " +
                               std::to_string(static_cast<long long>(avail)) + " free" + cap);
  }
  held_ += more;
}

void assemble_outputs(const std::vector<const ::gpudm::gmt::FlatTree*>& trees, const PackedBatch& batch, const NodeOut* nodes,
                      const int* rank, const double* model_coef, std::vector<::gpudm::gmt::EvalOutput>& out,
                      std::size_t first_tree) {
  const auto& present = batch.present_nodes();
  const auto& poff = batch.present_off();
  const auto& loff = batch.leaf_off();
  const auto& moff = batch.model_off();
  const auto& mattr = batch.model_attrs();
  const auto& nattr = batch.leaf_nattr();
  for (std::size_t k = 0; k < trees.size(); ++k) {
    const ::gpudm::gmt::FlatTree& t = *trees[k];
    ::gpudm::gmt::EvalOutput& o = out[first_tree + k];
    const std::size_t w = static_cast<std::size_t>(t.cols) + 1;
    o.nodes.assign(static_cast<std::size_t>(t.n_nodes()), ::gpudm::gmt::NodeStats{});
    const int p0 = poff[k];
    const int p1 = k + 1 < trees.size() ? poff[k + 1] : static_cast<int>(present.size());
    for (int p = p0; p < p1; ++p) {
      const NodeOut& d = nodes[p];
      ::gpudm::gmt::NodeStats& s = o.nodes[static_cast<std::size_t>(present[static_cast<std::size_t>(p)])];
      s.count = d.count;
      s.sse = d.sse;
      s.sae = d.sae;
      s.dipole_lo = d.lo;
      s.dipole_hi = d.hi;
      s.dipole_rand = d.rnd;
    }
    const int nl = t.n_leaves();
    o.coef.assign(static_cast<std::size_t>(nl) * w, 0.0);
    o.rank.assign(static_cast<std::size_t>(nl), -1);
    for (int l = 0; l < nl; ++l) {
      const std::size_t gl = static_cast<std::size_t>(loff[k] + l);
      double* c = o.coef.data() + static_cast<std::size_t>(l) * w;
      if (!t.refit[static_cast<std::size_t>(l)]) {
        std::copy_n(t.coef.data() + static_cast<std::size_t>(l) * w, w, c);
        continue;
      }
      o.rank[static_cast<std::size_t>(l)] = rank[gl];
      const int m0 = moff[gl];
      c[0] = model_coef[m0];
      for (int j = 1; j <= nattr[gl]; ++j) c[1 + mattr[static_cast<std::size_t>(m0 + j)]] = model_coef[m0 + j];
    }
  }
}

}  // namespace gpudm::backend::cuda::gmt_cuda
