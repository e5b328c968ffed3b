#pragma once
// The fast path's host-side layout shared by its translation units (fast.cu, fast_pack.cu,
// fast_launch.cu, fast_finish.cu, fast_split.cu, exact.cu): the packed batch's host arrays and the
// byte helpers of the upload buffer and of the ranks' exchange.
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "algorithms/core/error.hpp"
#include "backends/cuda/gmt/fused_types.cuh"
#include "backends/cuda/gmt/paths.cuh"

namespace gpudm::backend::cuda::gmt_cuda {

struct FastPath::Host {
  int B = 0, L = 0, S = 0, A = 0;
  int max_nl = 0, max_ns = 0, max_kv = 0;
  int stray_cap = 0;
  long long stat_total = 0, work_total = 0;
  int coef_total = 0;
  std::vector<int> t_node0, t_leaf0, t_stat0;
  std::vector<unsigned long long> t_salt;
  std::vector<int> t_order;  // the trees by estimated stats work, heaviest first
  std::size_t n_nodes = 0;  // packed nodes (written by pack straight into the pinned upload buffer)
  std::vector<int> l_stat, l_node;  // per leaf: stat leaf or -1; the tree's node
  std::vector<int> s_leaf, s_k, s_fit, s_attr0;
  std::vector<long long> s_stat0, s_work0;
  std::vector<int> attrs;
  std::vector<double> coef_in;
  // One tree's stat leaves as its task in the one-pass pack found them (offsets within the tree;
  // the serial step after the pass adds the tree's own offsets). Kept across calls for capacity.
  struct TreePart {
    struct Stat {
      int leaf, k, fit, attr0;     // the leaf (batch-wide index), its model's size, refit or not, attrs offset
      long long stat0, work0;      // its sums' and solve work's offsets
    };
    std::vector<Stat> stat;
    std::vector<int> attrs;
    std::vector<double> coef;
    int max_kv = 0;
    long long stats = 0, work = 0, est = 0;
    void clear() {
      stat.clear();
      attrs.clear();
      coef.clear();
      max_kv = 0;
      stats = work = est = 0;
    }
  };
  std::vector<TreePart> part;
  // the downloaded outputs (views into h_out_)
  const LeafOut* leaf_out = nullptr;
  const StatOut* stat_out = nullptr;
  const double* stats = nullptr;
  const double* coef = nullptr;
  const int* strays = nullptr;
  // Empties every array but keeps its capacity (pack runs once per call: the arrays' sizes repeat).
  void reset() {
    B = L = S = A = 0;
    max_nl = max_ns = max_kv = 0;
    stray_cap = 0;
    stat_total = work_total = 0;
    coef_total = 0;
    for (auto* v : {&t_node0, &t_leaf0, &t_stat0, &l_stat, &l_node, &s_leaf, &s_k, &s_fit, &s_attr0, &attrs}) v->clear();
    t_salt.clear();
    t_order.clear();
    n_nodes = 0;
    s_stat0.clear();
    s_work0.clear();
    coef_in.clear();
    leaf_out = nullptr;
    stat_out = nullptr;
    stats = nullptr;
    coef = nullptr;
    strays = nullptr;
  }
};

namespace fast_detail {
inline std::size_t align16(std::size_t b) { return (b + 15) / 16 * 16; }
template <class T>
std::size_t bytes_of(std::size_t n) {
  return align16(n * sizeof(T));
}
// Bytes as 32-bit words (the communicator's unit), padded to whole words.
inline void put_bytes(std::vector<std::uint32_t>& w, const void* p, std::size_t bytes) {
  const std::size_t at = w.size();
  w.resize(at + (bytes + 3) / 4, 0u);
  if (bytes) std::memcpy(w.data() + at, p, bytes);
}
// `bytes` from word `at` on (at moves past them).
inline void take_bytes(const std::vector<std::uint32_t>& w, std::size_t& at, void* p, std::size_t bytes, const char* what) {
  const std::size_t words = (bytes + 3) / 4;
  GPUDM_REQUIRE(at + words <= w.size(), std::string("gmt/cuda: ") + what + ": the ranks' parts do not add up (internal error)");
  if (bytes) std::memcpy(p, w.data() + at, bytes);
  at += words;
}
// Where the packed nodes start in the upload buffer of a batch of B trees (write_view's order: the
// view, t_node0, t_leaf0, t_stat0, t_salt, then the nodes).
inline std::size_t nodes_offset(int B) {
  const auto B1 = static_cast<std::size_t>(B) + 1;
  return align16(sizeof(FusedView)) + 3 * bytes_of<int>(B1) + bytes_of<unsigned long long>(static_cast<std::size_t>(B));
}
}  // namespace fast_detail

}  // namespace gpudm::backend::cuda::gmt_cuda
