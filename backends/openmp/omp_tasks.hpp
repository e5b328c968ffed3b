#pragma once
// The OpenMP TaskRunner (algorithms/core/task_runner.hpp): tasks over workers(n) OpenMP threads,
// dynamic (chunks handed out as threads free up) or fixed (static) schedule. A task's exception
// is caught inside the parallel region (it must not leave it) and rethrown after it.
#include <omp.h>

#include <exception>

#include "algorithms/core/task_runner.hpp"

namespace gpudm::backend::openmp {

class OmpTasks final : public TaskRunner {
 public:
  // 0: the OpenMP default (omp_get_max_threads(): OMP_NUM_THREADS or the cores)
  void set_threads(int threads) override { threads_ = threads > 0 ? threads : omp_get_max_threads(); }
  int threads() const override { return threads_; }
  void run_indexed(std::size_t n, const IndexedTask& task, TaskSchedule schedule = {}) const override {
    if (n == 0) return;
    if (n == 1) return task(0, 0);
    const long long tasks = static_cast<long long>(n);
    const int used = workers(n);
    std::exception_ptr error;
    long long error_at = tasks;
    auto one = [&](long long i) {
      try {
        task(static_cast<std::size_t>(i), omp_get_thread_num());
      } catch (...) {
#pragma omp critical(gpudm_omp_tasks_error)
        if (i < error_at) {
          error_at = i;
          error = std::current_exception();
        }
      }
    };
    if (schedule.kind == TaskSchedule::Kind::fixed) {
#pragma omp parallel for schedule(static) num_threads(used)
      for (long long i = 0; i < tasks; ++i) one(i);
    } else {
      const int chunk = schedule.chunk > 0 ? schedule.chunk : 1;
#pragma omp parallel for schedule(dynamic, chunk) num_threads(used)
      for (long long i = 0; i < tasks; ++i) one(i);
    }
    if (error) std::rethrow_exception(error);
  }

 private:
  int threads_ = omp_get_max_threads();
};

}  // namespace gpudm::backend::openmp
