#pragma once
// A batch of flattened individuals packed into one buffer for the device, and the device's
// per-node results. The BatchView (device pointers, sizes) is written at the start of the
// uploaded buffer, so kernels take a pointer to it and their launch parameters do not change
// from one generation to the next (the fast path replays them as a CUDA graph).
//
// Per tree b:    node range [t_node_off, +n_nodes) of the 2i+1 / 2i+2 flat layout, leaf range
//                [t_leaf_off, +n_leaves) (global leaf index gl = t_leaf_off + slot), the tree's
//                present (non-absent) nodes in ascending order at [t_present_off, +t_n_present).
// Per node:      n_attr (kAbsentNode, kLeafNode or the test attribute), n_thr, n_slot.
// Per leaf gl:   l_tree, l_node (node index within the tree), l_refit, l_nattr (model attributes),
//                l_moff: the leaf's model entries [l_moff, l_moff + l_nattr + 1): m_attr = -1 then
//                the attributes ascending; m_coef = intercept then one coefficient per attribute
//                (given for refit = 0 leaves, written by the device for refit = 1 leaves).
// Groups (fast estimate_errors): group g covers entries [g_begin[g], g_begin[g + 1]); entry e
//                is tree ge_tree[e], leaf slots [ge_lo[e], ge_hi[e]) at keys ge_key0[e] + slot - lo.
#include <cstddef>
#include <cstdint>
#include <vector>

#include "algorithms/gmt/flat_tree.hpp"

namespace gpudm::backend::cuda::gmt_cuda {

struct NodeOut {
  long long count;
  double sse, sae;
  long long lo, hi, rnd;
};

struct BatchView {
  int B, L, cols, n_groups;
  int total_nodes, total_model, total_present, max_width;
  const int* t_node_off;
  const int* t_n_nodes;
  const int* t_leaf_off;
  const int* t_n_leaves;
  const int* t_present_off;
  const int* t_n_present;
  const unsigned long long* t_salt;
  const int* n_attr;
  const float* n_thr;
  const int* n_slot;
  const int* l_tree;
  const int* l_node;
  const int* l_refit;
  const int* l_nattr;
  const int* l_moff;
  const int* m_attr;
  double* m_coef;
  const int* p_node;
  const int* g_begin;
  const int* ge_tree;
  const int* ge_lo;
  const int* ge_hi;
  const int* ge_key0;
};

// Host side of a packed batch: the bytes (copied to the device as one block) and host copies of
// the layout the host needs to assemble EvalOutputs.
class PackedBatch {
 public:
  // Lays out `trees` (group capacity: keys per estimate_errors group, 0 = no groups). Throws
  // gpudm::Error for inconsistent trees (attribute count, leaf tables).
  void pack(const std::vector<const ::gpudm::gmt::FlatTree*>& trees, int cols, int group_keys);
  // Writes the BatchView for a device buffer at `device_base` into the first bytes of `dst`
  // (which receives bytes() bytes: the view, then the arrays).
  void write(unsigned char* dst, unsigned char* device_base) const;

  std::size_t bytes() const { return bytes_; }
  int trees() const { return B_; }
  int leaves() const { return L_; }
  int total_nodes() const { return total_nodes_; }
  int total_model() const { return total_model_; }
  int total_present() const { return total_present_; }
  int max_width() const { return max_width_; }
  int groups() const { return n_groups_; }
  int refit_trees() const { return refit_trees_; }
  int refit_leaves() const { return refit_leaves_; }
  // Byte offset of m_coef in the buffer (results read it back).
  std::size_t coef_offset() const { return off_m_coef_; }

  // Host copies.
  const std::vector<int>& leaf_off() const { return t_leaf_off_; }
  const std::vector<int>& present_off() const { return t_present_off_; }
  const std::vector<int>& present_nodes() const { return p_node_; }
  const std::vector<int>& model_off() const { return l_moff_; }
  const std::vector<int>& model_attrs() const { return m_attr_; }
  const std::vector<int>& leaf_nattr() const { return l_nattr_; }
  const std::vector<int>& leaf_refit() const { return l_refit_; }
  const std::vector<int>& leaf_tree() const { return l_tree_; }

 private:
  int B_ = 0, L_ = 0, cols_ = 0, n_groups_ = 0;
  int total_nodes_ = 0, total_model_ = 0, total_present_ = 0, max_width_ = 0;
  int refit_trees_ = 0, refit_leaves_ = 0;
  std::vector<int> t_node_off_, t_n_nodes_, t_leaf_off_, t_n_leaves_, t_present_off_, t_n_present_;
  std::vector<unsigned long long> t_salt_;
  std::vector<int> n_attr_, n_slot_;
  std::vector<float> n_thr_;
  std::vector<int> l_tree_, l_node_, l_refit_, l_nattr_, l_moff_, m_attr_;
  std::vector<double> m_coef_;
  std::vector<int> p_node_;
  std::vector<int> g_begin_, ge_tree_, ge_lo_, ge_hi_, ge_key0_;
  std::size_t bytes_ = 0;
  std::size_t off_t_node_off_ = 0, off_t_n_nodes_ = 0, off_t_leaf_off_ = 0, off_t_n_leaves_ = 0, off_t_present_off_ = 0,
              off_t_n_present_ = 0, off_t_salt_ = 0, off_n_attr_ = 0, off_n_thr_ = 0, off_n_slot_ = 0, off_l_tree_ = 0,
              off_l_node_ = 0, off_l_refit_ = 0, off_l_nattr_ = 0, off_l_moff_ = 0, off_m_attr_ = 0, off_m_coef_ = 0,
              off_p_node_ = 0, off_g_begin_ = 0, off_ge_tree_ = 0, off_ge_lo_ = 0, off_ge_hi_ = 0, off_ge_key0_ = 0;
};

}  // namespace gpudm::backend::cuda::gmt_cuda
