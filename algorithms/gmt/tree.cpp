#include "algorithms/gmt/tree.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>
#include <limits>
#include <sstream>

#include "algorithms/core/json_limits.hpp"
#include "algorithms/gmt/leaf_stats.hpp"

namespace gpudm {
namespace gmt {

std::uint64_t dipole_key(std::uint64_t salt, std::uint64_t row) { return leafstats::dipole_key(salt, row); }

Tree Tree::leaf(const std::vector<int>& attrs) {
  Tree t;
  t.set_model(0, attrs);
  return t;
}

Tree Tree::from_parts(std::vector<TreeNode> nodes, std::vector<std::int32_t> attr_pool, std::vector<double> coef_pool,
                      int cols, const std::string& where) {
  const auto bad = [&](const std::string& what) { return Error(where + ": " + what); };
  if (nodes.empty()) throw bad("a tree without nodes");
  const auto nn = static_cast<std::int64_t>(nodes.size());
  if (nn > (std::int64_t{1} << 26)) throw bad("a tree of " + std::to_string(nn) + " nodes");
  nodes[0].parent = -1;
  nodes[0].depth = 0;
  std::int64_t next_child = 1;  // breadth-first: the children of the k-th internal node come next
  for (std::int64_t i = 0; i < nn; ++i) {
    TreeNode& n = nodes[static_cast<std::size_t>(i)];
    if (n.attr >= 0) {
      if (n.attr >= cols) throw bad("node " + std::to_string(i) + " tests attribute " + std::to_string(n.attr) + " of " + std::to_string(cols));
      if (n.left != next_child || next_child + 1 >= nn) throw bad("node " + std::to_string(i) + " has its children out of place");
      for (int side = 0; side < 2; ++side) {
        TreeNode& c = nodes[static_cast<std::size_t>(n.left + side)];
        c.parent = static_cast<std::int32_t>(i);
        c.depth = n.depth + 1;
      }
      next_child += 2;
      continue;
    }
    if (n.attr != kLeafNode) throw bad("node " + std::to_string(i) + " has attribute " + std::to_string(n.attr));
    n.left = -1;
    if (n.m_off < 0 || n.m_len < 0 || n.m_len > cols || static_cast<std::int64_t>(n.m_off) + n.m_len > static_cast<std::int64_t>(attr_pool.size()))
      throw bad("leaf " + std::to_string(i) + " has its model outside the pool");
    for (std::int32_t k = 0; k < n.m_len; ++k) {
      const std::int32_t a = attr_pool[static_cast<std::size_t>(n.m_off + k)];
      if (a < 0 || a >= cols || (k > 0 && a <= attr_pool[static_cast<std::size_t>(n.m_off + k - 1)]))
        throw bad("leaf " + std::to_string(i) + " has model attributes out of range or order");
    }
    n.has_coef = n.has_coef ? 1 : 0;
    n.dirty = n.dirty ? 1 : 0;
    if (n.has_coef && (n.c_off < 0 || static_cast<std::int64_t>(n.c_off) + n.m_len + 1 > static_cast<std::int64_t>(coef_pool.size())))
      throw bad("leaf " + std::to_string(i) + " has its coefficients outside the pool");
  }
  if (next_child != nn) throw bad("nodes that no test reaches");
  Tree t;
  t.nodes_ = std::move(nodes);
  t.attr_pool_ = std::move(attr_pool);
  t.coef_pool_ = std::move(coef_pool);
  return t;
}

View<std::int32_t> Tree::attrs(int i) const {
  const TreeNode& n = node(i);
  return {attr_pool_.data() + n.m_off, static_cast<std::size_t>(n.m_len)};
}

View<double> Tree::coef(int i) const {
  const TreeNode& n = node(i);
  if (!n.has_coef) return {};
  return {coef_pool_.data() + n.c_off, static_cast<std::size_t>(n.m_len) + 1};
}

// Every test has two children (from_parts checks it, every edit keeps it), so a tree of n nodes has
// (n + 1) / 2 leaves: no pass over the nodes (the EA's fitness asks for it twice per evaluated tree).
int Tree::n_leaves() const { return (size() + 1) / 2; }

int Tree::levels() const {
  int d = 0;
  for (const TreeNode& n : nodes_) d = std::max(d, n.depth);
  return d + 1;
}

int Tree::model_attributes() const {
  int w = 0;
  for (const TreeNode& n : nodes_)
    if (n.is_leaf()) w += n.m_len;
  return w;
}

bool Tree::leaf_needs_refit(int i) const {
  const TreeNode& n = node(i);
  return n.dirty || !n.has_coef;
}

std::vector<int> Tree::subtree(int i) const {
  std::vector<int> out{i};
  for (std::size_t k = 0; k < out.size(); ++k) {
    const TreeNode& n = node(out[k]);
    if (!n.is_leaf()) {
      out.push_back(n.left);
      out.push_back(n.left + 1);
    }
  }
  return out;
}

std::vector<int> Tree::preorder() const {
  std::vector<int> out;
  out.reserve(nodes_.size());
  std::vector<int> stack{0};
  while (!stack.empty()) {
    const int i = stack.back();
    stack.pop_back();
    out.push_back(i);
    const TreeNode& n = node(i);
    if (!n.is_leaf()) {
      stack.push_back(n.left + 1);
      stack.push_back(n.left);
    }
  }
  return out;
}

void Tree::append_model(TreeNode& n, View<std::int32_t> a, View<double> c) {
  n.m_off = static_cast<std::int32_t>(attr_pool_.size());
  n.m_len = static_cast<std::int32_t>(a.size());
  attr_pool_.insert(attr_pool_.end(), a.begin(), a.end());
  n.c_off = static_cast<std::int32_t>(coef_pool_.size());
  if (n.has_coef) coef_pool_.insert(coef_pool_.end(), c.begin(), c.end());
}

template <class Subst>
Tree Tree::build(Source root, Subst sub, std::vector<Source>* sources, std::size_t nodes_hint, std::size_t attrs_hint,
                 std::size_t coefs_hint) {
  Tree out;
  out.nodes_.clear();
  // Sized once (the hints: the source trees' sizes), so an edit costs one allocation per array.
  out.nodes_.reserve(nodes_hint);
  out.attr_pool_.reserve(attrs_hint);
  out.coef_pool_.reserve(coefs_hint);
  thread_local std::vector<Source> local;  // (build is not reentrant: sub() only maps sources)
  std::vector<Source>& src = sources ? *sources : local;
  src.clear();
  src.reserve(nodes_hint);
  root = sub(root);
  src.push_back(root);
  out.nodes_.push_back(root.tree->node(root.node));
  out.nodes_[0].parent = -1;
  out.nodes_[0].depth = 0;
  for (std::size_t k = 0; k < out.nodes_.size(); ++k) {
    const Source s = src[k];
    const TreeNode& from = s.tree->node(s.node);
    TreeNode& to = out.nodes_[k];
    if (from.is_leaf()) {
      to.left = -1;
      out.append_model(to, s.tree->attrs(s.node), s.tree->coef(s.node));
      continue;
    }
    const int child = static_cast<int>(out.nodes_.size());
    const std::int32_t depth = out.nodes_[k].depth + 1;
    for (int side = 0; side < 2; ++side) {
      const Source c = sub(Source{s.tree, from.left + side});
      src.push_back(c);
      // Copied straight into the array, then the two fields set there: a local copy whose fields
      // are set before the copy makes each 16-byte load of it wait on the 4-byte stores (a failed
      // store forwarding per node, measured as the hottest instruction of replace() on 600-node trees).
      out.nodes_.push_back(c.tree->node(c.node));
      TreeNode& n = out.nodes_.back();
      n.parent = static_cast<std::int32_t>(k);
      n.depth = depth;
    }
    out.nodes_[k].left = child;  // (`to` may dangle after the push_backs)
  }
  return out;
}

Tree Tree::join(int attr, float threshold, const Tree& left, const Tree& right) {
  Tree base;  // the root test over two stand-in leaves, which build() replaces by `left` and `right`
  base.nodes_.resize(3);
  base.nodes_[0].attr = attr;
  base.nodes_[0].threshold = threshold;
  base.nodes_[0].left = 1;
  base.nodes_[1].parent = base.nodes_[2].parent = 0;
  base.nodes_[1].depth = base.nodes_[2].depth = 1;
  return build(
      Source{&base, 0},
      [&](Source s) {
        if (s.tree == &base && s.node == 1) return Source{&left, 0};
        if (s.tree == &base && s.node == 2) return Source{&right, 0};
        return s;
      },
      nullptr, left.nodes_.size() + right.nodes_.size() + 1, left.attr_pool_.size() + right.attr_pool_.size(),
      left.coef_pool_.size() + right.coef_pool_.size());
}

Tree Tree::extract(int i) const {
  return build(Source{this, i}, [](Source s) { return s; }, nullptr, nodes_.size(), attr_pool_.size(), coef_pool_.size());
}

void Tree::replace(int i, const Tree& sub) {
  *this = build(
      Source{this, 0},
      [&](Source s) {
        if (s.tree == this && s.node == i) return Source{&sub, 0};
        return s;
      },
      nullptr, nodes_.size() + sub.nodes_.size(), attr_pool_.size() + sub.attr_pool_.size(),
      coef_pool_.size() + sub.coef_pool_.size());
}

void Tree::make_leaf(int i, const std::vector<int>& attrs) { replace(i, leaf(attrs)); }

Tree Tree::grafted(const std::vector<int>& at, const std::vector<Source>& with, std::vector<Source>* sources) const {
  GPUDM_REQUIRE(at.size() == with.size(), "gmt: grafted() needs one source per node");
  std::size_t nodes = nodes_.size(), attrs = attr_pool_.size(), coefs = coef_pool_.size();
  for (const Source& w : with) {
    nodes += w.tree->nodes_.size();
    attrs += w.tree->attr_pool_.size();
    coefs += w.tree->coef_pool_.size();
  }
  return build(
      Source{this, 0},
      [&](Source s) {
        if (s.tree == this)
          for (std::size_t k = 0; k < at.size(); ++k)
            if (at[k] == s.node) return with[k];
        return s;
      },
      sources, nodes, attrs, coefs);
}

void Tree::set_model(int i, const std::vector<int>& a) {
  // (a test made a leaf here would orphan its children: make_leaf rebuilds the tree instead)
  GPUDM_REQUIRE(node(i).is_leaf(), "gmt: set_model on node " + std::to_string(i) + ", a test (make_leaf replaces a subtree)");
  TreeNode& n = node(i);
  n.attr = kLeafNode;
  n.threshold = 0.0f;
  n.left = -1;
  n.m_off = static_cast<std::int32_t>(attr_pool_.size());
  n.m_len = static_cast<std::int32_t>(a.size());
  attr_pool_.insert(attr_pool_.end(), a.begin(), a.end());
  n.has_coef = 0;
  n.dirty = 1;
  n.rank = -1;
}

void Tree::set_fit(int i, const std::vector<int>& a, const std::vector<double>& c, int rank) {
  GPUDM_REQUIRE(c.size() == a.size() + 1, "gmt: a leaf fit needs one coefficient per attribute and the intercept");
  TreeNode& n = node(i);
  const std::size_t had = n.has_coef ? static_cast<std::size_t>(n.m_len) + 1 : 0;  // coefficients at c_off now
  if (a.size() <= static_cast<std::size_t>(n.m_len)) {
    std::copy(a.begin(), a.end(), attr_pool_.begin() + n.m_off);  // the kept attributes are a subset
  } else {
    n.m_off = static_cast<std::int32_t>(attr_pool_.size());
    attr_pool_.insert(attr_pool_.end(), a.begin(), a.end());
  }
  n.m_len = static_cast<std::int32_t>(a.size());
  if (c.size() > had || n.c_off + c.size() > coef_pool_.size()) {  // (not n.m_len: updated above)
    n.c_off = static_cast<std::int32_t>(coef_pool_.size());
    coef_pool_.insert(coef_pool_.end(), c.begin(), c.end());
  } else {
    std::copy(c.begin(), c.end(), coef_pool_.begin() + n.c_off);
  }
  n.has_coef = 1;
  n.dirty = 0;
  n.rank = rank;
}

void Tree::mark_dirty(int i) {
  for (int k : subtree(i))
    if (node(k).is_leaf()) node(k).dirty = 1;
}

void Tree::compact_pools(int w) {
  if (w < 0) w = model_attributes();
  if (attr_pool_.size() <= 2 * static_cast<std::size_t>(w) + 16) return;
  std::vector<std::int32_t> a;
  std::vector<double> c;
  for (TreeNode& n : nodes_) {
    if (!n.is_leaf()) continue;
    const auto off = static_cast<std::int32_t>(a.size());
    a.insert(a.end(), attr_pool_.begin() + n.m_off, attr_pool_.begin() + n.m_off + n.m_len);
    n.m_off = off;
    if (n.has_coef) {
      const auto coff = static_cast<std::int32_t>(c.size());
      c.insert(c.end(), coef_pool_.begin() + n.c_off, coef_pool_.begin() + n.c_off + n.m_len + 1);
      n.c_off = coff;
    }
  }
  attr_pool_.swap(a);
  coef_pool_.swap(c);
}

int Tree::route(const Dataset& d, std::size_t row) const {
  int i = 0;
  while (!node(i).is_leaf()) {
    const TreeNode& n = node(i);
    i = n.left + (d.at(row, static_cast<std::size_t>(n.attr)) <= n.threshold ? 0 : 1);
  }
  return i;
}

double Tree::predict(const Dataset& d, std::size_t row) const {
  const int l = route(d, row);
  const auto c = coef(l);
  if (c.empty()) return 0.0;
  const auto a = attrs(l);
  double y = c[0];
  for (std::size_t k = 0; k < a.size(); ++k) y += c[k + 1] * static_cast<double>(d.at(row, static_cast<std::size_t>(a[k])));
  return y;
}

bool Tree::same_model(const Tree& o) const {
  if (size() != o.size()) return false;
  for (int i = 0; i < size(); ++i) {
    const TreeNode &a = node(i), &b = o.node(i);
    if (a.attr != b.attr || a.left != b.left) return false;
    if (!a.is_leaf() && a.threshold != b.threshold) return false;
    if (a.is_leaf()) {
      const auto aa = attrs(i), ba = o.attrs(i);
      if (!std::equal(aa.begin(), aa.end(), ba.begin(), ba.end())) return false;
      const auto ac = coef(i), bc = o.coef(i);
      if (!std::equal(ac.begin(), ac.end(), bc.begin(), bc.end())) return false;
    }
  }
  return true;
}

int count_leaves(const Tree& t) { return t.n_leaves(); }
int count_internal(const Tree& t) { return t.n_internal(); }
int tree_depth(const Tree& t) { return t.levels(); }
int count_model_attributes(const Tree& t) { return t.model_attributes(); }

int center_thresholds(Tree& t, const Dataset& d) {
  // Rows per node, breadth-first: a node's rows are split between its children.
  std::vector<std::vector<std::uint32_t>> rows(static_cast<std::size_t>(t.size()));
  rows[0].resize(d.rows());
  for (std::size_t i = 0; i < d.rows(); ++i) rows[0][i] = static_cast<std::uint32_t>(i);
  int moved = 0;
  for (int i = 0; i < t.size(); ++i) {
    TreeNode& n = t.node(i);
    auto& mine = rows[static_cast<std::size_t>(i)];
    if (n.is_leaf()) {
      std::vector<std::uint32_t>().swap(mine);
      continue;
    }
    const auto a = static_cast<std::size_t>(n.attr);
    float lo = -std::numeric_limits<float>::infinity(), hi = std::numeric_limits<float>::infinity();
    auto& left = rows[static_cast<std::size_t>(n.left)];
    auto& right = rows[static_cast<std::size_t>(n.left + 1)];
    for (std::uint32_t r : mine) {
      const float x = d.at(r, a);
      if (x <= n.threshold) {
        left.push_back(r);
        lo = std::max(lo, x);
      } else {
        right.push_back(r);
        hi = std::min(hi, x);
      }
    }
    std::vector<std::uint32_t>().swap(mine);
    if (!left.empty() && !right.empty()) {
      float m = static_cast<float>(0.5 * (static_cast<double>(lo) + static_cast<double>(hi)));
      if (!(m < hi)) m = lo;  // adjacent floats: keep every left value <= m < every right value
      if (m != n.threshold) {
        n.threshold = m;
        ++moved;
      }
    }
  }
  return moved;
}

namespace {
std::string num(double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.6g", v);
  return buf;
}
}  // namespace

std::string to_text(const Tree& t, const Dataset& d) {
  std::ostringstream os;
  std::vector<int> leaves;
  std::function<void(int, int)> rec = [&](int i, int depth) {
    const TreeNode& n = t.node(i);
    auto line = [&](const char* op, int child) {
      for (int k = 0; k < depth; ++k) os << "|   ";
      os << d.attribute(static_cast<std::size_t>(n.attr)).name << ' ' << op << ' ' << num(n.threshold);
      const TreeNode& c = t.node(child);
      if (c.is_leaf()) {
        leaves.push_back(child);
        os << " : LM" << leaves.size();
        // (a tree read from a model file has no training statistics: nothing to print)
        if (c.stats.count > 0) os << " (" << c.stats.count << " rows, rmse " << num(std::sqrt(c.stats.sse / double(c.stats.count))) << ")";
        os << '\n';
      } else {
        os << '\n';
        rec(child, depth + 1);
      }
    };
    line("<=", n.left);
    line(">", n.left + 1);
  };
  if (t.node(0).is_leaf()) {
    leaves.push_back(0);
    os << "LM1 (" << t.node(0).stats.count << " rows)\n";
  } else {
    rec(0, 0);
  }
  os << '\n';
  for (std::size_t k = 0; k < leaves.size(); ++k) {
    const auto c = t.coef(leaves[k]);
    const auto a = t.attrs(leaves[k]);
    os << "LM" << (k + 1) << ": y = " << num(c.empty() ? 0.0 : c[0]);
    for (std::size_t j = 0; j < a.size() && j + 1 < c.size(); ++j) {
      os << (c[j + 1] < 0 ? " - " : " + ") << num(std::fabs(c[j + 1])) << " * "
         << d.attribute(static_cast<std::size_t>(a[j])).name;
    }
    os << '\n';
  }
  os << "\nleaves: " << leaves.size() << ", attributes in models: " << t.model_attributes() << '\n';
  return os.str();
}

nlohmann::ordered_json to_json(const Tree& t, const Dataset& d) {
  std::function<nlohmann::ordered_json(int)> rec = [&](int i) {
    const TreeNode& n = t.node(i);
    nlohmann::ordered_json j;
    if (n.is_leaf()) {
      const auto c = t.coef(i);
      const auto a = t.attrs(i);
      j["leaf"] = true;
      j["rows"] = n.stats.count;
      j["intercept"] = c.empty() ? 0.0 : c[0];
      auto terms = nlohmann::ordered_json::array();
      for (std::size_t k = 0; k < a.size(); ++k) {
        nlohmann::ordered_json term;
        term["attribute"] = a[k];
        term["name"] = d.attribute(static_cast<std::size_t>(a[k])).name;
        term["coef"] = k + 1 < c.size() ? c[k + 1] : 0.0;
        terms.push_back(term);
      }
      j["terms"] = terms;
      return j;
    }
    j["attribute"] = n.attr;
    j["name"] = d.attribute(static_cast<std::size_t>(n.attr)).name;
    j["threshold"] = n.threshold;
    j["left"] = rec(n.left);
    j["right"] = rec(n.left + 1);
    return j;
  };
  return rec(0);
}

namespace {

// An attribute index of a model file, checked before it is narrowed to an int.
int attribute_of(const nlohmann::json& v, int cols, const std::string& what) {
  return static_cast<int>(json_int_in(v, 0, cols - 1, what));
}

Tree node_from_json(const nlohmann::json& j, int cols, const std::string& where, int depth) {
  // The recursive writers (text, JSON) need a bounded depth.
  GPUDM_REQUIRE(depth < kMaxModelLevels, where + ": model tree deeper than " + std::to_string(kMaxModelLevels) + " levels");
  GPUDM_REQUIRE(j.is_object(), where + ": tree node is not an object");
  const auto leaf = j.find("leaf");
  if (leaf != j.end() && leaf->is_boolean() && leaf->get<bool>()) {
    GPUDM_REQUIRE(j.contains("intercept") && j["intercept"].is_number(), where + ": leaf without a numeric 'intercept'");
    std::vector<int> attrs;
    std::vector<double> coef{j["intercept"].get<double>()};
    if (j.contains("terms")) {
      GPUDM_REQUIRE(j["terms"].is_array(), where + ": leaf 'terms' is not an array");
      for (const auto& t : j["terms"]) {
        GPUDM_REQUIRE(t.is_object() && t.contains("attribute") && t.contains("coef") && t["coef"].is_number(),
                      where + ": a leaf term needs 'attribute' and a numeric 'coef'");
        attrs.push_back(attribute_of(t["attribute"], cols, where + ": leaf term attribute"));
        coef.push_back(t["coef"].get<double>());
      }
    }
    Tree t = Tree::leaf(attrs);
    t.set_fit(0, attrs, coef, -1);
    return t;
  }
  GPUDM_REQUIRE(j.contains("attribute") && j.contains("threshold") && j.contains("left") && j.contains("right"),
                where + ": internal node needs attribute, threshold, left and right");
  const int attr = attribute_of(j["attribute"], cols, where + ": test attribute");
  GPUDM_REQUIRE(j["threshold"].is_number() && std::isfinite(j["threshold"].get<double>()) &&
                    std::fabs(j["threshold"].get<double>()) <= std::numeric_limits<float>::max(),
                where + ": threshold " + j["threshold"].dump() + " is not a finite float");
  const Tree l = node_from_json(j["left"], cols, where, depth + 1);
  const Tree r = node_from_json(j["right"], cols, where, depth + 1);
  return Tree::join(attr, j["threshold"].get<float>(), l, r);
}

}  // namespace

Tree from_json(const nlohmann::json& j, int cols, const std::string& where) { return node_from_json(j, cols, where, 0); }

}  // namespace gmt
}  // namespace gpudm
