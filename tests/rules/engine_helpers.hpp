#pragma once
// Test helpers of the rule engine: random classification datasets (numeric and nominal
// attributes, missing values, +-inf, -0, ties; fp16-exact or not) and random rule populations
// in the token encoding (every opcode, empty antecedents, right-deep chains whose stacks cross
// the CUDA fast path's limits).
#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "algorithms/core/backend.hpp"
#include "algorithms/core/dataset.hpp"
#include "algorithms/core/registry.hpp"
#include "algorithms/core/rng.hpp"
#include "algorithms/rules/evaluator.hpp"
#include "algorithms/rules/opcodes.hpp"

namespace gpudm {
void register_rules(Registry& r);
}  // namespace gpudm

namespace gpudm::rules::test {

// rows x cols, every third attribute nominal (4 values), `classes` classes. Numeric values are
// halves in [-5, 5] (exact in fp16) plus, when !half_exact, a small offset that fp16 cannot hold.
inline Dataset random_dataset(std::size_t rows, std::size_t cols, int classes, std::uint64_t seed, double missing,
                              bool half_exact) {
  std::vector<Attribute> attrs(cols);
  for (std::size_t c = 0; c < cols; ++c) {
    attrs[c].name = "a" + std::to_string(c);
    if (c % 3 == 2) {
      attrs[c].kind = AttributeKind::nominal;
      attrs[c].values = {"p", "q", "r", "s"};
    }
  }
  std::vector<std::string> names;
  for (int k = 0; k < classes; ++k) names.push_back("c" + std::to_string(k));
  Dataset d("random", Task::classification, rows, attrs, names);
  Rng rng(seed);
  for (std::size_t c = 0; c < cols; ++c)
    for (std::size_t r = 0; r < rows; ++r) {
      if (missing > 0 && rng.bernoulli(missing)) {
        d.set_missing(r, c);
        continue;
      }
      if (attrs[c].is_nominal()) {
        d.at(r, c) = static_cast<float>(rng.below(4));
      } else {
        const double u = rng.uniform();
        if (u < 0.005) d.at(r, c) = INFINITY;
        else if (u < 0.01) d.at(r, c) = -INFINITY;
        else if (u < 0.02) d.at(r, c) = -0.0f;
        else d.at(r, c) = static_cast<float>(rng.below(21)) * 0.5f - 5.0f + (half_exact ? 0.0f : 0.001f * static_cast<float>(rng.below(7)));
      }
    }
  for (std::size_t r = 0; r < rows; ++r) d.set_label(r, static_cast<int>(rng.below(static_cast<std::uint64_t>(classes))));
  d.source = "generator";
  d.path = "test";
  return d;
}

namespace detail {
inline float threshold(Rng& rng) {
  const double u = rng.uniform();
  if (u < 0.03) return INFINITY;
  if (u < 0.06) return -INFINITY;
  if (u < 0.25) return static_cast<float>(rng.below(23)) * 0.37f - 4.1f;  // not exact in fp16
  return static_cast<float>(rng.below(23)) * 0.5f - 5.5f;               // ties with the data
}
inline void comparison(Rng& rng, const Dataset& d, std::vector<std::uint32_t>& out) {
  const std::uint32_t a = static_cast<std::uint32_t>(rng.below(d.cols()));
  if (d.attribute(a).is_nominal()) {
    out.push_back(make_word(rng.bernoulli(0.5) ? kEq : kNe, a));
    out.push_back(float_as_word(static_cast<float>(rng.below(5))));  // 4: a value no row holds
    return;
  }
  static const std::uint32_t ops[] = {kGt, kGe, kLt, kLe, kIn, kOut};
  const std::uint32_t op = ops[rng.below(6)];
  out.push_back(make_word(op, a));
  float lo = threshold(rng), hi = threshold(rng);
  if (lo > hi) std::swap(lo, hi);
  out.push_back(float_as_word(lo));
  if (operand_count(op) == 2) out.push_back(float_as_word(hi));
}
inline void expression(Rng& rng, const Dataset& d, int depth, std::vector<std::uint32_t>& out) {
  const double u = rng.uniform();
  if (depth <= 0 || u < 0.3) return comparison(rng, d, out);
  if (u < 0.45) {
    expression(rng, d, depth - 1, out);
    out.push_back(make_word(kNot));
    return;
  }
  expression(rng, d, depth - 1, out);
  expression(rng, d, depth - 1, out);
  out.push_back(make_word(rng.bernoulli(0.5) ? kAnd : kOr));
}
}  // namespace detail

// `n` random rules of depth <= max_depth; rule 0 is the empty antecedent; with deep_stack > 0,
// rule 1 is a right-deep chain of that stack depth (14: beyond the packed f16x2 layout, which
// then runs f32; 33: beyond the fast path's 32-bit stack, which then runs the faithful path).
inline RulePopulation random_population(const Dataset& d, std::size_t n, int max_depth, std::uint64_t seed, int deep_stack = 0) {
  Rng rng(seed);
  RulePopulation p;
  for (std::size_t i = 0; i < n; ++i) {
    std::vector<std::uint32_t> t;
    if (i == 0) {
      p.add(t);
      continue;
    }
    if (deep_stack > 0 && i == 1) {
      const int k = deep_stack;
      for (int j = 0; j < k; ++j) detail::comparison(rng, d, t);
      for (int j = 1; j < k; ++j) t.push_back(make_word(rng.bernoulli(0.8) ? kOr : kAnd));
      p.add(t);
      continue;
    }
    detail::expression(rng, d, max_depth, t);
    p.add(t);
  }
  return p;
}

// The engine configurations a backend is tested with: host backends their thread counts, the
// device backend every path x feature layout x rows per thread, and the device split on one GPU.
inline std::vector<EngineOptions> configurations(const Capabilities& caps) {
  std::vector<EngineOptions> out;
  if (caps.host()) {
    for (int t : caps.threads ? std::vector<int>{1, 3} : std::vector<int>{0}) {
      EngineOptions o;
      o.threads = t;
      out.push_back(o);
    }
    return out;
  }
  EngineOptions faithful;
  faithful.path = Path::faithful;
  out.push_back(faithful);
  for (Features f : {Features::automatic, Features::f32})
    for (int r : {0, 1, 2, 4}) {
      EngineOptions o;
      o.features = f;
      o.rows_per_thread = r;
      out.push_back(o);
    }
  // The multi-device split with both slices on device 0 (the two-GPU code path on one GPU), on
  // both paths; a third slice on the other path's layout.
  for (const auto& ids : {std::vector<int>{0, 0}, std::vector<int>{0, 0, 0}}) {
    EngineOptions o;
    o.device_ids = ids;
    if (ids.size() == 3) o.features = Features::f32;
    out.push_back(o);
    o.path = Path::faithful;
    out.push_back(o);
  }
  return out;
}

inline std::string describe(const EngineOptions& o) {
  return std::string("path ") + to_string(o.path) + " features " + to_string(o.features) + " rows_per_thread " +
         std::to_string(o.rows_per_thread) + " threads " + std::to_string(o.threads) + " slices " +
         std::to_string(o.device_ids.empty() ? o.devices : static_cast<int>(o.device_ids.size()));
}

inline Registry engine_registry() {
  Registry r;
  register_rules(r);
  return r;
}

}  // namespace gpudm::rules::test
