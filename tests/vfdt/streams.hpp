#pragma once
// Small in-test streams for the vfdt tests (no dataset provider needed).
#include <cmath>
#include <string>
#include <vector>

#include "algorithms/core/dataset.hpp"
#include "algorithms/core/rng.hpp"

namespace gpudm::vfdt::testing {

// "x3" for ("x", 3); appended, not "x" + std::to_string(3): GCC 12 warns falsely (-Wrestrict) on that.
inline std::string numbered(const char* prefix, int i) {
  std::string s(prefix);
  s += std::to_string(i);
  return s;
}

// Binary attributes x0..x5 with P(x3 = 1) = 0.7, others 0.5; concept:
// x5 = 1 -> class 0; x5 = 0 -> class x3. The best root split is x5 (gain 0.494 vs 0.234 for x3),
// then x3 under x5 = 0. `noise` flips labels.
inline Dataset known_tree_stream(std::size_t rows, std::uint64_t seed, double noise = 0.0) {
  std::vector<Attribute> attrs;
  for (int a = 0; a < 6; ++a) attrs.push_back({numbered("x", a), AttributeKind::numeric, {}});
  Dataset d("known_tree", Task::classification, rows, attrs, {"c0", "c1"});
  Rng rng(seed);
  for (std::size_t i = 0; i < rows; ++i) {
    int x[6];
    for (int a = 0; a < 6; ++a) x[a] = rng.bernoulli(a == 3 ? 0.7 : 0.5) ? 1 : 0;
    for (int a = 0; a < 6; ++a) d.at(i, a) = static_cast<float>(x[a]);
    int y = x[5] == 1 ? 0 : x[3];
    if (noise > 0 && rng.bernoulli(noise)) y = 1 - y;
    d.set_label(i, y);
  }
  d.source = "generator";
  d.path = "known_tree";
  d.seed = seed;
  return d;
}

// Mixed stream with drift: 4 binary, 2 nominal (3 and 4 values), 3 numeric attributes, 3 classes;
// the concept changes abruptly at `drift_at` (0 = never).
inline Dataset mixed_drift_stream(std::size_t rows, std::uint64_t seed, std::size_t drift_at, double noise = 0.1) {
  std::vector<Attribute> attrs;
  for (int a = 0; a < 4; ++a) attrs.push_back({numbered("b", a), AttributeKind::numeric, {}});
  attrs.push_back({"n0", AttributeKind::nominal, {"a", "b", "c"}});
  attrs.push_back({"n1", AttributeKind::nominal, {"p", "q", "r", "s"}});
  for (int a = 0; a < 3; ++a) attrs.push_back({numbered("u", a), AttributeKind::numeric, {}});
  Dataset d("mixed_drift", Task::classification, rows, attrs, {"k0", "k1", "k2"});
  Rng rng(seed);
  for (std::size_t i = 0; i < rows; ++i) {
    const bool after = drift_at > 0 && i >= drift_at;
    float x[9];
    for (int a = 0; a < 4; ++a) x[a] = rng.bernoulli(0.5) ? 1.0f : 0.0f;
    x[4] = static_cast<float>(rng.below_int(3));
    x[5] = static_cast<float>(rng.below_int(4));
    for (int a = 6; a < 9; ++a) x[a] = static_cast<float>(rng.uniform());
    for (int a = 0; a < 9; ++a) d.at(i, a) = x[a];
    int y;
    if (!after) y = x[0] > 0 ? (x[6] < 0.3f ? 2 : 1) : (static_cast<int>(x[4]) == 2 ? 2 : (x[1] > 0 ? 0 : 1));
    else y = x[2] > 0 ? (static_cast<int>(x[5]) % 3) : (x[7] < 0.6f ? 0 : 2);
    if (noise > 0 && rng.bernoulli(noise)) y = rng.below_int(3);
    d.set_label(i, y);
  }
  d.source = "generator";
  d.path = "mixed_drift";
  d.seed = seed;
  return d;
}

}  // namespace gpudm::vfdt::testing
