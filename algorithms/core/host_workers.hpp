#pragma once
// Persistent host threads: run(f, n) calls f(0) on the calling thread and f(1) ... f(n-1) on
// workers that live as long as the pool, then waits for all of them. Starting a std::thread per
// job per call costs tens of microseconds each (thread creation, join), which is a visible share
// of a sub-millisecond step (a multi-GPU evaluation, a GMT generation's host work). Exceptions
// thrown by f on a worker are captured and rethrown by run() (the first one, by job order).
// Plain C++17 (the CUDA translation units include it).
#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <stdexcept>
#include <string>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <exception>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>
#include <utility>
#include <vector>

#if defined(__linux__)
#include <sched.h>
#endif

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
  // How long an idle worker polls for the next call before it sleeps (0, the default: it sleeps at
  // once). Worth it where calls come every few hundred microseconds and wake-ups cost as much.
  void set_spin(std::chrono::microseconds us) { spin_ns_.store(static_cast<long long>(us.count()) * 1000, std::memory_order_relaxed); }

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
      const std::uint64_t g = generation_.load(std::memory_order_relaxed) + 1;
      publish(g, &f, n, n, false);  // (a polling worker then takes the mutex path)
      generation_.store(g, std::memory_order_release);
    }
    if (n > 1) wake(n - 1);
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

  // Runs task(0..n-1), each index once, on the calling thread and on whichever workers wake while
  // tasks are left: every participant claims the next index from a shared counter. The caller
  // starts at once and never waits for a worker that has not woken yet, only for the tasks in
  // flight, so a call costs at most the serial time plus one task, whatever the workers' wake-up
  // latency (tens of microseconds on a condition variable: with run()'s fixed split every call
  // paid it twice, and 20-50 us tasks on 2-16 threads ran slower than on one). Which
  // thread runs an index varies; results that depend only on the index do not. Exceptions: the
  // lowest index's is rethrown. max_threads (the caller included) caps who claims: workers 1 ..
  // max_threads - 1 take part, the others stay asleep (and a worker polls for the next call only
  // after a call it took part in), so a pool sized for the largest steps costs the small ones nothing.
  //
  // A polling worker joins without the mutex: it reads the call from a sequence-locked copy
  // (publish / read_call) instead of taking m_, and the caller returns once the n tasks are done,
  // without waiting for the workers to leave. Joining and leaving under m_ (measured slower:
  // docs/perf-notes-gmt.md, "the pool's join") queued up to 15 threads on one futex, each hand-over
  // a wake-up, so the last workers joined a 50-200 us step late or not at all. The claim counter
  // carries the call's number in its high 32 bits, so a worker that read an earlier call can never
  // claim an index of a later one: a claim is valid only while its call has unfinished tasks, and the
  // caller is then still inside run_tasks. (The tag is the call's number mod 2^32: a worker would have
  // to stall between reading a call and claiming for 2^32 calls to mistake another call for its own.)
  void run_tasks(const std::function<void(std::size_t)>& task, std::size_t n, std::size_t max_threads = static_cast<std::size_t>(-1)) {
    if (n == 0) return;
    if (static_cast<std::uint64_t>(n) >= (std::uint64_t{1} << 32)) throw std::logic_error("HostWorkers::run_tasks: 2^32 tasks or more");
    errors_.assign(n, nullptr);
    std::uint64_t g = 0;
    {
      std::lock_guard<std::mutex> lock(m_);
      g = generation_.load(std::memory_order_relaxed) + 1;
      publish(g, &task, n, max_threads, true);
      generation_.store(g, std::memory_order_release);
    }
    if (n > 1 && max_threads > 1) wake(std::min(max_threads - 1, n - 1));
    claim_loop(&task, n, static_cast<std::uint32_t>(g));
    while (done_.load(std::memory_order_acquire) < n) std::this_thread::yield();
    for (auto& e : errors_)
      if (e) std::rethrow_exception(e);
  }

 private:
  // The call as workers read it: written by the caller under m_ and inside the sequence lock seq_
  // (odd while it is written), read by a polling worker without m_ (read_call retries a torn read).
  struct Call {
    std::uint64_t generation = 0;
    const std::function<void(std::size_t)>* job = nullptr;
    std::size_t n = 0, want = 0;
    bool claimed = false;  // run_tasks (claims); false: run()'s fixed split, joined under m_
  };
  void publish(std::uint64_t g, const std::function<void(std::size_t)>* job, std::size_t n, std::size_t want, bool claimed) {
    const std::uint64_t s = seq_.load(std::memory_order_relaxed);
    seq_.store(s + 1, std::memory_order_relaxed);
    std::atomic_thread_fence(std::memory_order_release);
    c_gen_.store(g, std::memory_order_relaxed);
    c_job_.store(job, std::memory_order_relaxed);
    c_n_.store(n, std::memory_order_relaxed);
    c_want_.store(want, std::memory_order_relaxed);
    c_claimed_.store(claimed, std::memory_order_relaxed);
    if (claimed && job != nullptr) {
      done_.store(0, std::memory_order_relaxed);
      next_.store(static_cast<std::uint64_t>(static_cast<std::uint32_t>(g)) << 32, std::memory_order_relaxed);
    }
    seq_.store(s + 2, std::memory_order_release);
  }
  Call read_call() const {
    for (unsigned k = 1;; ++k) {
      const std::uint64_t s1 = seq_.load(std::memory_order_acquire);
      if ((s1 & 1u) == 0) {
        Call c;
        c.generation = c_gen_.load(std::memory_order_relaxed);
        c.job = c_job_.load(std::memory_order_relaxed);
        c.n = c_n_.load(std::memory_order_relaxed);
        c.want = c_want_.load(std::memory_order_relaxed);
        c.claimed = c_claimed_.load(std::memory_order_relaxed);
        std::atomic_thread_fence(std::memory_order_acquire);
        if (seq_.load(std::memory_order_relaxed) == s1) return c;
      }
      // (a caller preempted inside publish: give the CPU back after a few tries)
#if defined(__x86_64__) || defined(__i386__)
      if ((k & 63u) != 0) {
        __builtin_ia32_pause();
        continue;
      }
#endif
      std::this_thread::yield();
    }
  }
  // Claims indices of the call tagged `tag` until none is left (or a later call replaced it). `task`
  // is dereferenced only after a claim succeeds: a worker holding a finished call's pointer never
  // touches the caller's (by then destroyed) function.
  void claim_loop(const std::function<void(std::size_t)>* task, std::size_t n, std::uint32_t tag) {
    for (;;) {
      std::uint64_t v = next_.load(std::memory_order_acquire);
      std::size_t i = 0;
      for (;;) {
        if (static_cast<std::uint32_t>(v >> 32) != tag) return;
        i = static_cast<std::size_t>(v & 0xFFFFFFFFu);
        if (i >= n) return;
        if (next_.compare_exchange_weak(v, v + 1, std::memory_order_acq_rel, std::memory_order_acquire)) break;
      }
      try {
        (*task)(i);
      } catch (...) {
        errors_[i] = std::current_exception();
      }
      done_.fetch_add(1, std::memory_order_release);
    }
  }
  // Whether run_tasks call `c` wants worker `index` (a retired call wants none; run_tasks' max_threads).
  static bool wants(const Call& c, std::size_t index) { return c.claimed && c.job != nullptr && index < c.want; }
  // A run_tasks call `c` on worker `index`: claims if the call wants this worker. Returns whether it
  // took part (was wanted: it then polls for the next call, whether or not tasks were left for it).
  bool join(const Call& c, std::size_t index) {
    if (!wants(c, index)) return false;
    claim_loop(c.job, c.n, static_cast<std::uint32_t>(c.generation));
    return true;
  }
  // Before sleeping on the condition variable, a worker polls for the next call for spin_ns_: a
  // sleeping thread takes tens to hundreds of microseconds to wake (an idle virtual CPU longer), as
  // long as a whole GMT generation's host step on small data.
  void spin_for_call(std::uint64_t seen) const {
    const long long ns = spin_ns_.load(std::memory_order_relaxed);
    if (ns <= 0) return;
    const auto until = std::chrono::steady_clock::now() + std::chrono::nanoseconds(ns);
    for (unsigned k = 1;; ++k) {
      if (generation_.load(std::memory_order_acquire) != seen || stopping_.load(std::memory_order_relaxed)) return;
      if ((k & 63u) == 0 && std::chrono::steady_clock::now() >= until) return;
#if defined(__x86_64__) || defined(__i386__)
      __builtin_ia32_pause();
#else
      std::this_thread::yield();
#endif
    }
  }
  // Wakes workers 1 .. k (those polling see the call without it).
  void wake(std::size_t k) {
    if (k > start_cv_.size()) k = start_cv_.size();
    for (std::size_t i = 0; i < k; ++i) start_cv_[i]->notify_one();
  }
  void start(std::size_t workers) {
    for (std::size_t i = 0; i < workers; ++i) start_cv_.push_back(std::make_unique<std::condition_variable>());
    for (std::size_t i = 0; i < workers; ++i)
      threads_.emplace_back([this, i] {
        unbind_from_openmp_place();
        loop(i + 1);
      });
  }
  // With OMP_PROC_BIND (or OMP_PLACES) set, libgomp binds the process's first thread to one place,
  // and a thread started from it inherits that binding: every worker then shares the caller's one
  // CPU (on the 16-core GPU machine, 8 host threads made a GMT generation 4x slower and 16 threads
  // 8x). A worker of this pool is not an OpenMP thread, so it takes back every CPU the
  // process may use (the kernel keeps it inside the cgroup's cpuset).
  static void unbind_from_openmp_place() {
#if defined(__linux__)
    const char* bind = std::getenv("OMP_PROC_BIND");
    const char* places = std::getenv("OMP_PLACES");
    const bool bound = (bind && *bind && std::string(bind) != "false" && std::string(bind) != "FALSE") || (places && *places);
    if (!bound) return;
    cpu_set_t all;
    CPU_ZERO(&all);
    for (int c = 0; c < CPU_SETSIZE; ++c) CPU_SET(c, &all);
    (void)sched_setaffinity(0, sizeof(all), &all);  // best effort: a refusal leaves the inherited set
#endif
  }
  void stop() {
    {
      std::lock_guard<std::mutex> lock(m_);
      stopping_ = true;
    }
    wake(threads_.size());
    for (auto& t : threads_) t.join();
    threads_.clear();
  }
  void loop(std::size_t index) {
    std::uint64_t seen = 0;
    bool took_part = false;  // in the last call: only then poll for the next one before sleeping
    for (;;) {
      if (took_part) spin_for_call(seen);
      // A run_tasks call that started while this worker polled: joined without the mutex.
      if (!stopping_.load(std::memory_order_relaxed) && generation_.load(std::memory_order_acquire) != seen) {
        const Call c = read_call();
        if (c.claimed && c.generation != seen) {
          seen = c.generation;
          took_part = join(c, index);
          continue;
        }
      }
      const std::function<void(std::size_t)>* job = nullptr;
      bool mine = false;
      Call c;
      {
        std::unique_lock<std::mutex> lock(m_);
        start_cv_[index - 1]->wait(lock, [&] { return stopping_ || generation_ != seen; });
        if (stopping_) return;
        seen = generation_;
        c = read_call();  // (written under m_: never torn here)
        job = job_;
        mine = index < jobs_;
      }
      if (c.claimed) {
        took_part = join(c, index);
        continue;
      }
      took_part = mine && job != nullptr;
      if (!took_part) continue;  // (!job: woke after a run call had finished)
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
      if (last) done_cv_.notify_one();  // (the caller is the one waiter)
    }
  }

  std::mutex m_;
  std::vector<std::unique_ptr<std::condition_variable>> start_cv_;  // one per worker: a call wakes only those it wants
  std::condition_variable done_cv_;
  std::vector<std::thread> threads_;
  std::vector<std::exception_ptr> errors_;
  const std::function<void(std::size_t)>* job_ = nullptr;
  std::size_t jobs_ = 0, pending_ = 0;
  std::atomic<std::uint64_t> generation_{0};  // written under m_; read without it while spinning
  std::atomic<bool> stopping_{false};
  std::atomic<long long> spin_ns_{0};
  // run_tasks: the claim counter (the call's tag << 32 | the next index), the tasks finished; the
  // sequence-locked copy of the call (publish / read_call)
  std::atomic<std::uint64_t> next_{0};
  std::atomic<std::size_t> done_{0};
  std::atomic<std::uint64_t> seq_{0}, c_gen_{0};
  std::atomic<const std::function<void(std::size_t)>*> c_job_{nullptr};
  std::atomic<std::size_t> c_n_{0}, c_want_{0};
  std::atomic<bool> c_claimed_{false};
};

