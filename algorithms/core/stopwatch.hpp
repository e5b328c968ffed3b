#pragma once
#include <chrono>

namespace gpudm {

// Host wall clock (steady_clock). GPU work must be synchronised before reading it.
class Stopwatch {
 public:
  using clock = std::chrono::steady_clock;
  Stopwatch() : start_(clock::now()) {}
  void reset() { start_ = clock::now(); }
  double seconds() const { return std::chrono::duration<double>(clock::now() - start_).count(); }

 private:
  clock::time_point start_;
};

}  // namespace gpudm
