#pragma once
// Small synthetic regression datasets, populations of compact trees and tree checks for the GMT
// tests (shared by the CPU tests and test_cuda.cpp).
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "algorithms/core/dataset.hpp"
#include "algorithms/core/family.hpp"
#include "algorithms/core/registry.hpp"
#include "algorithms/core/rng.hpp"
#include "algorithms/gmt/evaluator.hpp"
#include "algorithms/gmt/tree.hpp"

namespace gpudm {
void register_gmt(Registry&);
}

namespace gmt_test {

inline gpudm::Dataset make_dataset(std::size_t rows, std::size_t cols, std::uint64_t seed,
                                   double (*f)(const std::vector<double>&), double noise = 0.0) {
  std::vector<gpudm::Attribute> attrs(cols);
  for (std::size_t c = 0; c < cols; ++c) {
    char name[32];  // not "x" + std::to_string(...): GCC 12's -Wrestrict misfires on that once inlined
    std::snprintf(name, sizeof(name), "x%zu", c + 1);
    attrs[c].name = name;
  }
  gpudm::Dataset d("synthetic", gpudm::Task::regression, rows, attrs);
  gpudm::Rng rng(seed);
  std::vector<double> x(cols);
  for (std::size_t r = 0; r < rows; ++r) {
    for (std::size_t c = 0; c < cols; ++c) {
      x[c] = static_cast<float>(rng.uniform(0.0, 10.0));
      d.at(r, c) = static_cast<float>(x[c]);
    }
    d.set_target(r, static_cast<float>(f(x) + noise * rng.normal()));
  }
  d.source = "generator";
  d.path = "gmt_test";
  return d;
}

// The three-region piecewise-linear target used by the recovery tests (optimum: 3 leaves).
inline double piecewise(const std::vector<double>& x) {
  if (x[0] <= 3.0) return 2.0 * x[0] + 1.0;
  if (x[1] <= 5.0) return 10.0 - x[1];
  return 0.5 * x[0] + 0.3 * x[1];
}

// Serves make_dataset(rows, 3, 9, piecewise, 0.1) under any name (family tests).
struct PiecewiseProvider : gpudm::DatasetProvider {
  explicit PiecewiseProvider(std::size_t rows) : rows_(rows) {}
  std::shared_ptr<const gpudm::Dataset> get(const std::string& name, const nlohmann::json&) override {
    auto d = std::make_shared<gpudm::Dataset>(make_dataset(rows_, 3, 9, piecewise, 0.1));
    d->set_name(name);
    return d;
  }
  std::size_t rows_;
};

inline gpudm::Registry& registry() {
  static gpudm::Registry r = [] {
    gpudm::Registry reg;
    gpudm::register_gmt(reg);
    return reg;
  }();
  return r;
}

// The available host backends (bit-identical to each other; the CUDA backend agrees within a
// tolerance and has its own tests: test_cuda.cpp, test_reference.cpp).
inline std::vector<std::string> cpu_backends() {
  std::vector<std::string> out;
  for (const auto& b : registry().backends("gmt"))
    if (b.available && registry().create<gpudm::gmt::ModelTreeEvaluator>("gmt", b.backend)->capabilities().host())
      out.push_back(b.backend);
  return out;
}

// ---- populations of compact trees ------------------------------------------------------------

// A batch over `trees` (evaluated in place), salts first_salt, first_salt + 1, ...
inline gpudm::gmt::EvalBatch batch_of(std::vector<gpudm::gmt::Tree>& trees, std::uint64_t first_salt,
                                      gpudm::gmt::RepairSpec repair = {}) {
  gpudm::gmt::EvalBatch b;
  for (std::size_t k = 0; k < trees.size(); ++k) {
    b.trees.push_back(&trees[k]);
    b.salts.push_back(first_salt + k);
  }
  b.repair = repair;
  return b;
}

// Gives every leaf of `t` hand-made coefficients and marks it clean (the leaf keeps its model at
// the next evaluation): intercept 0.5 - l, then 0.5 (k + 1) per model attribute (l: leaf number
// in breadth-first order).
inline void make_clean(gpudm::gmt::Tree& t) {
  int l = 0;
  for (int i = 0; i < t.size(); ++i) {
    if (!t.node(i).is_leaf()) continue;
    const auto a = t.attrs(i);
    std::vector<int> attrs(a.begin(), a.end());
    std::vector<double> coef{0.5 - l};
    for (std::size_t k = 0; k < attrs.size(); ++k) coef.push_back(0.5 * double(k + 1));
    t.set_fit(i, attrs, coef, -1);
    ++l;
  }
}

// ---- tree checks ---------------------------------------------------------------------------

// "" when `t` keeps the compact layout's invariants (tree.hpp): breadth-first, the children of the
// k-th internal node at 1 + 2k and 2 + 2k, parent and depth right, leaves without children, models
// inside the pools with ascending attributes in [0, cols); otherwise what is wrong.
inline std::string layout_error(const gpudm::gmt::Tree& t, int cols) {
  using gpudm::gmt::TreeNode;
  auto at = [](int i) { return "node " + std::to_string(i) + ": "; };
  if (t.size() < 1) return "no nodes";
  if (t.node(0).parent != -1 || t.node(0).depth != 0) return "root parent/depth";
  int internal_before = 0;
  for (int i = 0; i < t.size(); ++i) {
    const TreeNode& n = t.node(i);
    if (n.is_leaf()) {
      if (n.attr != gpudm::gmt::kLeafNode) return at(i) + "leaf attr " + std::to_string(n.attr);
      if (n.left != -1) return at(i) + "leaf with a child";
      if (n.m_off < 0 || n.m_len < 0 || std::size_t(n.m_off) + std::size_t(n.m_len) > t.attr_pool().size())
        return at(i) + "model outside the attribute pool";
      const auto a = t.attrs(i);
      for (std::size_t k = 0; k < a.size(); ++k)
        if (a[k] < 0 || a[k] >= cols || (k > 0 && a[k - 1] >= a[k])) return at(i) + "model attributes out of range or order";
      if (n.has_coef) {
        if (n.c_off < 0 || std::size_t(n.c_off) + std::size_t(n.m_len) + 1 > t.coef_pool().size())
          return at(i) + "coefficients outside the pool";
        if (t.coef(i).size() != a.size() + 1) return at(i) + "coefficient count";
      } else if (!t.coef(i).empty()) {
        return at(i) + "coefficients without has_coef";
      }
      continue;
    }
    if (n.attr < 0 || n.attr >= cols) return at(i) + "test attribute " + std::to_string(n.attr);
    if (n.left != 1 + 2 * internal_before) return at(i) + "left " + std::to_string(n.left) + ", expected " + std::to_string(1 + 2 * internal_before);
    if (n.left + 1 >= t.size()) return at(i) + "children beyond the array";
    for (int c : {n.left, n.left + 1}) {
      if (t.node(c).parent != i) return at(c) + "parent " + std::to_string(t.node(c).parent) + ", expected " + std::to_string(i);
      if (t.node(c).depth != n.depth + 1) return at(c) + "depth";
    }
    ++internal_before;
  }
  if (t.size() != 2 * internal_before + 1) return "size " + std::to_string(t.size()) + " with " + std::to_string(internal_before) + " tests";
  return "";
}

// Rows of the training set reaching every node of `t` (ascending), by routing each row from the
// root (x <= threshold left, otherwise and NaN right).
inline std::vector<std::vector<std::size_t>> rows_per_node(const gpudm::Dataset& d, const gpudm::gmt::Tree& t) {
  std::vector<std::vector<std::size_t>> out(static_cast<std::size_t>(t.size()));
  for (std::size_t r = 0; r < d.rows(); ++r) {
    int i = 0;
    for (;;) {
      out[static_cast<std::size_t>(i)].push_back(r);
      const gpudm::gmt::TreeNode& n = t.node(i);
      if (n.is_leaf()) break;
      i = d.at(r, static_cast<std::size_t>(n.attr)) <= n.threshold ? n.left : n.left + 1;
    }
  }
  return out;
}

// Coefficient of attribute `attr` in leaf `leaf`'s model (0 when the model does not have it; the
// intercept is attr -1).
inline double coef_of(const gpudm::gmt::Tree& t, int leaf, int attr) {
  const auto c = t.coef(leaf);
  if (c.empty()) return 0.0;
  if (attr < 0) return c[0];
  const auto a = t.attrs(leaf);
  for (std::size_t k = 0; k < a.size(); ++k)
    if (a[k] == attr) return c[k + 1];
  return 0.0;
}

}  // namespace gmt_test
