#pragma once
// Small synthetic regression datasets for the GMT tests.
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

}  // namespace gmt_test
