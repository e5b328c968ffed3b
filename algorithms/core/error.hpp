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

// A command line or config the user must fix (exit status 2; other Errors: 1).
class UsageError : public Error {
 public:
  explicit UsageError(const std::string& message) : Error(message) {}
};

// Thrown when a backend cannot run here (no GPU, not compiled, out of device memory):
// the runner records the run as "skipped" with this reason instead of failing the sweep.
class Unavailable : public Error {
 public:
  explicit Unavailable(const std::string& message) : Error(message) {}
};

// A case cannot run because a file another case of the sweep writes (a recorded sample) is not
// there. The runner, on --resume, runs the kept run that wrote it (its record's "outputs") again
// and then this case.
class MissingInput : public Unavailable {
 public:
  MissingInput(const std::string& message, std::string path) : Unavailable(message), path_(std::move(path)) {}
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

// Runs `parse` (a command-line parser): a gpudm::Error it throws becomes a UsageError (exit 2).
template <class F>
auto usage_errors(F&& parse) -> decltype(parse()) {
  try {
    return parse();
  } catch (const UsageError&) {
    throw;
  } catch (const Error& e) {
    throw UsageError(e.what());
  }
}

// How every mode of the tool reports an error that ends it: "run_experiment: error: <what() on
// one line>" ("out of host memory" for std::bad_alloc), and the exit status: 2 for a UsageError,
// 1 for any other. One wording and one status per cause, whichever mode met it.
std::string cli_error_line(const std::exception& e);
int cli_exit_status(const std::exception& e);
// Prints cli_error_line to stderr and returns cli_exit_status.
int report_cli_error(const std::exception& e);

}  // namespace gpudm

#define GPUDM_REQUIRE(cond, msg)                 \
  do {                                           \
    if (!(cond)) throw ::gpudm::Error(msg);      \
  } while (0)
