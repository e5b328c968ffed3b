#pragma once
// How a CPU engine runs its independent tasks: the one seam between a family's CPU engine and
// its sequential and OpenMP backends. The engine is written once against TaskRunner; the
// sequential backend hands it InlineTasks (in order, on the calling thread), the OpenMP backend
// OmpTasks (backends/openmp/omp_tasks.hpp). Tasks write disjoint state (or their worker's own
// partial results, merged in worker order), so an engine's results do not depend on the runner
// (the families' equivalence tests check it).
#include <algorithm>
#include <cstddef>
#include <functional>

namespace gpudm {

struct TaskSchedule {
  enum class Kind { dynamic, fixed };  // fixed: equal contiguous shares per worker (OpenMP static)
  Kind kind = Kind::dynamic;
  int chunk = 1;  // dynamic: tasks handed out at a time
};

class TaskRunner {
 public:
  // task(i, worker) for every i in [0, n); worker in [0, workers(n)) names the thread running it
  // (for per-worker scratch or partial results). An exception thrown by a task ends the run and
  // is rethrown to the caller (the one of the lowest task index among those that threw).
  using IndexedTask = std::function<void(std::size_t, int)>;

  virtual ~TaskRunner() = default;
  virtual int threads() const = 0;
  // The threads a backend's params ask for (0: the runner's default); inline tasks keep one.
  virtual void set_threads(int /*threads*/) {}
  virtual void run_indexed(std::size_t n, const IndexedTask& task, TaskSchedule schedule = {}) const = 0;

  // The workers a run of n tasks uses: threads(), at most n, at least 1.
  int workers(std::size_t n) const {
    return static_cast<int>(std::max<std::size_t>(1, std::min<std::size_t>(static_cast<std::size_t>(threads()), n)));
  }
  // task(i) for every i in [0, n).
  void run(std::size_t n, const std::function<void(std::size_t)>& task, TaskSchedule schedule = {}) const {
    run_indexed(n, [&](std::size_t i, int) { task(i); }, schedule);
  }
  // fn(j0, j1) over [0, n) in contiguous ranges: the whole range at once on one thread or when
  // n < min_split, else ranges_per_thread x threads ranges, fixed shares.
  void ranges(std::size_t n, std::size_t min_split, int ranges_per_thread,
              const std::function<void(std::size_t, std::size_t)>& fn) const {
    if (threads() <= 1 || n < min_split) return fn(0, n);
    const std::size_t chunks = static_cast<std::size_t>(threads()) * static_cast<std::size_t>(ranges_per_thread);
    run(
        chunks,
        [&](std::size_t c) {
          const std::size_t j0 = n * c / chunks, j1 = n * (c + 1) / chunks;
          if (j0 < j1) fn(j0, j1);
        },
        {TaskSchedule::Kind::fixed, 1});
  }
};

class InlineTasks final : public TaskRunner {
 public:
  int threads() const override { return 1; }
  void run_indexed(std::size_t n, const IndexedTask& task, TaskSchedule = {}) const override {
    for (std::size_t i = 0; i < n; ++i) task(i, 0);
  }
};

}  // namespace gpudm
