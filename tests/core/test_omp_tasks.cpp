// The OpenMP TaskRunner: every task once, fixed shares as OpenMP's static schedule, worker ids
// below workers(n), the lowest failing task's exception, and one team size whatever n (libgomp
// ends the threads a smaller team leaves out and creates them again for a larger one).
#include <gtest/gtest.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <mutex>
#include <set>
#include <stdexcept>
#include <vector>

#include "backends/openmp/omp_tasks.hpp"

using gpudm::TaskSchedule;
using gpudm::backend::openmp::OmpTasks;

TEST(OmpTasks, RunsEveryTaskOnceWithWorkersBelowWorkersN) {
  OmpTasks t;
  t.set_threads(4);
  for (std::size_t n : {2u, 3u, 4u, 7u, 100u}) {
    for (auto kind : {TaskSchedule::Kind::dynamic, TaskSchedule::Kind::fixed}) {
      std::vector<int> hits(n, 0), by(n, -1);
      t.run_indexed(n, [&](std::size_t i, int w) { ++hits[i]; by[i] = w; }, {kind, 3});
      for (std::size_t i = 0; i < n; ++i) {
        EXPECT_EQ(hits[i], 1) << n << " " << i;
        EXPECT_GE(by[i], 0);
        EXPECT_LT(by[i], t.workers(n)) << n;
      }
    }
  }
}

TEST(OmpTasks, FixedSharesAreOpenMPStaticBlocks) {
  OmpTasks t;
  t.set_threads(3);
  std::vector<int> by(10, -1);
  t.run_indexed(10, [&](std::size_t i, int w) { by[i] = w; }, {TaskSchedule::Kind::fixed, 1});
  // 10 over 3: 4, 3, 3 contiguous
  EXPECT_EQ(by, (std::vector<int>{0, 0, 0, 0, 1, 1, 1, 2, 2, 2}));
}

TEST(OmpTasks, RethrowsTheLowestFailingTask) {
  OmpTasks t;
  t.set_threads(4);
  try {
    t.run(50, [](std::size_t i) {
      if (i == 7 || i == 31) throw std::runtime_error("task " + std::to_string(i));
    });
    FAIL() << "no exception";
  } catch (const std::runtime_error& e) {
    EXPECT_STREQ(e.what(), "task 7");
  }
}

TEST(OmpTasks, ManyTaskRunsAndFewTaskRunsShareOneSetOfThreads) {
  OmpTasks t;
  t.set_threads(4);
  std::mutex m;
  std::set<long> ids;
  auto note = [&](std::size_t) {
    const long id = syscall(SYS_gettid);
    std::lock_guard<std::mutex> g(m);
    ids.insert(id);
  };
  for (int k = 0; k < 50; ++k) {
    t.run(64, note);  // 4 workers
    t.run(2, note);   // 2 workers: with a team of 2 libgomp ended two threads here
  }
  EXPECT_LE(ids.size(), 4u) << "threads were created again between runs";
}

TEST(OmpTasks, NestedInsideAParallelRegionRunsEveryTask) {
  OmpTasks t;
  t.set_threads(4);
  std::vector<int> hits(2 * 40, 0);
#pragma omp parallel num_threads(2)
  {
    const std::size_t base = static_cast<std::size_t>(omp_get_thread_num()) * 40;
    t.run_indexed(40, [&](std::size_t i, int) { ++hits[base + i]; }, {TaskSchedule::Kind::fixed, 1});
  }
  for (int h : hits) EXPECT_EQ(h, 1);
}
