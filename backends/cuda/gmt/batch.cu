#include "backends/cuda/gmt/batch.cuh"

#include <algorithm>
#include <cstring>
#include <string>

#include "algorithms/core/error.hpp"

namespace gpudm::backend::cuda::gmt_cuda {

namespace {
constexpr std::size_t kAlign = 16;
std::size_t align_up(std::size_t x) { return (x + kAlign - 1) / kAlign * kAlign; }
template <class T>
void put(unsigned char* dst, std::size_t off, const std::vector<T>& v) {
  if (!v.empty()) std::memcpy(dst + off, v.data(), v.size() * sizeof(T));
}
}  // namespace

void PackedBatch::pack(const std::vector<const ::gpudm::gmt::FlatTree*>& trees, int cols, int group_keys) {
  using ::gpudm::gmt::kAbsentNode;
  B_ = static_cast<int>(trees.size());
  cols_ = cols;
  t_node_off_.assign(static_cast<std::size_t>(B_), 0);
  t_n_nodes_.assign(static_cast<std::size_t>(B_), 0);
  t_leaf_off_.assign(static_cast<std::size_t>(B_), 0);
  t_n_leaves_.assign(static_cast<std::size_t>(B_), 0);
  t_present_off_.assign(static_cast<std::size_t>(B_), 0);
  t_n_present_.assign(static_cast<std::size_t>(B_), 0);
  t_salt_.assign(static_cast<std::size_t>(B_), 0);
  n_attr_.clear();
  n_thr_.clear();
  n_slot_.clear();
  l_tree_.clear();
  l_node_.clear();
  l_refit_.clear();
  l_nattr_.clear();
  l_moff_.clear();
  m_attr_.clear();
  m_coef_.clear();
  p_node_.clear();
  refit_trees_ = refit_leaves_ = 0;
  max_width_ = 2;
  long long nodes = 0, leaves = 0;
  for (int b = 0; b < B_; ++b) {
    const ::gpudm::gmt::FlatTree& t = *trees[static_cast<std::size_t>(b)];
    const auto bi = static_cast<std::size_t>(b);
    if (t.cols != cols)
      throw ::gpudm::Error("gmt/cuda: flat tree has " + std::to_string(t.cols) + " attributes, the dataset " +
                           std::to_string(cols));
    const int nn = t.n_nodes(), nl = t.n_leaves();
    if (nn < 1 || t.threshold.size() != static_cast<std::size_t>(nn) || t.leaf_slot.size() != static_cast<std::size_t>(nn) ||
        t.refit.size() != static_cast<std::size_t>(nl) ||
        t.mask.size() != static_cast<std::size_t>(nl) * static_cast<std::size_t>(cols) ||
        t.coef.size() != static_cast<std::size_t>(nl) * static_cast<std::size_t>(cols + 1))
      throw ::gpudm::Error("gmt/cuda: inconsistent flat tree (node, leaf, mask or coefficient tables)");
    if (nodes + nn > 0x7FFFFFFFLL || leaves + nl > 0x7FFFFFFFLL)
      throw ::gpudm::Error("gmt/cuda: batch of " + std::to_string(B_) + " trees has more than 2^31 nodes");
    t_node_off_[bi] = static_cast<int>(nodes);
    t_n_nodes_[bi] = nn;
    t_leaf_off_[bi] = static_cast<int>(leaves);
    t_n_leaves_[bi] = nl;
    t_salt_[bi] = static_cast<unsigned long long>(t.salt);
    t_present_off_[bi] = static_cast<int>(p_node_.size());
    for (int i = 0; i < nn; ++i) {
      n_attr_.push_back(t.attr[static_cast<std::size_t>(i)]);
      n_thr_.push_back(t.threshold[static_cast<std::size_t>(i)]);
      n_slot_.push_back(t.leaf_slot[static_cast<std::size_t>(i)]);
      if (t.attr[static_cast<std::size_t>(i)] != kAbsentNode) p_node_.push_back(i);
    }
    t_n_present_[bi] = static_cast<int>(p_node_.size()) - t_present_off_[bi];
    bool any_refit = false;
    for (int l = 0; l < nl; ++l) {
      const auto li = static_cast<std::size_t>(l);
      const int node = t.leaf_node[li];
      if (node < 0 || node >= nn || t.leaf_slot[static_cast<std::size_t>(node)] != l)
        throw ::gpudm::Error("gmt/cuda: inconsistent flat tree (leaf " + std::to_string(l) + ")");
      l_tree_.push_back(b);
      l_node_.push_back(node);
      const int refit = t.refit[li] ? 1 : 0;
      any_refit = any_refit || refit;
      refit_leaves_ += refit;
      l_refit_.push_back(refit);
      l_moff_.push_back(static_cast<int>(m_attr_.size()));
      m_attr_.push_back(-1);
      m_coef_.push_back(refit ? 0.0 : t.coef[li * static_cast<std::size_t>(cols + 1)]);
      int na = 0;
      for (int c = 0; c < cols; ++c)
        if (t.mask[li * static_cast<std::size_t>(cols) + static_cast<std::size_t>(c)]) {
          m_attr_.push_back(c);
          m_coef_.push_back(refit ? 0.0 : t.coef[li * static_cast<std::size_t>(cols + 1) + 1 + static_cast<std::size_t>(c)]);
          ++na;
        }
      l_nattr_.push_back(na);
      if (refit) max_width_ = std::max(max_width_, na + 2);
    }
    refit_trees_ += any_refit ? 1 : 0;
    nodes += nn;
    leaves += nl;
  }
  L_ = static_cast<int>(leaves);
  total_nodes_ = static_cast<int>(nodes);
  total_model_ = static_cast<int>(m_attr_.size());
  total_present_ = static_cast<int>(p_node_.size());

  // estimate_errors groups: consecutive trees while their leaves fit group_keys; a tree with
  // more leaves is split into leaf ranges of its own.
  g_begin_.clear();
  ge_tree_.clear();
  ge_lo_.clear();
  ge_hi_.clear();
  ge_key0_.clear();
  if (group_keys > 0) {
    int used = group_keys;  // forces a new group at the first entry
    for (int b = 0; b < B_; ++b) {
      const int nl = t_n_leaves_[static_cast<std::size_t>(b)];
      for (int lo = 0; lo < nl;) {
        const int take = std::min(nl - lo, group_keys);
        if (used + take > group_keys) {
          g_begin_.push_back(static_cast<int>(ge_tree_.size()));
          used = 0;
        }
        ge_tree_.push_back(b);
        ge_lo_.push_back(lo);
        ge_hi_.push_back(lo + take);
        ge_key0_.push_back(used);
        used += take;
        lo += take;
      }
    }
    g_begin_.push_back(static_cast<int>(ge_tree_.size()));
  } else {
    g_begin_.push_back(0);
  }
  n_groups_ = static_cast<int>(g_begin_.size()) - 1;

  std::size_t off = align_up(sizeof(BatchView));
  auto take = [&off](std::size_t& field, std::size_t n, std::size_t elem) {
    field = off;
    off = align_up(off + n * elem);
  };
  take(off_t_node_off_, t_node_off_.size(), sizeof(int));
  take(off_t_n_nodes_, t_n_nodes_.size(), sizeof(int));
  take(off_t_leaf_off_, t_leaf_off_.size(), sizeof(int));
  take(off_t_n_leaves_, t_n_leaves_.size(), sizeof(int));
  take(off_t_present_off_, t_present_off_.size(), sizeof(int));
  take(off_t_n_present_, t_n_present_.size(), sizeof(int));
  take(off_t_salt_, t_salt_.size(), sizeof(unsigned long long));
  take(off_n_attr_, n_attr_.size(), sizeof(int));
  take(off_n_thr_, n_thr_.size(), sizeof(float));
  take(off_n_slot_, n_slot_.size(), sizeof(int));
  take(off_l_tree_, l_tree_.size(), sizeof(int));
  take(off_l_node_, l_node_.size(), sizeof(int));
  take(off_l_refit_, l_refit_.size(), sizeof(int));
  take(off_l_nattr_, l_nattr_.size(), sizeof(int));
  take(off_l_moff_, l_moff_.size(), sizeof(int));
  take(off_m_attr_, m_attr_.size(), sizeof(int));
  take(off_m_coef_, m_coef_.size(), sizeof(double));
  take(off_p_node_, p_node_.size(), sizeof(int));
  take(off_g_begin_, g_begin_.size(), sizeof(int));
  take(off_ge_tree_, ge_tree_.size(), sizeof(int));
  take(off_ge_lo_, ge_lo_.size(), sizeof(int));
  take(off_ge_hi_, ge_hi_.size(), sizeof(int));
  take(off_ge_key0_, ge_key0_.size(), sizeof(int));
  bytes_ = off;
}

void PackedBatch::write(unsigned char* dst, unsigned char* device_base) const {
  BatchView v{};
  v.B = B_;
  v.L = L_;
  v.cols = cols_;
  v.n_groups = n_groups_;
  v.total_nodes = total_nodes_;
  v.total_model = total_model_;
  v.total_present = total_present_;
  v.max_width = max_width_;
  auto at = [device_base](std::size_t off) { return device_base + off; };
  v.t_node_off = reinterpret_cast<const int*>(at(off_t_node_off_));
  v.t_n_nodes = reinterpret_cast<const int*>(at(off_t_n_nodes_));
  v.t_leaf_off = reinterpret_cast<const int*>(at(off_t_leaf_off_));
  v.t_n_leaves = reinterpret_cast<const int*>(at(off_t_n_leaves_));
  v.t_present_off = reinterpret_cast<const int*>(at(off_t_present_off_));
  v.t_n_present = reinterpret_cast<const int*>(at(off_t_n_present_));
  v.t_salt = reinterpret_cast<const unsigned long long*>(at(off_t_salt_));
  v.n_attr = reinterpret_cast<const int*>(at(off_n_attr_));
  v.n_thr = reinterpret_cast<const float*>(at(off_n_thr_));
  v.n_slot = reinterpret_cast<const int*>(at(off_n_slot_));
  v.l_tree = reinterpret_cast<const int*>(at(off_l_tree_));
  v.l_node = reinterpret_cast<const int*>(at(off_l_node_));
  v.l_refit = reinterpret_cast<const int*>(at(off_l_refit_));
  v.l_nattr = reinterpret_cast<const int*>(at(off_l_nattr_));
  v.l_moff = reinterpret_cast<const int*>(at(off_l_moff_));
  v.m_attr = reinterpret_cast<const int*>(at(off_m_attr_));
  v.m_coef = reinterpret_cast<double*>(at(off_m_coef_));
  v.p_node = reinterpret_cast<const int*>(at(off_p_node_));
  v.g_begin = reinterpret_cast<const int*>(at(off_g_begin_));
  v.ge_tree = reinterpret_cast<const int*>(at(off_ge_tree_));
  v.ge_lo = reinterpret_cast<const int*>(at(off_ge_lo_));
  v.ge_hi = reinterpret_cast<const int*>(at(off_ge_hi_));
  v.ge_key0 = reinterpret_cast<const int*>(at(off_ge_key0_));
  std::memset(dst, 0, bytes_);
  std::memcpy(dst, &v, sizeof(v));
  put(dst, off_t_node_off_, t_node_off_);
  put(dst, off_t_n_nodes_, t_n_nodes_);
  put(dst, off_t_leaf_off_, t_leaf_off_);
  put(dst, off_t_n_leaves_, t_n_leaves_);
  put(dst, off_t_present_off_, t_present_off_);
  put(dst, off_t_n_present_, t_n_present_);
  put(dst, off_t_salt_, t_salt_);
  put(dst, off_n_attr_, n_attr_);
  put(dst, off_n_thr_, n_thr_);
  put(dst, off_n_slot_, n_slot_);
  put(dst, off_l_tree_, l_tree_);
  put(dst, off_l_node_, l_node_);
  put(dst, off_l_refit_, l_refit_);
  put(dst, off_l_nattr_, l_nattr_);
  put(dst, off_l_moff_, l_moff_);
  put(dst, off_m_attr_, m_attr_);
  put(dst, off_m_coef_, m_coef_);
  put(dst, off_p_node_, p_node_);
  put(dst, off_g_begin_, g_begin_);
  put(dst, off_ge_tree_, ge_tree_);
  put(dst, off_ge_lo_, ge_lo_);
  put(dst, off_ge_hi_, ge_hi_);
  put(dst, off_ge_key0_, ge_key0_);
}

}  // namespace gpudm::backend::cuda::gmt_cuda
