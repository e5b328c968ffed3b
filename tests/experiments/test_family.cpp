#include "tests/experiments/test_family.hpp"

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "algorithms/core/error.hpp"
#include "algorithms/core/timing.hpp"

namespace gpudm::testing {

std::atomic<int> ToyFamily::calls{0};
std::atomic<int> ToyFamily::exit_at{0};

std::shared_ptr<const Dataset> TinyProvider::get(const std::string& name, const nlohmann::json& options) {
  ++loads;
  if (name == "broken") throw Error("dataset 'broken': broken.csv:3: 1 column, expected 3");
  if (name != "tiny" && name != "tiny_reg" && name != "tiny_surrogate")
    throw Error("dataset '" + name + "': not in the test catalog");
  const std::size_t rows = options.contains("rows") ? options["rows"].get<std::size_t>() : 40;
  const auto seed = options.contains("seed") ? options["seed"].get<std::uint64_t>() : 7;
  const bool reg = name == "tiny_reg";
  std::vector<Attribute> attrs{Attribute{"x0", AttributeKind::numeric, {}}, Attribute{"x1", AttributeKind::numeric, {}}};
  auto d = std::make_shared<Dataset>(name, reg ? Task::regression : Task::classification, rows, attrs,
                                     reg ? std::vector<std::string>{} : std::vector<std::string>{"a", "b"});
  for (std::size_t i = 0; i < rows; ++i) {
    d->at(i, 0) = static_cast<float>((i * 7 + seed) % 13);
    d->at(i, 1) = static_cast<float>((i * 3 + seed) % 5);
    if (reg) d->set_target(i, d->at(i, 0) * 0.5f);
    else d->set_label(i, static_cast<int>((i + seed) % 2));
  }
  d->source = "generator";
  d->path = "tiny";
  d->seed = seed;
  d->surrogate = name == "tiny_surrogate";
  return d;
}

std::vector<ParamSpec> ToyFamily::params() const {
  return {
      {"population", "int", 10, "work size", false, {}, 1.0, 100000.0},
      {"threads", "int", 1, "threads (backend-only)", true},
      {"fail", "string", "", "error | unavailable | exit | no_samples | sleep (1.5 s, then ok)"},
      {"openmp_differs", "bool", false, "openmp returns another checksum"},
      {"exact", "bool", true, "checksum is exact"},
      {"estimated", "bool", false, "sets metrics.estimated"},
      {"weights", "array", nlohmann::json::array(), "an array-valued param (written {\"value\": [...]})"},
      {"order", "string", "auto", "auto | stream | deferred; \"auto\" resolves from engine (resolved_params)"},
      {"engine", "string", "auto", "auto | batched: backend-only, but \"batched\" makes order \"auto\" deferred", true},
      {"sample", "string", "", "a file: population 1 writes it (outputs), larger populations read it (MissingInput)"},
  };
}

std::vector<FamilyCommand> ToyFamily::commands() const {
  auto echo = [](const std::string& tag) {
    return [tag](const std::vector<std::string>& args, CommandEnv& env) {
      std::string out = tag;
      for (const auto& a : args) out += "|" + a;
      std::printf("%s%s\n", out.c_str(), env.registry && env.datasets ? "" : " (no env)");
      return 0;
    };
  };
  FamilyCommand train;
  train.trigger = "--train";
  train.usage = "--train toy ARGS...   echo ARGS";
  train.run = echo("toy-train");
  FamilyCommand predict;
  predict.trigger = "--predict";
  predict.usage = "--predict TOY_MODEL.json ...   echo the arguments";
  predict.model_format = "toy-model";
  predict.run = echo("toy-predict");
  return {train, predict};
}

CaseResult ToyFamily::run_case(const CaseContext& ctx) {
  const int call = ++calls;
  if (exit_at > 0 && call == exit_at) {
    std::fflush(nullptr);
    ::_exit(3);  // a crash: no unwinding, no destructors
  }
  const std::string fail = ctx.params.at("fail").get<std::string>();
  if (fail == "error") throw Error("toy: asked to fail");
  if (fail == "unavailable") throw Unavailable("toy: asked to be unavailable");
  if (fail == "exit") {
    std::fflush(nullptr);
    ::_exit(3);
  }
  if (fail == "no_samples") return CaseResult{};  // "ok" without a timed repetition
  if (fail == "sleep") ::usleep(1500 * 1000);      // keeps the results file locked a while
  const std::string sample = ctx.params.at("sample").get<std::string>();
  if (!sample.empty() && ctx.params.at("population").get<long>() > 1 && !std::filesystem::exists(sample))
    throw MissingInput("toy: no sample '" + sample + "'", sample);
  auto data = ctx.datasets->get(ctx.dataset, ctx.dataset_options);
  const long pop = ctx.params.at("population").get<long>();
  double sum = 0;
  CaseResult r;
  r.timing = time_repetitions(ctx.warmup, ctx.repetitions, [&](PhaseTimer&) {
               auto s = r.breakdown.scope("sum");
               sum = 0;
               for (long p = 0; p < pop; ++p)
                 for (std::size_t i = 0; i < data->rows(); ++i) sum += data->at(i, 0) * static_cast<double>(p + 1);
             }).timing;
  std::uint64_t v = static_cast<std::uint64_t>(sum) + ctx.seed;
  if (ctx.backend == "openmp" && ctx.params.at("openmp_differs").get<bool>()) v += 1;
  std::string order = ctx.params.at("order").get<std::string>();
  if (order == "auto") order = ctx.params.at("engine").get<std::string>() == "batched" ? "deferred" : "stream";
  if (order == "deferred") v += 100;  // another order computes something else
  r.resolved_params["order"] = order;
  r.checksum = checksum_hex(&v, sizeof v);
  r.checksum_exact = ctx.params.at("exact").get<bool>();
  r.dataset = describe_dataset(*data);
  r.metrics["sum"] = sum;
  r.metrics["instances_per_s"] = static_cast<double>(data->rows()) / std::max(1e-9, r.timing.median());
  if (ctx.params.at("estimated").get<bool>()) r.metrics["estimated"] = true;
  if (!sample.empty() && pop == 1) {
    std::ofstream(sample) << "sample";
    r.outputs.push_back(sample);
  }
  return r;
}

void register_toy(Registry& r) {
  r.add<Family>("toy", "sequential", [] { return std::unique_ptr<Family>(); }, Registry::Role::reference);
  r.add<Family>("toy", "openmp", [] { return std::unique_ptr<Family>(); });
  r.add_unavailable("toy", "cuda", "no device in tests");
}

experiments::FamilySet toy_families() {
  experiments::FamilySet s;
  s.add(std::make_unique<ToyFamily>());
  return s;
}

}  // namespace gpudm::testing
