#pragma once
// Bit-exact ports of two foreign random number generators, needed where a generator must
// reproduce another program's stream:
//  - JavaRandom: java.util.Random (48-bit LCG, algorithm fixed by the Java SE specification),
//    used by MOA's RandomTreeGenerator.
//  - GlibcRandom: glibc's random()/srandom() (TYPE_3 additive feedback, x[i] = x[i-3] + x[i-31]),
//    used by VFML's treedata through RandomRange/RandomSeed.
#include <cstdint>

namespace gpudm::datasets {

class JavaRandom {
 public:
  explicit JavaRandom(std::int64_t seed) { set_seed(seed); }
  void set_seed(std::int64_t seed) {
    seed_ = (static_cast<std::uint64_t>(seed) ^ kMultiplier) & kMask;
  }
  // next(bits): the top `bits` bits of the 48-bit state, as a signed 32-bit int (Java semantics).
  std::int32_t next(int bits) {
    seed_ = (seed_ * kMultiplier + kAddend) & kMask;
    return static_cast<std::int32_t>(static_cast<std::uint32_t>(seed_ >> (48 - bits)));
  }
  std::int32_t next_int() { return next(32); }
  std::int32_t next_int(std::int32_t bound) {
    // Java throws for bound <= 0; callers guarantee bound > 0.
    if ((bound & -bound) == bound)  // power of two
      return static_cast<std::int32_t>((static_cast<std::int64_t>(bound) * next(31)) >> 31);
    std::int32_t bits, val;
    do {
      bits = next(31);
      val = bits % bound;
    } while (static_cast<std::int64_t>(bits) - val + (bound - 1) > INT32_MAX);  // Java: bits - val + (bound-1) < 0 (overflow)
    return val;
  }
  double next_double() {
    const std::int64_t hi = next(26);
    const std::int64_t lo = next(27);
    return static_cast<double>((hi << 27) + lo) * 0x1.0p-53;
  }
  std::int64_t next_long() {
    const std::int64_t hi = next(32);
    const std::int64_t lo = next(32);
    return static_cast<std::int64_t>(static_cast<std::uint64_t>(hi) << 32) + lo;
  }

 private:
  static constexpr std::uint64_t kMultiplier = 0x5DEECE66Dull;
  static constexpr std::uint64_t kAddend = 0xBull;
  static constexpr std::uint64_t kMask = (1ull << 48) - 1;
  std::uint64_t seed_ = 0;
};

class GlibcRandom {
 public:
  static constexpr std::int32_t kRandMax = 2147483647;
  explicit GlibcRandom(std::uint32_t seed = 1) { seed_with(seed); }
  void seed_with(std::uint32_t seed) {
    if (seed == 0) seed = 1;
    std::int32_t r[34];
    r[0] = static_cast<std::int32_t>(seed);
    for (int i = 1; i < 31; ++i) {
      // 16807 * r[i-1] mod (2^31 - 1) by Schrage's method, as glibc's srandom_r does.
      const std::int32_t hi = r[i - 1] / 127773;
      const std::int32_t lo = r[i - 1] % 127773;
      std::int32_t word = 16807 * lo - 2836 * hi;
      if (word < 0) word += 2147483647;
      r[i] = word;
    }
    for (int i = 31; i < 34; ++i) r[i] = r[i - 31];
    for (int i = 0; i < 34; ++i) state_[i] = static_cast<std::uint32_t>(r[i]);
    pos_ = 34;
    for (int i = 34; i < 344; ++i) step();  // glibc discards the first 310 outputs
  }
  std::int32_t next() { return static_cast<std::int32_t>(step() >> 1); }

 private:
  std::uint32_t step() {
    // Ring buffer of the last 34 words: x[i] = x[i-31] + x[i-3].
    const std::uint32_t v = state_[(pos_ - 31) % 34] + state_[(pos_ - 3) % 34];
    state_[pos_ % 34] = v;
    ++pos_;
    return v;
  }
  std::uint32_t state_[34];
  std::uint64_t pos_ = 0;
};

}  // namespace gpudm::datasets
