#pragma once
// Persistent host threads for multi-GPU work: run(f, n) calls f(0) on the calling thread and
// f(1) ... f(n-1) on workers that live as long as the pool, then waits for all of them.
// Starting a std::thread per device per call cost tens of microseconds each (thread creation,
// join), which is a visible share of a sub-millisecond evaluation on two GPUs. Exceptions thrown
// by f on a worker are captured and rethrown by run() (the first one, by device order).
#include <atomic>
#include <condition_variable>
#include <stdexcept>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace gpudm::backend::cuda {

// A one-shot meeting point for the n jobs of one DeviceWorkers::run (std::barrier is C++20, and
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

class DeviceWorkers {
 public:
  DeviceWorkers() = default;
  explicit DeviceWorkers(std::size_t workers) { start(workers); }
  DeviceWorkers(const DeviceWorkers&) = delete;
  DeviceWorkers& operator=(const DeviceWorkers&) = delete;
  ~DeviceWorkers() { stop(); }

  std::size_t workers() const { return threads_.size(); }

  // Runs f(0..n-1); n - 1 must not exceed workers().
  void run(const std::function<void(std::size_t)>& f, std::size_t n) {
    if (n == 0) return;
    if (n - 1 > threads_.size()) throw std::logic_error("DeviceWorkers::run: more jobs than workers + 1");
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

}  // namespace gpudm::backend::cuda
