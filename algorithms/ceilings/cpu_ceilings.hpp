#pragma once
// The CPU ceilings, written once against TaskRunner (algorithms/core/task_runner.hpp) as every
// family's CPU engine is: the sequential backend hands it InlineTasks (one thread), the OpenMP
// backend OmpTasks. Each probe runs one task per worker on a fixed schedule, so worker t owns
// chunk t of the copy (and touched it first: NUMA placement), its FMA chains and its popcount
// words. launch_latency (an empty fork + join of every worker) is offered only by a runner
// of threads (the OpenMP backend).
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "algorithms/ceilings/ceilings.hpp"
#include "algorithms/core/task_runner.hpp"

namespace gpudm::ceilings {

class CpuCeilings : public CeilingsBackend {
 public:
  // threaded: the runner is a pool of threads (the probes' method texts say "per thread" and the
  // launch-latency probe is offered).
  CpuCeilings(std::unique_ptr<TaskRunner> tasks, bool threaded);

  void run(PhaseTimer& phases) override;
  ProbeCheck check() override;

 protected:
  ProbeWork setup(const ProbeSpec& spec) override;
  TaskRunner& tasks() { return *tasks_; }

 private:
  bool supports(Probe p) const;
  // Worker t's contiguous share of n elements.
  std::pair<std::size_t, std::size_t> chunk(std::size_t n, int t) const;
  // task(t) once for every worker t on the fixed schedule (thread t runs task t).
  template <class Fn>
  void per_worker(const Fn& task) const;

  std::unique_ptr<TaskRunner> tasks_;
  bool threaded_ = false;
  ProbeSpec spec_;
  int threads_ = 1;
  std::size_t n_ = 0, per_thread_ = 0;
  std::unique_ptr<float[]> src_, dst_;
  std::vector<float> out_;
  std::vector<std::uint64_t> words_, sums_;
};

}  // namespace gpudm::ceilings