// The host threads a pool defaults to: min(`most`, the machine's hardware threads), at least 1.
// Threads, not workers: the calling thread counts.
inline std::size_t default_host_threads(unsigned most = 8) {
  const unsigned hw = std::thread::hardware_concurrency();
  return hw == 0 ? 1 : hw < most ? hw : most;
}

// Calls body(i) for i in [0, n) on the calling thread and the pool's workers (run_tasks: indices
// claimed one at a time), so results that depend only on i are the same for any number of threads.
template <class Body>
void parallel_for(HostWorkers& pool, std::size_t n, const Body& body) {
  if (pool.workers() == 0 || n <= 1) {
    for (std::size_t i = 0; i < n; ++i) body(i);
    return;
  }
  pool.run_tasks([&](std::size_t i) { body(i); }, n);
}

// Below this much work (tree nodes) in all, a step runs on the calling thread: a pool step's
// wake-ups and claims cost more than a few thousand nodes' work (Armchair's ~50 trees of ~11
// nodes a generation).
inline constexpr std::size_t kSerialBelowNodes = 4096;
// Threads a parallel step of `work` tree nodes takes: kBaseThreads, and one more per
// kNodesPerThread nodes above that (a pool of 16 threads helped Elnino's ~31,000-node
// steps and slowed every set of smaller trees when all 16 took part in every step).
inline constexpr std::size_t kBaseThreads = 8;
inline constexpr std::size_t kNodesPerThread = 2048;
inline std::size_t threads_for_nodes(std::size_t work) {
  const std::size_t t = work / kNodesPerThread;
  return t > kBaseThreads ? t : kBaseThreads;
}

