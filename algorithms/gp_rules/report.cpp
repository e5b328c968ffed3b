#include "algorithms/gp_rules/report.hpp"

#include <cstring>
#include <vector>

#include "algorithms/core/family.hpp"
#include "algorithms/core/stopwatch.hpp"

namespace gpudm::gp_rules {

nlohmann::ordered_json run_metrics(const RunStats& s) {
  nlohmann::ordered_json m;
  const double eval_s = s.evaluation_seconds(), total = s.phases.total();
  m["evaluations"] = s.evaluations;
  m["planned_evaluations"] = s.planned_evaluations;
  m["generations_run"] = s.generations;
  m["rules_evaluated"] = s.rules_evaluated;
  m["gpops"] = static_cast<double>(s.gpops);
  m["gpops_per_s_evaluation"] = eval_s > 0 ? static_cast<double>(s.gpops) / eval_s : 0.0;
  m["evaluation_seconds"] = eval_s;
  // The engine's interpretation alone: the fused kernel (fast), match + reduction kernels
  // (faithful; device clock), or the CPU counting loop.
  const double kernel_s = s.engine.seconds("match_count") + s.engine.seconds("match") + s.engine.seconds("reduction") +
                          s.engine.seconds("count");
  m["gpops_per_s_kernel"] = kernel_s > 0 ? static_cast<double>(s.gpops) / kernel_s : 0.0;
  m["evaluation_share"] = total > 0 ? eval_s / total : 0.0;
  m["gpops_definition"] = rules::kGpopsDefinition;
  m["terminals_counted"] = true;
  m["engine_phases"] = s.engine.to_json();
  return m;
}

std::string run_checksum(const Classifier& c, const RunStats& s) {
  std::vector<unsigned char> bytes;
  const auto put = [&](const void* p, std::size_t n) {
    const auto* b = static_cast<const unsigned char*>(p);
    bytes.insert(bytes.end(), b, b + n);
  };
  for (const RuleEntry& r : c.rules) {
    put(r.tokens.data(), r.tokens.size() * sizeof(std::uint32_t));
    put(&r.consequent, sizeof r.consequent);
  }
  put(&c.default_class, sizeof c.default_class);
  put(s.trace.data(), s.trace.size() * sizeof(double));
  return checksum_hex(bytes.data(), bytes.size());
}

FittedModel fit_model(const Dataset& data, const GpParams& gp, std::uint64_t seed, rules::RuleEvaluator& engine,
                      const std::string& backend, const nlohmann::json& params) {
  FittedModel f;
  engine.prepare(data);
  Stopwatch sw;
  f.model = train(data, gp, seed, engine, f.stats);
  f.seconds = sw.seconds();
  f.train = score(f.model, data, engine, f.stats.engine);
  nlohmann::ordered_json info;
  info["backend"] = backend;
  info["seed"] = seed;
  info["params"] = params;
  info["train_accuracy"] = f.train.accuracy();
  info["checksum"] = run_checksum(f.model, f.stats);
  f.file = model_json(f.model, data, to_string(gp.algorithm), info);
  return f;
}

}  // namespace gpudm::gp_rules
