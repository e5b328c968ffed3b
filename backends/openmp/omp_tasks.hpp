#pragma once
// The OpenMP TaskRunner (algorithms/core/task_runner.hpp): tasks over `threads()` OpenMP threads,
// dynamic (chunks handed out as threads free up) or fixed (static) schedule.
#include <omp.h>

#include "algorithms/core/task_runner.hpp"

namespace gpudm::backend::openmp {

class OmpTasks final : public TaskRunner {
 public:
  // 0: the OpenMP default (omp_get_max_threads(): OMP_NUM_THREADS or the cores)
  void set_threads(int threads) { threads_ = threads > 0 ? threads : omp_get_max_threads(); }
  int threads() const override { return threads_; }
  void run(std::size_t n, const std::function<void(std::size_t)>& task, TaskSchedule schedule = {}) const override {
    if (n == 1) return task(0);
    const long long tasks = static_cast<long long>(n);
    if (schedule.kind == TaskSchedule::Kind::fixed) {
#pragma omp parallel for schedule(static) num_threads(threads_)
      for (long long i = 0; i < tasks; ++i) task(static_cast<std::size_t>(i));
    } else {
      const int chunk = schedule.chunk > 0 ? schedule.chunk : 1;
#pragma omp parallel for schedule(dynamic, chunk) num_threads(threads_)
      for (long long i = 0; i < tasks; ++i) task(static_cast<std::size_t>(i));
    }
  }

 private:
  int threads_ = omp_get_max_threads();
};

}  // namespace gpudm::backend::openmp
