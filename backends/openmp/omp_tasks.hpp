#pragma once
// The OpenMP TaskRunner (algorithms/core/task_runner.hpp): tasks over workers(n) OpenMP threads,
// dynamic (chunks handed out as threads free up) or fixed (equal contiguous shares, as OpenMP's
// static schedule) schedule. A task's exception is caught inside the parallel region (it must
// not leave it) and rethrown after it.
//
// Every parallel region has the same team size, threads(), whatever n: libgomp ends the pool
// threads a smaller team leaves out and creates them again for the next larger team, so regions
// alternating between min(threads, n) sizes (an engine's rule counting over many tasks, then its
// per-individual pass over fewer) paid a thread creation per surplus thread per region (tests
// OmpTasks.*; results/h200 pitt_table3 at 10 individuals on 12 and 16 threads). Threads past
// workers(n) take no task.
#include <omp.h>

#include <algorithm>
#include <atomic>
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
    auto one = [&](long long i, int worker) {
      try {
        task(static_cast<std::size_t>(i), worker);
      } catch (...) {
#pragma omp critical(gpudm_omp_tasks_error)
        if (i < error_at) {
          error_at = i;
          error = std::current_exception();
        }
      }
    };
    const bool fixed = schedule.kind == TaskSchedule::Kind::fixed;
    const long long chunk = schedule.chunk > 0 ? schedule.chunk : 1;
    std::atomic<long long> next{0};
#pragma omp parallel num_threads(threads_)
    {
      // (a team may be smaller than asked for: nested inside another region, or a thread limit)
      const int team = std::min(used, omp_get_num_threads());
      const int w = omp_get_thread_num();
      if (w < team) {
        if (fixed) {  // OpenMP static without a chunk: the first tasks % team workers take one more
          const long long q = tasks / team, r = tasks % team;
          const long long i0 = w * q + (w < r ? w : r), i1 = i0 + q + (w < r ? 1 : 0);
          for (long long i = i0; i < i1; ++i) one(i, w);
        } else {
          for (long long i0; (i0 = next.fetch_add(chunk, std::memory_order_relaxed)) < tasks;)
            for (long long i = i0; i < i0 + chunk && i < tasks; ++i) one(i, w);
        }
      }
    }
    if (error) std::rethrow_exception(error);
  }

 private:
  int threads_ = omp_get_max_threads();
};

}  // namespace gpudm::backend::openmp
