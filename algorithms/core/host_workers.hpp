#pragma once
// Persistent host threads: run(f, n) calls f(0) on the calling thread and f(1) ... f(n-1) on
// workers that live as long as the pool, then waits for all of them. Starting a std::thread per
// job per call costs tens of microseconds each (thread creation, join), which is a visible share
// of a sub-millisecond step (a multi-GPU evaluation, a GMT generation's host work). Exceptions
// thrown by f on a worker are captured and rethrown by run() (the first one, by job order).
// Plain C++17 (the CUDA translation units include it).
#include <atomic>
#include <condition_variable>
#include <stdexcept>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <exception>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace gpudm {

// A one-shot meeting point for the n jobs of one HostWorkers::run (std::barrier is C++20, and
// the CUDA translation units are compiled as C++17): arrive_and_wait() returns once all n have
// arrived. Spins with yield: every job runs on its own thread, and the wait is microseconds.
class OneShotBarrier {
 public:
  explicit OneShotBarrier(std::size_t n) : n_(n) {}
  void arrive_and_wait() {
    arrived_.fetch_add(1, std::memory_order_acq_rel);
    while (arrived_.load(std::memory_order_acquire) < n_) std::this_thread::yield();
  }

 private:
  const std::size_t n_;
  std::atomic<std::size_t> arrived_{0};
};

class HostWorkers {
 public:
  HostWorkers() = default;
  explicit HostWorkers(std::size_t workers) { start(workers); }
  HostWorkers(const HostWorkers&) = delete;
  HostWorkers& operator=(const HostWorkers&) = delete;
  ~HostWorkers() { stop(); }

  std::size_t workers() const { return threads_.size(); }

  // Runs f(0..n-1); n - 1 must not exceed workers().
  void run(const std::function<void(std::size_t)>& f, std::size_t n) {
    if (n == 0) return;
    if (n - 1 > threads_.size()) throw std::logic_error("HostWorkers::run: more jobs than workers + 1");
    errors_.assign(n, nullptr);
    {
      std::lock_guard<std::mutex> lock(m_);
      job_ = &f;
      jobs_ = n;
      pending_ = n - 1;
      ++generation_;
    }
    if (n > 1) start_cv_.notify_all();
    try {
      f(0);
    } catch (...) {
      errors_[0] = std::current_exception();
    }
    {
      std::unique_lock<std::mutex> lock(m_);
      done_cv_.wait(lock, [&] { return pending_ == 0; });
      job_ = nullptr;
    }
    for (auto& e : errors_)
      if (e) std::rethrow_exception(e);
  }

 private:
  void start(std::size_t workers) {
    for (std::size_t i = 0; i < workers; ++i) threads_.emplace_back([this, i] { loop(i + 1); });
  }
  void stop() {
    {
      std::lock_guard<std::mutex> lock(m_);
      stopping_ = true;
    }
    start_cv_.notify_all();
    for (auto& t : threads_) t.join();
    threads_.clear();
  }
  void loop(std::size_t index) {
    std::uint64_t seen = 0;
    for (;;) {
      const std::function<void(std::size_t)>* job = nullptr;
      bool mine = false;
      {
        std::unique_lock<std::mutex> lock(m_);
        start_cv_.wait(lock, [&] { return stopping_ || generation_ != seen; });
        if (stopping_) return;
        seen = generation_;
        job = job_;
        mine = index < jobs_;
      }
      if (!mine) continue;
      try {
        (*job)(index);
      } catch (...) {
        errors_[index] = std::current_exception();
      }
      bool last = false;
      {
        std::lock_guard<std::mutex> lock(m_);
        last = --pending_ == 0;
      }
      if (last) done_cv_.notify_one();
    }
  }

  std::mutex m_;
  std::condition_variable start_cv_, done_cv_;
  std::vector<std::thread> threads_;
  std::vector<std::exception_ptr> errors_;
  const std::function<void(std::size_t)>* job_ = nullptr;
  std::size_t jobs_ = 0, pending_ = 0;
  std::uint64_t generation_ = 0;
  bool stopping_ = false;
};

// Host threads asked for by the environment variable `name` (an integer in [1, 64]); `fallback`
// when it is unset or not such a number. Threads, not workers: the calling thread counts.
inline std::size_t host_threads_from_env(const char* name, std::size_t fallback) {
  if (const char* e = std::getenv(name)) {
    char* end = nullptr;
    const long v = std::strtol(e, &end, 10);
    if (end != e && *end == '\0' && v >= 1 && v <= 64) return static_cast<std::size_t>(v);
  }
  return fallback;
}

// Calls body(i) for i in [0, n) on `jobs` jobs of the pool (job j takes i = j, j + jobs, ...):
// the split is fixed, so results that depend only on i are the same for any number of jobs.
template <class Body>
void parallel_for(HostWorkers& pool, std::size_t n, const Body& body) {
  const std::size_t jobs = n < pool.workers() + 1 ? n : pool.workers() + 1;
  if (jobs <= 1) {
    for (std::size_t i = 0; i < n; ++i) body(i);
    return;
  }
  pool.run([&](std::size_t j) {
    for (std::size_t i = j; i < n; i += jobs) body(i);
  }, jobs);
}

}  // namespace gpudm
