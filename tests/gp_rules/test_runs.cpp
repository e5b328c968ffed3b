// The same seed gives the same evolutionary run on every backend (every path and layout of the
// CUDA engine; "/cuda" instances are labelled gpu), and the family and its CLI end to end.
#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>

#include "algorithms/core/family.hpp"
#include "algorithms/gp_rules/ga.hpp"
#include "algorithms/gp_rules/pop_sample.hpp"
#include "algorithms/gp_rules/report.hpp"
#include "tests/common/equivalence.hpp"
#include "tests/rules/engine_helpers.hpp"
#include "tests/subtree/helpers.hpp"

namespace gpudm {
std::unique_ptr<Family> make_gp_rules_family();
}

namespace gpudm::gp_rules {
namespace {

struct GpTraits {
  using Interface = rules::RuleEvaluator;
  static constexpr const char* kFamily = "gp_rules";
  static void register_backends(Registry& r) { register_rules(r); }
};
using GpRunEquivalence = gpudm::testing::IsEquivalentToRef<GpTraits>;

TEST_P(GpRunEquivalence, SameSeedSameRunOnEveryBackend) {
  auto engine = backend();
  auto ref = reference();
  // fp16-exact (the CUDA f16x2 layout) and not; nominal attributes and missing values.
  for (const bool half_exact : {true, false}) {
    const Dataset d = rules::test::random_dataset(700, 7, 3, half_exact ? 31 : 32, 0.02, half_exact);
    ref->prepare(d);
    for (const auto& [name, alg] : algorithm_names()) {
      GpParams p;
      p.algorithm = alg;
      p.population = 30;
      p.generations = 6;
      p.stop_when_perfect = false;
      RunStats want_stats;
      const Classifier want = train(d, p, 9, *ref, want_stats);
      const std::string want_sum = run_checksum(want, want_stats);
      for (const rules::EngineOptions& o : rules::test::configurations(engine->capabilities())) {
        engine->configure(o);
        engine->prepare(d);
        RunStats st;
        const Classifier got = train(d, p, 9, *engine, st);
        const std::string ctx = backend_name() + " " + name + " " + rules::test::describe(o) + " half_exact " +
                                std::to_string(half_exact);
        EXPECT_EQ(run_checksum(got, st), want_sum) << ctx;
        EXPECT_EQ(to_text(got, d), to_text(want, d)) << ctx;
        EXPECT_EQ(st.trace, want_stats.trace) << ctx;
        EXPECT_EQ(st.gpops, want_stats.gpops) << ctx;
      }
    }
  }
}
GPUDM_INSTANTIATE_EQUIVALENCE(GpRunEquivalence, GpTraits);

Registry gp_registry() {
  Registry r;
  register_rules(r);
  return r;
}

CaseContext context(const Registry& reg, DatasetProvider& provider, const std::string& backend, nlohmann::json params) {
  CaseContext ctx;
  ctx.family = "gp_rules";
  ctx.backend = backend;
  ctx.dataset = "rnd";
  ctx.params = std::move(params);
  ctx.seed = 3;
  ctx.warmup = 0;
  ctx.repetitions = 1;
  ctx.registry = &reg;
  ctx.datasets = &provider;
  return ctx;
}

TEST(GpRulesFamily, RunCaseChecksumsAgreeAcrossBackends) {
  subtree::test::FixedProvider provider;
  provider.add("rnd", rules::test::random_dataset(500, 6, 3, 4, 0.01, true));
  const Registry reg = gp_registry();
  auto family = make_gp_rules_family();
  for (const char* alg : {"falco", "tan", "bojarczuk"}) {
    std::string checksum;
    for (const auto& b : reg.backends("gp_rules")) {
      if (!b.available) continue;
      const CaseResult r =
          family->run_case(context(reg, provider, b.backend, {{"algorithm", alg}, {"population", 24}, {"generations", 5}, {"threads", 2}}));
      ASSERT_EQ(r.status, "ok") << b.backend << ": " << r.reason;
      EXPECT_TRUE(r.checksum_exact);
      EXPECT_FALSE(r.metrics["estimated"].get<bool>());
      EXPECT_GT(r.metrics["gpops"].get<double>(), 0.0);
      EXPECT_GT(r.metrics["train_accuracy"].get<double>(), 0.0);
      EXPECT_DOUBLE_EQ(r.metrics["run_seconds"].get<double>(), r.timing.median());
      EXPECT_TRUE(r.metrics["terminals_counted"].get<bool>());
      EXPECT_GT(r.breakdown.seconds("evaluation"), 0.0);
      EXPECT_GT(r.breakdown.seconds("init_creation"), 0.0);
      if (checksum.empty()) checksum = r.checksum;
      EXPECT_EQ(r.checksum, checksum) << alg << " " << b.backend;
    }
  }
}

// A cross-validation is timed once as a whole; a whole run is measured, never extrapolated (a slow
// backend's estimate is a replay: below).
TEST(GpRulesFamily, CrossValidationAndMeasuredRuns) {
  subtree::test::FixedProvider provider;
  provider.add("rnd", rules::test::random_dataset(300, 5, 2, 6, 0.0, true));
  const Registry reg = gp_registry();
  auto family = make_gp_rules_family();
  const CaseResult cv = family->run_case(
      context(reg, provider, "sequential", {{"algorithm", "bojarczuk"}, {"population", 20}, {"generations", 4}, {"folds", 3}}));
  ASSERT_EQ(cv.status, "ok");
  EXPECT_EQ(cv.metrics["per_fold"].size(), 3u);
  const double acc = cv.metrics["test_accuracy"].get<double>();
  EXPECT_GE(acc, 0.0);
  EXPECT_LE(acc, 1.0);
  EXPECT_EQ(cv.timing.samples.size(), 1u);
  EXPECT_EQ(cv.timing.warmup, 0);
  const CaseResult run = family->run_case(
      context(reg, provider, "sequential", {{"algorithm", "falco"}, {"population", 20}, {"generations", 30}}));
  ASSERT_EQ(run.status, "ok");
  EXPECT_FALSE(run.metrics["estimated"].get<bool>());
  EXPECT_TRUE(run.checksum_exact);
  EXPECT_EQ(run.metrics["run_seconds"].get<double>(), run.timing.median());
  EXPECT_EQ(run.metrics["evaluations"].get<int>(), run.metrics["planned_evaluations"].get<int>());
}

// The replay estimate. A run records its engine calls (record_every); every backend
// replays the sampled populations, reproduces their counts (validation) and estimates the whole
// run from the recorded GPops per call; a tampered count hash fails validation; a sample of
// another algorithm, or none, is refused.
TEST(GpRulesFamily, ReplayOfARecordedRunOnEveryBackend) {
  subtree::test::FixedProvider provider;
  provider.add("rnd", rules::test::random_dataset(400, 6, 3, 5, 0.01, true));
  const Registry reg = gp_registry();
  auto family = make_gp_rules_family();
  const std::filesystem::path dir = std::filesystem::temp_directory_path() / "gpudm_gp_replay_test";
  std::filesystem::remove_all(dir);
  const std::string pattern = (dir / "{experiment}_{dataset}_{algorithm}_p{population}_s{seed}.bin").string();
  auto ctx_for = [&](const std::string& backend, nlohmann::json extra) {
    nlohmann::json p = {{"algorithm", "tan"}, {"population", 24}, {"generations", 9}, {"stop_when_perfect", false},
                        {"threads", 2}, {"record_file", pattern}};
    for (auto it = extra.begin(); it != extra.end(); ++it) p[it.key()] = it.value();
    CaseContext c = context(reg, provider, backend, p);
    c.experiment_id = "replay_test";
    return c;
  };
  EXPECT_THROW(family->run_case(ctx_for("sequential", {{"replay_from", "sample"}})), Unavailable);
  const CaseResult rec = family->run_case(ctx_for("sequential", {{"record_every", 3}}));
  ASSERT_EQ(rec.status, "ok");
  const std::string file = (dir / "replay_test_rnd_tan_p24_s3.bin").string();
  ASSERT_EQ(rec.metrics["record_file"].get<std::string>(), file);
  const auto calls = rec.metrics["engine_calls"].get<long long>();
  EXPECT_EQ(calls, rec.metrics["evaluations"].get<long long>());
  EXPECT_EQ(rec.metrics["recorded_calls"].get<long long>(), (calls - 1) / 3 + 1 + ((calls - 1) % 3 ? 1 : 0));  // 0, 3, ... and the last
  for (const auto& b : reg.backends("gp_rules")) {
    if (!b.available) continue;
    const CaseResult r = family->run_case(ctx_for(b.backend, {{"replay_from", "sample"}}));
    ASSERT_EQ(r.status, "ok") << b.backend;
    EXPECT_TRUE(r.metrics["estimated"].get<bool>());
    EXPECT_TRUE(r.validation["passed"].get<bool>()) << b.backend << " " << r.validation.dump();
    EXPECT_EQ(r.metrics["replayed_calls"].get<long long>(), rec.metrics["recorded_calls"].get<long long>());
    EXPECT_DOUBLE_EQ(r.metrics["gpops"].get<double>(), rec.metrics["gpops"].get<double>());
    EXPECT_EQ(r.checksum, rec.checksum);
    EXPECT_FALSE(r.checksum_exact);
    EXPECT_GT(r.metrics["run_seconds"].get<double>(), 0.0);
    EXPECT_NE(r.metrics["estimate_method"].get<std::string>().find("interpolated linearly"), std::string::npos);
  }
  // a recorded run under replay_above_gpops is run in full instead
  const CaseResult full = family->run_case(ctx_for("sequential", {{"replay_from", "sample"}, {"replay_above_gpops", 1e30}}));
  EXPECT_FALSE(full.metrics["estimated"].get<bool>());
  EXPECT_NE(full.metrics["replay_declined"].get<std::string>().find("run in full"), std::string::npos);
  EXPECT_TRUE(full.checksum_exact);
  EXPECT_EQ(full.checksum, rec.checksum);
  // a time cap keeps at least one call
  const CaseResult capped = family->run_case(ctx_for("sequential", {{"replay_from", "sample"}, {"replay_max_seconds", 1e-9}}));
  EXPECT_EQ(capped.metrics["replayed_calls"].get<long long>(), 1);
  // tampered counts
  PopulationSample s = read_population_sample(file);
  s.calls.front().counts_hash ^= 1;
  const std::string bad = (dir / "tampered.bin").string();
  write_population_sample(bad, s);
  const CaseResult t = family->run_case(ctx_for("sequential", {{"replay_from", bad}}));
  EXPECT_FALSE(t.validation["passed"].get<bool>());
  // another algorithm's or population's sample
  EXPECT_THROW(family->run_case(ctx_for("sequential", {{"algorithm", "falco"}, {"replay_from", file}})), Error);
  EXPECT_THROW(family->run_case(ctx_for("sequential", {{"population", 26}, {"replay_from", file}})), Error);
  // a truncated file
  {
    std::ifstream in(file, std::ios::binary);
    std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    std::ofstream((dir / "cut.bin").string(), std::ios::binary) << bytes.substr(0, bytes.size() / 2);
  }
  try {
    read_population_sample((dir / "cut.bin").string());
    ADD_FAILURE() << "a truncated sample was read";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("cut.bin: truncated or corrupt population sample"), std::string::npos) << e.what();
  }
  std::filesystem::remove_all(dir);
}

// The family's --train / --predict commands over one random dataset "rnd".
class GpRulesCommands : public ::testing::Test {
 protected:
  void SetUp() override {
    provider.add("rnd", rules::test::random_dataset(300, 5, 3, 7, 0.0, true));
    ASSERT_EQ(cmds.size(), 2u);
  }
  subtree::test::FixedProvider provider;
  Registry reg = gp_registry();
  std::unique_ptr<Family> family = make_gp_rules_family();
  const std::vector<FamilyCommand> cmds = family->commands();
  CommandEnv env{&reg, &provider};
};

TEST_F(GpRulesCommands, TrainAndPredictFromTheCommandLine) {
  const std::string model = (std::filesystem::temp_directory_path() / "gp_rules_test_model.json").string();
  for (const char* alg : {"falco", "tan", "bojarczuk"}) {
    EXPECT_EQ(cmds[0].run({"--algorithm", alg, "--dataset", "rnd", "--cv", "2", "--model-out", model, "--quiet", "--param",
                           "population=16", "--param", "generations=3"},
                          env),
              0)
        << alg;
    std::ifstream in(model);
    const nlohmann::json j = nlohmann::json::parse(in);
    EXPECT_EQ(j["format"], kModelFormat);
    EXPECT_EQ(j["algorithm"], alg);
    EXPECT_EQ(cmds[1].model_format, kModelFormat);
    EXPECT_EQ(cmds[1].run({model, "--dataset", "rnd"}, env), 0) << alg;
  }
  // A model whose rule names an attribute the data do not have is refused, naming the rule.
  std::ifstream in(model);
  nlohmann::json j = nlohmann::json::parse(in);
  in.close();
  j["rules"][0]["antecedent"] = {">", 9, 1.0};
  std::ofstream(model) << j.dump();
  Dataset d = *provider.get("rnd", nlohmann::json::object());
  try {
    model_from_json(j, d, "m.json");
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("m.json: rule 0"), std::string::npos) << e.what();
  }
  EXPECT_EQ(cmds[1].run({model, "--dataset", "rnd"}, env), 1);
  EXPECT_EQ(cmds[0].run({"--dataset", "rnd"}, env), 2);  // --algorithm is required: a usage error
  std::filesystem::remove(model);
}

