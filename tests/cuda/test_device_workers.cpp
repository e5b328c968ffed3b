// DeviceWorkers (backends/cuda/common/device_workers.hpp): host threads only, no device needed.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <functional>
#include <memory>
#include <mutex>
#include <set>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "backends/cuda/common/device_workers.hpp"

using gpudm::backend::cuda::DeviceWorkers;

TEST(DeviceWorkers, RunsEveryIndexOnceJobZeroOnTheCaller) {
  DeviceWorkers w(3);
  for (std::size_t n = 1; n <= 4; ++n) {
    std::vector<std::atomic<int>> hits(n);
    std::vector<std::thread::id> who(n);
    w.run([&](std::size_t i) { ++hits[i]; who[i] = std::this_thread::get_id(); }, n);
    for (std::size_t i = 0; i < n; ++i) EXPECT_EQ(hits[i].load(), 1) << "n " << n << " job " << i;
    EXPECT_EQ(who[0], std::this_thread::get_id());
    std::set<std::thread::id> distinct(who.begin(), who.end());
    EXPECT_EQ(distinct.size(), n);
  }
}

TEST(DeviceWorkers, ManyRoundsAndWorkerExceptionsReachTheCaller) {
  DeviceWorkers w(1);
  std::atomic<long> sum{0};
  for (int r = 0; r < 2000; ++r) w.run([&](std::size_t i) { sum += static_cast<long>(i) + 1; }, 2);
  EXPECT_EQ(sum.load(), 2000L * 3);
  EXPECT_THROW(w.run([](std::size_t i) { if (i == 1) throw std::runtime_error("device 1 failed"); }, 2),
               std::runtime_error);
  EXPECT_THROW(w.run([](std::size_t) {}, 3), std::logic_error);  // more jobs than workers + 1
  w.run([&](std::size_t) { ++sum; }, 2);                            // still usable after a failure
  EXPECT_EQ(sum.load(), 2000L * 3 + 2);
}

TEST(OneShotBarrier, NoJobPassesBeforeAllArriveAndAFailingJobStillArrives) {
  using gpudm::backend::cuda::OneShotBarrier;
  DeviceWorkers w(3);
  for (int round = 0; round < 200; ++round) {
    OneShotBarrier met(4);
    std::atomic<int> before{0};
    std::vector<int> seen(4, -1);
    w.run([&](std::size_t i) {
      ++before;
      met.arrive_and_wait();
      seen[i] = before.load();  // every job arrived before any passed
    }, 4);
    for (int s : seen) EXPECT_EQ(s, 4);
  }
  // The pattern of the multi-GPU evaluation: a job that fails before the meeting still arrives,
  // the others see the flag and return, and run() rethrows the failure.
  OneShotBarrier met(2);
  std::atomic<bool> invalid{false};
  std::atomic<int> ran_on{0};
  EXPECT_THROW(w.run([&](std::size_t i) {
                 if (i == 1) {
                   invalid = true;
                   met.arrive_and_wait();
                   throw std::runtime_error("slice 1 is malformed");
                 }
                 met.arrive_and_wait();
                 if (!invalid) ++ran_on;
               }, 2),
               std::runtime_error);
  EXPECT_EQ(ran_on.load(), 0);
}

TEST(HostWorkers, ParallelForVisitsEveryIndexOnceForAnyPoolSize) {
  for (std::size_t workers : {0u, 1u, 3u, 7u}) {
    gpudm::HostWorkers pool(workers);
    for (std::size_t n : {0u, 1u, 2u, 5u, 64u, 1000u}) {
      std::vector<int> seen(n, 0);
      gpudm::parallel_for(pool, n, [&](std::size_t i) { ++seen[i]; });
      for (std::size_t i = 0; i < n; ++i) ASSERT_EQ(seen[i], 1) << "workers " << workers << " n " << n << " i " << i;
    }
  }
}

// run_tasks: indices claimed one at a time by the caller and whichever workers are awake; every
// index runs once, the lowest index's exception reaches the caller, rounds interleave with run() on
// the same pool, and polling workers (set_spin) change none of it.
TEST(HostWorkers, RunTasksRunsEveryIndexOnceWithOrWithoutPolling) {
  for (int spin_us : {0, 500}) {
    for (std::size_t workers : {0u, 1u, 3u}) {
      gpudm::HostWorkers pool(workers);
      pool.set_spin(std::chrono::microseconds(spin_us));
      for (int round = 0; round < 200; ++round) {
        const std::size_t n = static_cast<std::size_t>(round % 37);
        std::vector<std::atomic<int>> seen(n);
        pool.run_tasks([&](std::size_t i) { seen[i].fetch_add(1); }, n);
        for (std::size_t i = 0; i < n; ++i) ASSERT_EQ(seen[i].load(), 1) << "spin " << spin_us << " workers " << workers << " round " << round;
        if (round % 50 == 7) {
          std::atomic<int> jobs{0};
          pool.run([&](std::size_t) { jobs.fetch_add(1); }, workers + 1);
          ASSERT_EQ(jobs.load(), static_cast<int>(workers + 1));
        }
      }
      try {
        pool.run_tasks([&](std::size_t i) {
          if (i == 5 || i == 11) throw std::runtime_error("task " + std::to_string(i));
        }, 16);
        FAIL() << "no exception";
      } catch (const std::runtime_error& e) {
        EXPECT_STREQ(e.what(), "task 5");
      }
    }
  }
}

