#pragma once
// Seeded, splittable RNG. xoshiro256** seeded through splitmix64; split(k) derives an
// independent stream from (seed, k) so that per-individual / per-thread streams do not
// depend on thread count or scheduling order.
#include <cmath>
#include <cstdint>
#include <limits>

#include "algorithms/core/splitmix.hpp"

namespace gpudm {

class Rng {
 public:
  using result_type = std::uint64_t;
  explicit Rng(std::uint64_t seed = 0x6770756Dull) : seed_(seed) {
    std::uint64_t st = seed;
    for (auto& w : s_) w = splitmix64(st);
  }
  static constexpr result_type min() { return 0; }
  static constexpr result_type max() { return std::numeric_limits<result_type>::max(); }

  std::uint64_t seed() const { return seed_; }

  // An independent stream for sub-task k (individual, tree, thread block, ...).
  Rng split(std::uint64_t k) const {
    std::uint64_t st = seed_ ^ (0xD1B54A32D192ED03ull * (k + 1));
    std::uint64_t derived = splitmix64(st);
    derived ^= splitmix64(st);
    return Rng(derived);
  }

  result_type operator()() { return next(); }

  std::uint64_t next() {
    const std::uint64_t result = rotl(s_[1] * 5, 7) * 9;
    const std::uint64_t t = s_[1] << 17;
    s_[2] ^= s_[0];
    s_[3] ^= s_[1];
    s_[1] ^= s_[2];
    s_[0] ^= s_[3];
    s_[2] ^= t;
    s_[3] = rotl(s_[3], 45);
    return result;
  }

  // Uniform in [0, 1) with 53 random bits.
  double uniform() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }
  double uniform(double lo, double hi) { return lo + (hi - lo) * uniform(); }
  float uniform_float() { return static_cast<float>(next() >> 40) * 0x1.0p-24f; }

  // Uniform integer in [0, n) without modulo bias (Lemire's method).
  std::uint64_t below(std::uint64_t n) {
    if (n == 0) return 0;
    unsigned __int128 m = static_cast<unsigned __int128>(next()) * n;
    auto l = static_cast<std::uint64_t>(m);
    if (l < n) {
      const std::uint64_t t = (0 - n) % n;
      while (l < t) {
        m = static_cast<unsigned __int128>(next()) * n;
        l = static_cast<std::uint64_t>(m);
      }
    }
    return static_cast<std::uint64_t>(m >> 64);
  }
  int below_int(int n) { return static_cast<int>(below(static_cast<std::uint64_t>(n))); }
  bool bernoulli(double p) { return uniform() < p; }

  // Standard normal (Marsaglia polar; no cached second value so state is explicit).
  double normal() {
    double u, v, s;
    do {
      u = 2.0 * uniform() - 1.0;
      v = 2.0 * uniform() - 1.0;
      s = u * u + v * v;
    } while (s >= 1.0 || s == 0.0);
    return u * std::sqrt(-2.0 * std::log(s) / s);
  }
  double normal(double mean, double sd) { return mean + sd * normal(); }

  // Poisson by inversion (Knuth); fine for the small lambdas online bagging uses.
  int poisson(double lambda) {
    const double limit = std::exp(-lambda);
    double p = 1.0;
    int k = 0;
    do {
      ++k;
      p *= uniform();
    } while (p > limit);
    return k - 1;
  }

 private:
  static constexpr std::uint64_t rotl(std::uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }
  std::uint64_t seed_;
  std::uint64_t s_[4];
};

}  // namespace gpudm