// Hostile model files (docs/reliability.md): integers beyond 32 bits are not narrowed (a
// default_class of 4294967296 would become class 0), deep nesting is one line, not a stack overflow.
TEST_F(GpRulesCommands, HostileModelFilesAreCleanErrors) {
  const std::string model = (std::filesystem::temp_directory_path() / "gp_rules_hostile_model.json").string();
  ASSERT_EQ(cmds[0].run({"--algorithm", "falco", "--dataset", "rnd", "--model-out", model, "--quiet", "--param",
                         "population=8", "--param", "generations=2"},
                        env),
            0);
  nlohmann::json good;
  {
    std::ifstream in(model);
    good = nlohmann::json::parse(in);
  }
  ASSERT_FALSE(good["rules"].empty());
  const Dataset& d = *provider.get("rnd", nlohmann::json::object());
  auto error_of = [&](const nlohmann::json& j) {
    try {
      Dataset scored = d;
      model_from_json(j, scored, "m.json");
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  EXPECT_EQ(error_of(good), "");
  nlohmann::json j = good;
  j["default_class"] = 4294967296ll;
  EXPECT_NE(error_of(j).find("m.json: \"default_class\" must be an integer in [0, 2], got 4294967296"), std::string::npos)
      << error_of(j);
  j = good;
  j["rules"][0]["consequent"] = -1;
  EXPECT_NE(error_of(j).find("m.json: rule 0: \"consequent\" must be an integer in [0, 2], got -1"), std::string::npos)
      << error_of(j);
  j = good;  // a "class" that contradicts the consequent is refused, naming the rule
  {
    const int c = j["rules"][0]["consequent"].get<int>();
    j["rules"][0]["class"] = j["classes"][static_cast<std::size_t>((c + 1) % 3)];
    EXPECT_NE(error_of(j).find("m.json: rule 0: \"class\" \""), std::string::npos) << error_of(j);
    EXPECT_NE(error_of(j).find("contradicts \"consequent\" " + std::to_string(c)), std::string::npos) << error_of(j);
    j["rules"][0]["class"] = 2;
    EXPECT_NE(error_of(j).find("contradicts"), std::string::npos) << error_of(j);
  }
  j = good;
  j.erase("classes");
  EXPECT_NE(error_of(j).find("a model needs"), std::string::npos) << error_of(j);
  j = good;
  j["rules"][0] = 5;
  EXPECT_NE(error_of(j).find("m.json: rule 0: needs \"antecedent\""), std::string::npos) << error_of(j);
  // 100,000 levels through --predict: one line, exit 1.
  std::ofstream(model) << R"({"format": "gpudm.gp_rules.model/1", "rules": )" << std::string(100000, '[')
                       << std::string(100000, ']') << "}";
  ::testing::internal::CaptureStderr();
  EXPECT_EQ(cmds[1].run({model, "--dataset", "rnd"}, env), 1);
  const std::string err = ::testing::internal::GetCapturedStderr();
  EXPECT_NE(err.find("JSON nested deeper than 256 levels"), std::string::npos) << err;
  std::filesystem::remove(model);
}

}  // namespace

namespace {

// The same rows written as another file might hold them: columns 0 and 2 swapped, every nominal
// attribute's categories and the classes listed in reverse order (so every code differs).
Dataset recoded_copy(const Dataset& d) {
  std::vector<std::size_t> order(d.cols());
  for (std::size_t c = 0; c < d.cols(); ++c) order[c] = c;
  std::swap(order[0], order[2]);
  std::vector<Attribute> attrs;
  for (std::size_t c : order) {
    Attribute a = d.attribute(c);
    std::reverse(a.values.begin(), a.values.end());
    attrs.push_back(a);
  }
  std::vector<std::string> classes = d.class_names();
  std::reverse(classes.begin(), classes.end());
  Dataset out(d.name() + "_recoded", d.task(), d.rows(), attrs, classes);
  for (std::size_t c = 0; c < order.size(); ++c) {
    const Attribute& a = d.attribute(order[c]);
    for (std::size_t r = 0; r < d.rows(); ++r) {
      if (d.is_missing(r, order[c])) {
        out.set_missing(r, c);
        continue;
      }
      const float v = d.at(r, order[c]);
      out.at(r, c) = a.is_nominal() ? static_cast<float>(a.values.size() - 1 - static_cast<std::size_t>(v)) : v;
    }
  }
  for (std::size_t r = 0; r < d.rows(); ++r) out.set_label(r, d.num_classes() - 1 - d.label(r));
  return out;
}

double accuracy_in(const std::string& metrics_file, const char* key) {
  std::ifstream in(metrics_file);
  const auto m = nlohmann::json::parse(in);
  return m.at(key).at("accuracy").get<double>();
}

// A model or a --test file is matched to the training data by name: attributes in another order,
// categories and classes coded otherwise give the same scores, and a test file that cannot be
// matched fails before training.
TEST_F(GpRulesCommands, TestFilesAndModelsAreMatchedByNameNotPosition) {
  const Dataset rnd = *provider.get("rnd", nlohmann::json::object());
  ASSERT_TRUE(rnd.attribute(2).is_nominal());
  provider.add("rnd_recoded", recoded_copy(rnd));
  const auto tmp = std::filesystem::temp_directory_path();
  const std::string model = (tmp / "gp_rules_byname_model.json").string(), m1 = (tmp / "gp_rules_byname_m1.json").string(),
                    m2 = (tmp / "gp_rules_byname_m2.json").string();
  const std::vector<std::string> train = {"--algorithm", "falco", "--dataset", "rnd", "--quiet", "--param", "population=16",
                                          "--param", "generations=4", "--model-out", model};
  auto with = [&](std::vector<std::string> a, std::vector<std::string> more) {
    a.insert(a.end(), more.begin(), more.end());
    return a;
  };
  ASSERT_EQ(cmds[0].run(with(train, {"--test", "rnd", "--metrics-out", m1}), env), 0);
  ASSERT_EQ(cmds[0].run(with(train, {"--test", "rnd_recoded", "--metrics-out", m2}), env), 0);
  EXPECT_DOUBLE_EQ(accuracy_in(m1, "test"), accuracy_in(m2, "test"));
  EXPECT_DOUBLE_EQ(accuracy_in(m1, "test"), accuracy_in(m1, "train"));
  std::ifstream in(model);
  const auto j = nlohmann::json::parse(in);
  EXPECT_EQ(j["version"], kModelVersion);
  EXPECT_EQ(j["attributes"][2]["values"], nlohmann::json(rnd.attribute(2).values));
  ASSERT_EQ(cmds[1].run({model, "--dataset", "rnd", "--metrics-out", m1}, env), 0);
  ASSERT_EQ(cmds[1].run({model, "--dataset", "rnd_recoded", "--metrics-out", m2}, env), 0);
  EXPECT_DOUBLE_EQ(accuracy_in(m1, "score"), accuracy_in(m2, "score"));
  // A test file with an attribute the training data lacks fails before any generation runs.
  std::vector<Attribute> attrs = rnd.attributes();
  attrs[1].name = "zz";
  Dataset other("rnd_other", rnd.task(), rnd.rows(), attrs, rnd.class_names());
  provider.add("rnd_other", other);
  ::testing::internal::CaptureStderr();
  EXPECT_EQ(cmds[0].run(with(train, {"--test", "rnd_other", "--param", "generations=100000"}), env), 1);
  const std::string err = ::testing::internal::GetCapturedStderr();
  EXPECT_NE(err.find("no attribute 'a1'"), std::string::npos) << err;
  for (const auto& f : {model, m1, m2}) std::filesystem::remove(f);
}

}  // namespace
}  // namespace gpudm::gp_rules
