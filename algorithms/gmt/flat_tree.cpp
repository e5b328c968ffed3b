#include "algorithms/gmt/flat_tree.hpp"

#include "algorithms/core/error.hpp"
#include "algorithms/gmt/tree.hpp"

namespace gpudm {
namespace gmt {

void flatten(const Tree& t, std::uint64_t salt, int cols, FlatTree& f) {
  const int levels = t.levels();
  GPUDM_REQUIRE(levels <= 24, "gmt: tree of " + std::to_string(levels) + " levels is too deep to flatten");
  const std::size_t nn = (std::size_t{1} << levels) - 1;
  f.levels = levels;
  f.cols = cols;
  f.salt = salt;
  f.attr.assign(nn, kAbsentNode);
  f.threshold.assign(nn, 0.0f);
  f.leaf_slot.assign(nn, -1);
  f.leaf_node.clear();
  f.compact.clear();
  f.refit.clear();
  f.mask.clear();
  f.coef.clear();
  const std::size_t w = static_cast<std::size_t>(cols) + 1;
  // Compact node i sits at flat position pos[i] (breadth-first, so parents come first).
  std::vector<std::size_t> pos(static_cast<std::size_t>(t.size()), 0);
  for (int i = 0; i < t.size(); ++i) {
    const TreeNode& n = t.node(i);
    const std::size_t p = pos[static_cast<std::size_t>(i)];
    if (!n.is_leaf()) {
      f.attr[p] = n.attr;
      f.threshold[p] = n.threshold;
      pos[static_cast<std::size_t>(n.left)] = 2 * p + 1;
      pos[static_cast<std::size_t>(n.left + 1)] = 2 * p + 2;
      continue;
    }
    f.attr[p] = kLeafNode;
    f.leaf_slot[p] = static_cast<std::int32_t>(f.leaf_node.size());
    f.leaf_node.push_back(static_cast<std::int32_t>(p));
    f.compact.push_back(i);
    const bool refit = t.leaf_needs_refit(i);
    f.refit.push_back(refit ? 1 : 0);
    const std::size_t m0 = f.mask.size(), c0 = f.coef.size();
    f.mask.resize(m0 + static_cast<std::size_t>(cols), 0);
    f.coef.resize(c0 + w, 0.0);
    const auto a = t.attrs(i);
    const auto c = t.coef(i);
    for (std::size_t k = 0; k < a.size(); ++k) {
      f.mask[m0 + static_cast<std::size_t>(a[k])] = 1;
      if (!refit) f.coef[c0 + 1 + static_cast<std::size_t>(a[k])] = c[k + 1];
    }
    if (!refit) f.coef[c0] = c[0];
  }
}

}  // namespace gmt
}  // namespace gpudm
