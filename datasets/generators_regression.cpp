// 2dplanes, Fried, Mv (published formulas, MANIFEST.md §4) and the Armchair reconstruction.
#include <cmath>
#include <numbers>

#include "algorithms/core/rng.hpp"
#include "datasets/generator_util.hpp"
#include "datasets/generators.hpp"

namespace gpudm::datasets {
using detail::indexed;
using detail::nominal_attribute;
using detail::numeric_attribute;
namespace {

std::vector<Attribute> numeric_attributes(const std::string& prefix, int n, int first = 1) {
  std::vector<Attribute> a(static_cast<std::size_t>(n));
  for (int i = 0; i < n; ++i) a[static_cast<std::size_t>(i)].name = prefix + std::to_string(first + i);
  return a;
}

void mark_generated(Dataset& d, const std::string& generator, std::uint64_t seed) {
  d.source = "generator";
  d.path = generator;
  d.seed = seed;
}

}  // namespace

double planes2d_mean(const float* x) {
  if (x[0] > 0) return 3.0 + 3.0 * x[1] + 2.0 * x[2] + x[3];
  return -3.0 + 3.0 * x[4] + 2.0 * x[5] + x[6];
}

Dataset make_2dplanes(std::size_t rows, std::uint64_t seed, double noise_sd) {
  Dataset d("2dplanes_gen", Task::regression, rows, numeric_attributes("x", 10));
  Rng rng(seed);
  float x[10];
  for (std::size_t r = 0; r < rows; ++r) {
    x[0] = rng.below(2) ? 1.0f : -1.0f;
    for (int c = 1; c < 10; ++c) x[c] = static_cast<float>(static_cast<int>(rng.below(3)) - 1);
    for (int c = 0; c < 10; ++c) d.at(r, static_cast<std::size_t>(c)) = x[c];
    d.set_target(r, static_cast<float>(planes2d_mean(x) + noise_sd * rng.normal()));
  }
  mark_generated(d, "2dplanes", seed);
  return d;
}

double fried_mean(const float* x) {
  const double pi = std::numbers::pi;
  const double x1 = x[0], x2 = x[1], x3 = x[2], x4 = x[3], x5 = x[4];
  return 10.0 * std::sin(pi * x1 * x2) + 20.0 * (x3 - 0.5) * (x3 - 0.5) + 10.0 * x4 + 5.0 * x5;
}

Dataset make_fried(std::size_t rows, std::uint64_t seed, double noise_sd) {
  Dataset d("fried_gen", Task::regression, rows, numeric_attributes("x", 10));
  Rng rng(seed);
  float x[10];
  for (std::size_t r = 0; r < rows; ++r) {
    for (int c = 0; c < 10; ++c) {
      x[c] = static_cast<float>(rng.uniform());
      d.at(r, static_cast<std::size_t>(c)) = x[c];
    }
    d.set_target(r, static_cast<float>(fried_mean(x) + noise_sd * rng.normal()));
  }
  mark_generated(d, "fried", seed);
  return d;
}

Dataset make_mv(std::size_t rows, std::uint64_t seed) {
  std::vector<Attribute> a = numeric_attributes("x", 10);
  a[2].kind = AttributeKind::nominal;
  a[2].values = {"brown", "red", "green"};
  a[6].kind = AttributeKind::nominal;
  a[6].values = {"no", "yes"};
  a[7].kind = AttributeKind::nominal;
  a[7].values = {"normal", "large"};
  Dataset d("mv_gen", Task::regression, rows, std::move(a));
  Rng rng(seed);
  enum { brown = 0, red = 1, green = 2 };
  for (std::size_t r = 0; r < rows; ++r) {
    const double x1 = rng.uniform(-5.0, 5.0);
    const double x2 = rng.uniform(-15.0, -10.0);
    int x3;
    if (x1 > 0) x3 = green;
    else x3 = rng.bernoulli(0.4) ? red : brown;
    double x4;
    if (x3 == green) x4 = x1 + 2.0 * x2;
    else x4 = rng.bernoulli(0.3) ? x1 / 2.0 : x2 / 2.0;
    const double x5 = rng.uniform(-1.0, 1.0);
    const double x6 = x4 * rng.uniform(0.0, 5.0);
    const int x7 = rng.bernoulli(0.3) ? 1 : 0;  // yes = 1
    const int x8 = x5 < 0.5 ? 0 : 1;             // normal = 0
    const double x9 = rng.uniform(100.0, 500.0);
    const double x10 = static_cast<double>(1000 + rng.below(201));
    double y;
    if (x2 > 2) y = 35.0 - 0.5 * x4;
    else if (x4 >= -2 && x4 <= 2) y = 10.0 - 2.0 * x1;
    else if (x7 == 1) y = 3.0 - x1 / x4;
    else if (x8 == 0) y = x6 + x1;
    else y = x1 / 2.0;
    const double v[10] = {x1, x2, double(x3), x4, x5, x6, double(x7), double(x8), x9, x10};
    for (std::size_t c = 0; c < 10; ++c) d.at(r, c) = static_cast<float>(v[c]);
    d.set_target(r, static_cast<float>(y));
  }
  mark_generated(d, "mv", seed);
  return d;
}

// Regions tile [0,10)^2. The "back" spans the whole width, so the 5-leaf optimum must split
// x2 < 8 at the root; the tall arms make x1 < 8 (constant leaves) or x1 < 2 (linear leaves) the
// greedy one-level choice, which leads to 6+ leaves. Adjacent seat regions meet continuously at
// x2 = 4 (a slope change, still two planes).
const ArmchairRegion kArmchairRegions[kArmchairRegionCount] = {
    {"back", 0.0f, 10.0f, 8.0f, 10.0f, 2.0f, 0.0f, 0.5f},
    {"left_arm", 0.0f, 2.0f, 0.0f, 8.0f, 10.0f, 0.0f, -0.2f},
    {"right_arm", 8.0f, 10.0f, 0.0f, 8.0f, 9.0f, 0.0f, 0.1f},
    {"seat_front", 2.0f, 8.0f, 0.0f, 4.0f, 0.5f, 0.1f, 0.0f},
    {"seat_rear", 2.0f, 8.0f, 4.0f, 8.0f, -1.5f, 0.1f, 0.5f},
};

int armchair_region(float x1, float x2) {
  if (x2 >= 8.0f) return 0;
  if (x1 < 2.0f) return 1;
  if (x1 >= 8.0f) return 2;
  return x2 < 4.0f ? 3 : 4;
}

double armchair_mean(float x1, float x2) {
  const ArmchairRegion& g = kArmchairRegions[armchair_region(x1, x2)];
  return double(g.c0) + double(g.c1) * x1 + double(g.c2) * x2;
}

Dataset make_armchair(std::size_t rows, std::uint64_t seed, int noise_attributes, double noise_sd) {
  std::vector<Attribute> a = numeric_attributes("x", 2);
  for (int i = 0; i < noise_attributes; ++i) a.push_back(numeric_attribute(indexed("noise", i + 1)));
  Dataset d("armchair", Task::regression, rows, std::move(a));
  Rng rng(seed);
  for (std::size_t r = 0; r < rows; ++r) {
    const float x1 = static_cast<float>(rng.uniform(0.0, 10.0));
    const float x2 = static_cast<float>(rng.uniform(0.0, 10.0));
    d.at(r, 0) = x1;
    d.at(r, 1) = x2;
    d.set_target(r, static_cast<float>(armchair_mean(x1, x2) + noise_sd * rng.normal()));
  }
  // Noise columns from their own streams so adding them leaves x1, x2, y unchanged.
  for (int i = 0; i < noise_attributes; ++i) {
    Rng nr = rng.split(static_cast<std::uint64_t>(i));
    float* col = d.column(static_cast<std::size_t>(2 + i));
    for (std::size_t r = 0; r < rows; ++r) col[r] = static_cast<float>(nr.uniform(0.0, 10.0));
  }
  mark_generated(d, "armchair", seed);
  return d;
}

nlohmann::ordered_json armchair_definition() {
  nlohmann::ordered_json regions = nlohmann::ordered_json::array();
  for (const auto& g : kArmchairRegions)
    regions.push_back({{"name", g.name},
                       {"x1", {g.x1_lo, g.x1_hi}},
                       {"x2", {g.x2_lo, g.x2_hi}},
                       {"y", {{"c0", g.c0}, {"c1", g.c1}, {"c2", g.c2}}}});
  return regions;
}

}  // namespace gpudm::datasets
