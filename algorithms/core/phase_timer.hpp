#pragma once
// Named phases of a run-time breakdown. Host phases are measured with steady_clock,
// device phases with CUDA events (the CUDA backend measures and reports them through
// add(..., PhaseClock::device)); the two clocks are never mixed in one phase.
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "algorithms/core/error.hpp"
#include "algorithms/core/stopwatch.hpp"

namespace gpudm {

enum class PhaseClock { host, device };

inline const char* to_string(PhaseClock c) { return c == PhaseClock::host ? "host" : "device"; }

class PhaseTimer {
 public:
  struct Phase {
    std::string name;
    PhaseClock clock = PhaseClock::host;
    double seconds = 0.0;
    long long calls = 0;
  };

  // Adds seconds to phase `name`; throws if the phase was earlier recorded on the other clock.
  void add(std::string_view name, double seconds, PhaseClock clock = PhaseClock::host) {
    auto it = index_.find(std::string(name));
    if (it == index_.end()) {
      index_.emplace(std::string(name), phases_.size());
      phases_.push_back(Phase{std::string(name), clock, seconds, 1});
      return;
    }
    Phase& p = phases_[it->second];
    if (p.clock != clock)
      throw Error("phase '" + p.name + "' recorded on both the host and the device clock");
    p.seconds += seconds;
    ++p.calls;
  }

  // RAII host-clock scope: { auto s = timer.scope("redistribute"); ... }
  class Scope {
   public:
    Scope(PhaseTimer* t, std::string name) : t_(t), name_(std::move(name)) {}
    Scope(const Scope&) = delete;
    Scope& operator=(const Scope&) = delete;
    ~Scope() {
      if (t_) t_->add(name_, sw_.seconds(), PhaseClock::host);
    }

   private:
    PhaseTimer* t_;
    std::string name_;
    Stopwatch sw_;
  };
  Scope scope(std::string name) { return Scope(enabled_ ? this : nullptr, std::move(name)); }

  void set_enabled(bool on) { enabled_ = on; }
  bool enabled() const { return enabled_; }
  void clear() {
    phases_.clear();
    index_.clear();
  }
  const std::vector<Phase>& phases() const { return phases_; }
  double total() const {
    double t = 0;
    for (const auto& p : phases_) t += p.seconds;
    return t;
  }
  double seconds(std::string_view name) const {
    auto it = index_.find(std::string(name));
    return it == index_.end() ? 0.0 : phases_[it->second].seconds;
  }

  // Merge another timer (e.g. one per thread or per repetition); call counts add up too.
  void merge(const PhaseTimer& other) {
    for (const auto& p : other.phases_) {
      add(p.name, p.seconds, p.clock);
      phases_[index_.at(p.name)].calls += p.calls - 1;
    }
  }

  // Timers that ran in parallel (one per device or thread), phases in first-seen order:
  // slowest() keeps each phase's largest time (the critical path), mean() the average over all
  // of them (a phase missing from a timer counts as 0 there).
  static PhaseTimer slowest(const std::vector<PhaseTimer>& timers) {
    PhaseTimer out;
    for (const auto& t : timers)
      for (const auto& p : t.phases_) {
        auto it = out.index_.find(p.name);
        if (it == out.index_.end()) out.add(p.name, p.seconds, p.clock);
        else if (p.seconds > out.phases_[it->second].seconds) out.phases_[it->second].seconds = p.seconds;
      }
    return out;
  }
  static PhaseTimer mean(const std::vector<PhaseTimer>& timers) {
    PhaseTimer sum, out;
    for (const auto& t : timers) sum.merge(t);
    const double n = timers.empty() ? 1.0 : static_cast<double>(timers.size());
    for (const auto& p : sum.phases_) out.add(p.name, p.seconds / n, p.clock);
    return out;
  }

  // Results JSON: {"phase": {"seconds": s, "clock": "host"|"device", "calls": n}}, in insertion
  // order, each divided by `divisor` (repetitions) so the breakdown is per run.
  nlohmann::ordered_json to_json(double divisor = 1.0) const {
    nlohmann::ordered_json j = nlohmann::ordered_json::object();
    for (const auto& p : phases_) {
      j[p.name] = {{"seconds", p.seconds / divisor}, {"clock", to_string(p.clock)}, {"calls", p.calls}};
    }
    return j;
  }

 private:
  std::vector<Phase> phases_;
  std::map<std::string, std::size_t> index_;
  bool enabled_ = true;
};

}  // namespace gpudm
