#pragma once
// gpudm::Error: configuration, data and runtime errors a user can act on.
// The CLI prints what() on one line and exits non-zero.
#include <stdexcept>
#include <string>

namespace gpudm {

class Error : public std::runtime_error {
 public:
  explicit Error(const std::string& message) : std::runtime_error(message) {}
};

// Thrown when a backend cannot run here (no GPU, not compiled, out of device memory):
// the runner records the run as "skipped" with this reason instead of failing the sweep.
class Unavailable : public Error {
 public:
  explicit Unavailable(const std::string& message) : Error(message) {}
};

}  // namespace gpudm

#define GPUDM_REQUIRE(cond, msg)                 \
  do {                                           \
    if (!(cond)) throw ::gpudm::Error(msg);      \
  } while (0)