// run_tasks' max_threads (a pool sized for Elnino's large steps, a small step wakes only the
// threads its size asks for): every index once, never more threads than asked, and rounds that ask
// for few, many and all of the workers interleave on one pool, with and without polling.
TEST(HostWorkers, RunTasksTakesNoMoreThreadsThanAskedFor) {
  for (int spin_us : {0, 500}) {
    gpudm::HostWorkers pool(5);
    pool.set_spin(std::chrono::microseconds(spin_us));
    for (int round = 0; round < 300; ++round) {
      const std::size_t most = static_cast<std::size_t>(round % 7);  // 0 and 1: the caller alone
      const std::size_t n = 1 + static_cast<std::size_t>(round % 23);
      std::vector<std::atomic<int>> seen(n);
      std::mutex m;
      std::set<std::thread::id> ran;
      pool.run_tasks([&](std::size_t i) {
        seen[i].fetch_add(1);
        std::this_thread::sleep_for(std::chrono::microseconds(20));  // (long enough for woken workers to claim some)
        std::lock_guard<std::mutex> lock(m);
        ran.insert(std::this_thread::get_id());
      }, n, most);
      for (std::size_t i = 0; i < n; ++i) ASSERT_EQ(seen[i].load(), 1) << "spin " << spin_us << " round " << round;
      EXPECT_LE(ran.size(), std::max<std::size_t>(1, most)) << "spin " << spin_us << " round " << round;
    }
  }
  EXPECT_EQ(gpudm::threads_for_nodes(0), gpudm::kBaseThreads);
  EXPECT_EQ(gpudm::threads_for_nodes(31000), 15u);
}

// Calls in quick succession with polling workers (workers join a call without the mutex, and a
// caller returns without waiting for them to leave): a worker that read an earlier
// call must never claim an index of a later one. Tiny tasks, calls of 1-40 tasks back to back, with
// run() calls among them; every index of every call runs exactly once, on the call's own task. Each
// round's task is kept alive to the end, so a worker that ran an earlier round's task on a later
// round's index would be seen (its round is not the current one), not undefined behaviour.
TEST(HostWorkers, BackToBackCallsNeverRunAnIndexTwiceOrWithAnotherCallsTask) {
  constexpr int kRounds = 6000;
  {
    std::vector<std::atomic<int>> seen(64);
    std::atomic<int> current{-1}, wrong{0};
    std::vector<std::unique_ptr<std::function<void(std::size_t)>>> tasks;
    tasks.reserve(kRounds);
    gpudm::HostWorkers pool(7);  // (after what its workers' tasks read: destroyed first)
    pool.set_spin(std::chrono::microseconds(2000));
    for (int round = 0; round < kRounds; ++round) {
      const std::size_t n = 1 + static_cast<std::size_t>((round * 7919) % 40);
      for (std::size_t i = 0; i < n; ++i) seen[i].store(0, std::memory_order_relaxed);
      current.store(round);
      tasks.push_back(std::make_unique<std::function<void(std::size_t)>>([&, round](std::size_t i) {
        if (current.load() != round) wrong.fetch_add(1);
        seen[i].fetch_add(1, std::memory_order_relaxed);
      }));
      pool.run_tasks(*tasks.back(), n, 1 + static_cast<std::size_t>(round % 9));
      for (std::size_t i = 0; i < n; ++i) ASSERT_EQ(seen[i].load(), 1) << "round " << round << " index " << i;
      ASSERT_EQ(wrong.load(), 0) << "round " << round;
      if (round % 97 == 3) {
        std::atomic<int> jobs{0};
        pool.run([&](std::size_t) { jobs.fetch_add(1); }, 8);
        ASSERT_EQ(jobs.load(), 8);
      }
    }
  }
}

// A pool started from a thread that OpenMP bound to one place (OMP_PROC_BIND set) must not leave
// its workers on that one CPU (the GMT host steps ran 4-8x slower on the GPU machine).
TEST(HostWorkers, WorkersAreNotLeftOnTheCallersOpenmpPlace) {
#if defined(__linux__)
  cpu_set_t before;
  ASSERT_EQ(sched_getaffinity(0, sizeof(before), &before), 0);
  if (CPU_COUNT(&before) < 2) GTEST_SKIP() << "one CPU available";
  int first = 0;
  while (!CPU_ISSET(first, &before)) ++first;
  cpu_set_t one;
  CPU_ZERO(&one);
  CPU_SET(first, &one);
  ASSERT_EQ(sched_setaffinity(0, sizeof(one), &one), 0);  // what libgomp does to the first thread
  const char* old = std::getenv("OMP_PROC_BIND");
  const std::string saved = old ? old : "";
  setenv("OMP_PROC_BIND", "spread", 1);
  int worker_cpus = 0;
  {
    gpudm::HostWorkers pool(1);
    pool.run([&](std::size_t j) {
      if (j != 1) return;
      cpu_set_t s;
      sched_getaffinity(0, sizeof(s), &s);
      worker_cpus = CPU_COUNT(&s);
    }, 2);
  }
  if (old) setenv("OMP_PROC_BIND", saved.c_str(), 1);
  else unsetenv("OMP_PROC_BIND");
  sched_setaffinity(0, sizeof(before), &before);
  EXPECT_GE(worker_cpus, CPU_COUNT(&before));  // (at least the CPUs the test had; the cpuset may allow more)
#else
  GTEST_SKIP() << "Linux only";
#endif
}

// The pool's default size: min(most, hardware threads), never 0.
TEST(HostWorkers, DefaultHostThreadsIsAtMostTheCapAndAtLeastOne) {
  const unsigned hw = std::max(1u, std::thread::hardware_concurrency());
  EXPECT_EQ(gpudm::default_host_threads(1), 1u);
  EXPECT_EQ(gpudm::default_host_threads(16), std::min(16u, hw));
}
