#include "algorithms/gmt/tree.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <cstdio>
#include <functional>
#include <sstream>

#include "algorithms/core/json_limits.hpp"

namespace gpudm {
namespace gmt {

std::unique_ptr<Node> Node::clone() const {
  auto n = std::make_unique<Node>();
  n->attr = attr;
  n->threshold = threshold;
  n->model_attrs = model_attrs;
  n->coef = coef;
  n->dirty = dirty;
  n->stats = stats;
  if (left) n->left = left->clone();
  if (right) n->right = right->clone();
  return n;
}

void Node::make_leaf(std::vector<int> attrs) {
  attr = kLeafNode;
  threshold = 0.0f;
  left.reset();
  right.reset();
  model_attrs = std::move(attrs);
  coef.clear();
  dirty = true;
}

std::vector<NodeRef> collect_nodes(Node* root) {
  std::vector<NodeRef> out;
  std::function<void(Node*, Node*, int)> rec = [&](Node* n, Node* p, int d) {
    out.push_back({n, p, d});
    if (!n->is_leaf()) {
      rec(n->left.get(), n, d + 1);
      rec(n->right.get(), n, d + 1);
    }
  };
  if (root) rec(root, nullptr, 0);
  return out;
}

int count_leaves(const Node* n) { return n->is_leaf() ? 1 : count_leaves(n->left.get()) + count_leaves(n->right.get()); }
int count_internal(const Node* n) {
  return n->is_leaf() ? 0 : 1 + count_internal(n->left.get()) + count_internal(n->right.get());
}
int tree_depth(const Node* n) {
  return n->is_leaf() ? 1 : 1 + std::max(tree_depth(n->left.get()), tree_depth(n->right.get()));
}
int count_model_attributes(const Node* n) {
  return n->is_leaf() ? static_cast<int>(n->model_attrs.size())
                      : count_model_attributes(n->left.get()) + count_model_attributes(n->right.get());
}
void mark_subtree_dirty(Node* n) {
  if (n->is_leaf()) {
    n->dirty = true;
    return;
  }
  mark_subtree_dirty(n->left.get());
  mark_subtree_dirty(n->right.get());
}

void flatten(const Node* root, int cols, std::uint64_t salt, FlatTree& f) {
  const int levels = tree_depth(root);
  GPUDM_REQUIRE(levels <= 24, "gmt: tree of " + std::to_string(levels) + " levels is too deep to flatten");
  const std::size_t nn = (std::size_t{1} << levels) - 1;
  f.levels = levels;
  f.cols = cols;
  f.salt = salt;
  f.attr.assign(nn, kAbsentNode);
  f.threshold.assign(nn, 0.0f);
  f.leaf_slot.assign(nn, -1);
  f.leaf_node.clear();
  f.refit.clear();
  f.mask.clear();
  f.coef.clear();
  const std::size_t w = static_cast<std::size_t>(cols) + 1;
  std::function<void(const Node*, std::size_t)> rec = [&](const Node* n, std::size_t i) {
    if (n->is_leaf()) {
      f.attr[i] = kLeafNode;
      f.leaf_slot[i] = static_cast<std::int32_t>(f.leaf_node.size());
      f.leaf_node.push_back(static_cast<std::int32_t>(i));
      const bool refit = n->dirty || n->coef.size() != n->model_attrs.size() + 1;
      f.refit.push_back(refit ? 1 : 0);
      const std::size_t m0 = f.mask.size();
      f.mask.resize(m0 + static_cast<std::size_t>(cols), 0);
      const std::size_t c0 = f.coef.size();
      f.coef.resize(c0 + w, 0.0);
      for (std::size_t k = 0; k < n->model_attrs.size(); ++k) {
        f.mask[m0 + static_cast<std::size_t>(n->model_attrs[k])] = 1;
        if (!refit) f.coef[c0 + 1 + static_cast<std::size_t>(n->model_attrs[k])] = n->coef[k + 1];
      }
      if (!refit) f.coef[c0] = n->coef[0];
      return;
    }
    f.attr[i] = n->attr;
    f.threshold[i] = n->threshold;
    rec(n->left.get(), 2 * i + 1);
    rec(n->right.get(), 2 * i + 2);
  };
  rec(root, 0);
}

void apply_evaluation(Node* root, const FlatTree& f, const EvalOutput& ev) {
  const std::size_t w = static_cast<std::size_t>(f.cols) + 1;
  std::function<void(Node*, std::size_t)> rec = [&](Node* n, std::size_t i) {
    n->stats = ev.nodes[i];
    if (!n->is_leaf()) {
      rec(n->left.get(), 2 * i +1);
      rec(n->right.get(), 2 * i + 2);
      return;
    }
    const auto slot = static_cast<std::size_t>(f.leaf_slot[i]);
    const double* c = ev.coef.data() + slot * w;
    if (f.refit[slot]) {
      std::vector<int> kept;
      std::vector<double> coef{c[0]};
      for (int a : n->model_attrs) {
        const double v = c[1 + static_cast<std::size_t>(a)];
        if (v != 0.0) {
          kept.push_back(a);
          coef.push_back(v);
        }
      }
      n->model_attrs = std::move(kept);
      n->coef = std::move(coef);
    }
    n->dirty = false;
  };
  rec(root, 0);
}

double predict(const Node* n, const Dataset& d, std::size_t row) {
  while (!n->is_leaf()) n = d.at(row, static_cast<std::size_t>(n->attr)) <= n->threshold ? n->left.get() : n->right.get();
  double y = n->coef.empty() ? 0.0 : n->coef[0];
  for (std::size_t k = 0; k < n->model_attrs.size() && k + 1 < n->coef.size(); ++k)
    y += n->coef[k + 1] * static_cast<double>(d.at(row, static_cast<std::size_t>(n->model_attrs[k])));
  return y;
}

namespace {
int center_rec(Node* n, const Dataset& d, const std::vector<std::uint32_t>& rows) {
  if (n->is_leaf()) return 0;
  const auto a = static_cast<std::size_t>(n->attr);
  float lo = -std::numeric_limits<float>::infinity(), hi = std::numeric_limits<float>::infinity();
  std::vector<std::uint32_t> left, right;
  for (std::uint32_t r : rows) {
    const float x = d.at(r, a);
    if (x <= n->threshold) {
      left.push_back(r);
      lo = std::max(lo, x);
    } else {
      right.push_back(r);
      hi = std::min(hi, x);
    }
  }
  int moved = 0;
  if (!left.empty() && !right.empty()) {
    float m = static_cast<float>(0.5 * (static_cast<double>(lo) + static_cast<double>(hi)));
    if (!(m < hi)) m = lo;  // adjacent floats: keep every left value <= m < every right value
    if (m != n->threshold) {
      n->threshold = m;
      moved = 1;
    }
  }
  return moved + center_rec(n->left.get(), d, left) + center_rec(n->right.get(), d, right);
}
}  // namespace

int center_thresholds(Node* root, const Dataset& train) {
  std::vector<std::uint32_t> rows(train.rows());
  for (std::size_t i = 0; i < rows.size(); ++i) rows[i] = static_cast<std::uint32_t>(i);
  return root ? center_rec(root, train, rows) : 0;
}

namespace {
std::string num(double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.6g", v);
  return buf;
}
}  // namespace

std::string to_text(const Node* root, const Dataset& d) {
  std::ostringstream os;
  std::vector<const Node*> leaves;
  std::function<void(const Node*, int)> rec = [&](const Node* n, int depth) {
    auto line = [&](const char* op, const Node* child) {
      for (int i = 0; i < depth; ++i) os << "|   ";
      os << d.attribute(static_cast<std::size_t>(n->attr)).name << ' ' << op << ' ' << num(n->threshold);
      if (child->is_leaf()) {
        leaves.push_back(child);
        os << " : LM" << leaves.size() << " (" << child->stats.count << " rows, rmse "
           << num(child->stats.count ? std::sqrt(child->stats.sse / double(child->stats.count)) : 0.0) << ")\n";
      } else {
        os << '\n';
        rec(child, depth + 1);
      }
    };
    line("<=", n->left.get());
    line(">", n->right.get());
  };
  if (root->is_leaf()) {
    leaves.push_back(root);
    os << "LM1 (" << root->stats.count << " rows)\n";
  } else {
    rec(root, 0);
  }
  os << '\n';
  for (std::size_t k = 0; k < leaves.size(); ++k) {
    const Node* l = leaves[k];
    os << "LM" << (k + 1) << ": y = " << num(l->coef.empty() ? 0.0 : l->coef[0]);
    for (std::size_t j = 0; j < l->model_attrs.size() && j + 1 < l->coef.size(); ++j) {
      const double c = l->coef[j + 1];
      os << (c < 0 ? " - " : " + ") << num(std::fabs(c)) << " * "
         << d.attribute(static_cast<std::size_t>(l->model_attrs[j])).name;
    }
    os << '\n';
  }
  os << "\nleaves: " << leaves.size() << ", attributes in models: " << count_model_attributes(root) << '\n';
  return os.str();
}

nlohmann::ordered_json to_json(const Node* n, const Dataset& d) {
  nlohmann::ordered_json j;
  if (n->is_leaf()) {
    j["leaf"] = true;
    j["rows"] = n->stats.count;
    j["intercept"] = n->coef.empty() ? 0.0 : n->coef[0];
    auto terms = nlohmann::ordered_json::array();
    for (std::size_t k = 0; k < n->model_attrs.size(); ++k) {
      nlohmann::ordered_json t;
      t["attribute"] = n->model_attrs[k];
      t["name"] = d.attribute(static_cast<std::size_t>(n->model_attrs[k])).name;
      t["coef"] = k + 1 < n->coef.size() ? n->coef[k + 1] : 0.0;
      terms.push_back(t);
    }
    j["terms"] = terms;
    return j;
  }
  j["attribute"] = n->attr;
  j["name"] = d.attribute(static_cast<std::size_t>(n->attr)).name;
  j["threshold"] = n->threshold;
  j["left"] = to_json(n->left.get(), d);
  j["right"] = to_json(n->right.get(), d);
  return j;
}

namespace {

// An attribute index of a model file, checked before it is narrowed to an int.
int attribute_of(const nlohmann::json& v, int cols, const std::string& what) {
  return static_cast<int>(json_int_in(v, 0, cols - 1, what));
}

std::unique_ptr<Node> node_from_json(const nlohmann::json& j, int cols, const std::string& where, int depth) {
  // The recursive tree functions (count, flatten, predict, the destructor) need a bounded depth.
  GPUDM_REQUIRE(depth < kMaxModelLevels, where + ": model tree deeper than " + std::to_string(kMaxModelLevels) + " levels");
  GPUDM_REQUIRE(j.is_object(), where + ": tree node is not an object");
  auto n = std::make_unique<Node>();
  n->dirty = false;
  const auto leaf = j.find("leaf");
  if (leaf != j.end() && leaf->is_boolean() && leaf->get<bool>()) {
    GPUDM_REQUIRE(j.contains("intercept") && j["intercept"].is_number(), where + ": leaf without a numeric 'intercept'");
    n->coef.push_back(j["intercept"].get<double>());
    if (!j.contains("terms")) return n;
    GPUDM_REQUIRE(j["terms"].is_array(), where + ": leaf 'terms' is not an array");
    for (const auto& t : j["terms"]) {
      GPUDM_REQUIRE(t.is_object() && t.contains("attribute") && t.contains("coef") && t["coef"].is_number(),
                    where + ": a leaf term needs 'attribute' and a numeric 'coef'");
      n->model_attrs.push_back(attribute_of(t["attribute"], cols, where + ": leaf term attribute"));
      n->coef.push_back(t["coef"].get<double>());
    }
    return n;
  }
  GPUDM_REQUIRE(j.contains("attribute") && j.contains("threshold") && j.contains("left") && j.contains("right"),
                where + ": internal node needs attribute, threshold, left and right");
  n->attr = attribute_of(j["attribute"], cols, where + ": test attribute");
  GPUDM_REQUIRE(j["threshold"].is_number() && std::isfinite(j["threshold"].get<double>()) &&
                    std::fabs(j["threshold"].get<double>()) <= std::numeric_limits<float>::max(),
                where + ": threshold " + j["threshold"].dump() + " is not a finite float");
  n->threshold = j["threshold"].get<float>();
  n->left = node_from_json(j["left"], cols, where, depth + 1);
  n->right = node_from_json(j["right"], cols, where, depth + 1);
  return n;
}

}  // namespace

std::unique_ptr<Node> from_json(const nlohmann::json& j, int cols, const std::string& where) {
  return node_from_json(j, cols, where, 0);
}

}  // namespace gmt
}  // namespace gpudm
