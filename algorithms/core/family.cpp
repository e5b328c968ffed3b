#include "algorithms/core/family.hpp"

#include <algorithm>
#include <cstdio>

#include "algorithms/core/error.hpp"
#include "algorithms/core/stopwatch.hpp"

namespace gpudm {

CaseResult run_timed_case(TimedCase& c, int warmup, int repetitions) {
  TimedRepetitions t = time_repetitions(
      c.warmups(warmup), repetitions, [&](PhaseTimer& timer) { c.run_once(timer); }, [&] { c.before_timed(); },
      [&] { c.after_timed(); }, [&](int done, double spent) { return c.enough(done, spent); }, [&] { c.set_up(); },
      [&](bool timed) { c.tear_down(timed); });
  return c.finish(std::move(t.timing), std::move(t.breakdown));
}

CaseResult Family::run_case(const CaseContext& ctx) {
  std::unique_ptr<TimedCase> c = make_case(ctx);
  if (!c) throw Error("family '" + name() + "' has neither a timed case nor its own run_case (internal error)");
  return run_timed_case(*c, ctx.warmup, ctx.repetitions);
}

ojson describe_dataset(const Dataset& d) {
  ojson j;
  j["name"] = d.name();
  j["task"] = to_string(d.task());
  j["rows"] = d.rows();
  j["cols"] = d.cols();
  if (d.task() == Task::classification) j["classes"] = d.num_classes();
  j["source"] = d.source;
  if (d.source == "file") {
    j["path"] = d.path;
    j["sha256"] = d.sha256;
  } else {
    j["generator"] = d.path;
    j["seed"] = d.seed;
  }
  j["surrogate"] = d.surrogate;
  return j;
}

std::string checksum_hex(const void* data, std::size_t bytes, std::uint64_t h) {
  const auto* p = static_cast<const unsigned char*>(data);
  for (std::size_t i = 0; i < bytes; ++i) {
    h ^= p[i];
    h *= 0x100000001b3ull;
  }
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(h));
  return buf;
}

}  // namespace gpudm