// body(i) for i in [0, n) on the calling thread and up to threads_for_nodes(work) - 1 of the pool's
// workers (`work`: the job's size in tree nodes); always on the pool when n > 1 (steps whose
// items cost more than their nodes say). `order` (optional, n indices): the order the tasks are
// claimed in, e.g. largest_first's, so a step does not end waiting on a large task claimed last.
// The same results for any number of threads and any order (body(i) depends only on i); of several
// tasks that throw, the exception rethrown is the first one's in claim order.
template <class Body>
void parallel_for_work(HostWorkers& pool, std::size_t n, std::size_t work, const Body& body, const std::size_t* order = nullptr) {
  if (pool.workers() == 0 || n <= 1) {
    for (std::size_t i = 0; i < n; ++i) body(i);
    return;
  }
  pool.run_tasks([&](std::size_t k) { body(order ? order[k] : k); }, n, threads_for_nodes(work));
}

// parallel_for_work, or a plain loop on the calling thread when `work` (the job's size in tree
// nodes) is under kSerialBelowNodes. The same results either way (body(i) depends only on i).
template <class Body>
void parallel_for_nodes(HostWorkers& pool, std::size_t n, std::size_t work, const Body& body, const std::size_t* order = nullptr) {
  if (work < kSerialBelowNodes) {
    for (std::size_t i = 0; i < n; ++i) body(i);
    return;
  }
  parallel_for_work(pool, n, work, body, order);
}

// The indices 0 .. n-1 by cost(i), largest first (ties in index order): a claim order for
// parallel_for_work. Returns the total cost (the step's work).
template <class Cost>
std::size_t largest_first(std::vector<std::size_t>& order, std::size_t n, const Cost& cost) {
  thread_local std::vector<std::pair<std::size_t, std::size_t>> keyed;  // (cost, index)
  keyed.resize(n);
  std::size_t total = 0;
  for (std::size_t i = 0; i < n; ++i) {
    keyed[i] = {static_cast<std::size_t>(cost(i)), i};
    total += keyed[i].first;
  }
  std::sort(keyed.begin(), keyed.end(), [](const auto& a, const auto& b) { return a.first != b.first ? a.first > b.first : a.second < b.second; });
  order.resize(n);
  for (std::size_t i = 0; i < n; ++i) order[i] = keyed[i].second;
  return total;
}

}  // namespace gpudm
