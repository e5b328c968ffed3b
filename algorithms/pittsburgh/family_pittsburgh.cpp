// The Pittsburgh family the runner calls. Modes:
//   "evaluate" (Tables 3-5, Figs 5-6): a random population (rules per individual = classes,
//     rule length random and scaled to the attribute count: population.hpp states the
//     distribution) evaluated by the chosen backend; timing = wall clock of one whole
//     evaluation including host<->device transfers of population and results (the dataset is
//     uploaded once in prepare, as in a GA); metrics.gpops_per_s = GPops / interpreter time
//     (the coverage step: "coverage" phase, or "coverage_fused" for the CUDA fast path, which
//     also counts); power from NVML (GPU) or RAPL (CPU) over the timed repetitions.
//   "learn": the GA (ga.hpp) on a stratification-free shuffled train/test split; reports
//     train and test accuracy of the best decision list.
#include <algorithm>
#include <cmath>
#include <iostream>
#include <numeric>
#include <thread>

#include "algorithms/core/family.hpp"
#include "algorithms/core/progress.hpp"
#include "algorithms/core/stopwatch.hpp"
#include "algorithms/core/machine.hpp"
#include "algorithms/pittsburgh/evaluate_cli.hpp"
#include "algorithms/pittsburgh/evaluator.hpp"
#include "algorithms/pittsburgh/ga.hpp"

namespace gpudm {

namespace {

using pittsburgh::EvaluationResult;
using pittsburgh::Population;
using pittsburgh::RuleSetEvaluator;

template <class T>
T param(const CaseContext& ctx, const char* key, T fallback) {
  if (!ctx.params.contains(key) || ctx.params[key].is_null()) return fallback;
  try {
    return ctx.params[key].get<T>();
  } catch (const std::exception&) {
    throw Error("pittsburgh: param \"" + std::string(key) + "\" has the wrong type: " + ctx.params[key].dump());
  }
}

bool is_cpu(const std::string& backend) { return backend == "sequential" || backend == "openmp"; }

Population first_individuals(const Population& p, std::size_t k) {
  Population q;
  q.individuals.assign(p.individuals.begin(), p.individuals.begin() + static_cast<std::ptrdiff_t>(k));
  return q;
}

class PittsburghFamily final : public Family {
 public:
  std::string name() const override { return pittsburgh::kFamilyName; }
  std::string description() const override {
    return "Pittsburgh rule-set evaluation (Cano, Zafra, Ventura 2014): rule coverage, rule fitness, "
           "decision-list classification and accuracy for a whole population; GA learner";
  }
  std::vector<ParamSpec> params() const override {
    return {
        {"mode", "string", "evaluate", "evaluate (interpreter/evaluation timing) | learn (GA train/test)"},
        {"population", "int", 10, "individuals in the population"},
        {"rules_per_individual", "int", 0, "rules per individual; 0 = number of classes (the paper)"},
        {"max_conditions_cap", "int", 9, "conditions per rule uniform in [1, min(cap, 2 x attributes)]"},
        {"p_or", "number", 0.25, "probability a condition is joined by OR instead of AND"},
        {"p_not", "number", 0.1, "probability a condition is negated"},
        {"p_interval", "number", 0.1, "probability a numeric condition is an IN/OUT interval"},
        {"path", "string", "fast", "CUDA: faithful (the paper's 4 kernels) | fast (fused)", true},
        {"threads", "int", 0, "OpenMP threads (0 = all)", true},
        {"devices", "int", 1, "CUDA devices the population is split over", true},
        {"features", "string", "auto",
         "CUDA fast path: auto (f16x2 when every value is exact in fp16) | f32 | f16x2 (two rows per word)", true},
        {"cpu_gpops_budget", "number", 4e9,
         "CPU backends: evaluate at most this many GPops per repetition (first k individuals) and "
         "extrapolate linearly, flagged metrics.estimated"},
        {"validate_gpops_budget", "number", 5e8,
         "check against the sequential oracle on the first individuals within this many GPops (0 = off)", true},
        {"measure_power", "bool", false, "NVML (GPU) / RAPL (CPU) energy over the timed repetitions", true},
        {"cpu_tdp_watts", "number", 0.0,
         "CPU TDP (one package) for the paper's power method when RAPL is unreadable (0 = built-in table by model name)", true},
        {"cpu_cores", "int", 0, "physical cores per package for the TDP share (0 = table, else hardware_concurrency / 2)", true},
        {"generations", "int", 50, "learn: GA generations"},
        {"test_fraction", "number", 0.3, "learn: held-out fraction"},
        {"length_penalty", "number", 0.002, "learn: fitness penalty per 20 primitives"},
    };
  }

  std::vector<FamilyCommand> commands() const override {
    FamilyCommand evaluate;
    evaluate.trigger = "--evaluate";
    evaluate.usage = "--evaluate pittsburgh --population P.json --dataset NAME [--backend B] [--path P] [--devices N]";
    evaluate.run = [](const std::vector<std::string>& args, CommandEnv& env) {
      return pittsburgh::evaluate_command(args, env, std::cout, std::cerr);
    };
    return {evaluate};
  }

  CaseResult run_case(const CaseContext& ctx) override {
    GPUDM_REQUIRE(ctx.datasets && ctx.registry, "pittsburgh: the runner must provide datasets and a registry");
    const std::string mode = param<std::string>(ctx, "mode", "evaluate");
    if (mode == "learn") return learn(ctx);
    if (mode != "evaluate") throw Error("pittsburgh: param mode \"" + mode + "\" is unknown (evaluate | learn)");
    return evaluate(ctx);
  }

 private:
  static pittsburgh::RandomRuleSpec spec_of(const CaseContext& ctx) {
    pittsburgh::RandomRuleSpec s;
    s.rules_per_individual = param<int>(ctx, "rules_per_individual", 0);
    s.max_conditions_cap = param<int>(ctx, "max_conditions_cap", 9);
    s.p_or = param<double>(ctx, "p_or", 0.25);
    s.p_not = param<double>(ctx, "p_not", 0.1);
    s.p_interval = param<double>(ctx, "p_interval", 0.1);
    return s;
  }

  static pittsburgh::EvaluatorOptions options_of(const CaseContext& ctx) {
    pittsburgh::EvaluatorOptions o;
    o.threads = param<int>(ctx, "threads", 0);
    o.path = param<std::string>(ctx, "path", "fast");
    o.devices = param<int>(ctx, "devices", 1);
    o.features = param<std::string>(ctx, "features", "auto");
    return o;
  }

  CaseResult evaluate(const CaseContext& ctx) {
    CaseResult out;
    const auto data = ctx.datasets->get(ctx.dataset, ctx.dataset_options);
    GPUDM_REQUIRE(data && data->task() == Task::classification,
                  "pittsburgh: dataset '" + ctx.dataset + "' is not a classification dataset");
    out.dataset = describe_dataset(*data);
    const int pop_size = param<int>(ctx, "population", 10);
    GPUDM_REQUIRE(pop_size >= 1, "pittsburgh: param population must be >= 1");
    const auto spec = spec_of(ctx);
    const Population full = pittsburgh::random_population(*data, static_cast<std::size_t>(pop_size), spec, ctx.seed);
    const auto schema = rules::Schema::of(*data);
    const pittsburgh::FlatPopulation flat = pittsburgh::flatten(full, schema);
    const std::uint64_t total_gpops = flat.primitives * data->rows();

    // CPU baselines that would take minutes: measure the first k individuals, extrapolate.
    Population measured = full;
    double scale = 1.0;
    if (is_cpu(ctx.backend)) {
      const double budget = param<double>(ctx, "cpu_gpops_budget", 4e9);
      if (budget > 0 && static_cast<double>(total_gpops) > budget) {
        std::uint64_t acc = 0;
        std::size_t k = 0;
        for (; k < full.size(); ++k) {
          std::uint64_t g = 0;
          for (std::uint32_t r = flat.individual_rule_begin[k]; r < flat.individual_rule_begin[k + 1]; ++r)
            g += flat.rule_primitives[r];
          g *= data->rows();
          if (k > 0 && static_cast<double>(acc + g) > budget) break;
          acc += g;
        }
        measured = first_individuals(full, k);
        scale = static_cast<double>(total_gpops) / static_cast<double>(std::max<std::uint64_t>(1, acc));
      }
    }

    auto ev = ctx.registry->create<RuleSetEvaluator>(pittsburgh::kFamilyName, ctx.backend);
    ev->configure(options_of(ctx));
    Stopwatch prep;
    ev->prepare(*data);
    const double prepare_seconds = prep.seconds();

    const bool power = param<bool>(ctx, "measure_power", false);
    EvaluationResult res;
    PhaseTimer breakdown;
    CpuEnergyMeterHolder cpu_meter(power && is_cpu(ctx.backend));
    for (int i = 0; i < ctx.warmup; ++i) ev->evaluate(measured, res);
    ojson energy = ojson::object();
    if (power) {
      if (is_cpu(ctx.backend)) cpu_meter.start();
      else ev->energy_begin();
    }
    out.timing.warmup = ctx.warmup;
    for (int i = 0; i < ctx.repetitions; ++i) {
      Stopwatch sw;
      ev->evaluate(measured, res);
      out.timing.samples.push_back(sw.seconds());
      breakdown.merge(res.phases);
    }
    if (power) energy = is_cpu(ctx.backend) ? cpu_meter.stop(ctx) : ev->energy_end();
    if (scale != 1.0) {
      for (double& s : out.timing.samples) s *= scale;
      PhaseTimer scaled;
      for (const auto& p : breakdown.phases()) scaled.add(p.name, p.seconds * scale, p.clock);
      breakdown = scaled;
    }
    out.breakdown = breakdown;
    const double reps = std::max(1, ctx.repetitions);
    const bool fused = breakdown.seconds("coverage_fused") > 0;
    const double interp = (fused ? breakdown.seconds("coverage_fused") : breakdown.seconds("coverage")) / reps;
    const double median = out.timing.median();

    ojson& m = out.metrics;
    m["gpops"] = total_gpops;
    m["gpops_definition"] = pittsburgh::kGpopsDefinition;
    m["interpreter_seconds"] = interp;
    m["interpreter_phase"] = fused ? "coverage_fused (coverage + counting + decision list in one kernel)" : "coverage";
    m["gpops_per_s"] = interp > 0 ? static_cast<double>(total_gpops) / interp : 0.0;
    m["evaluation_seconds"] = median;
    m["evaluation_gpops_per_s"] = median > 0 ? static_cast<double>(total_gpops) / median : 0.0;
    m["instances_per_s"] = median > 0 ? static_cast<double>(data->rows()) * pop_size / median : 0.0;
    m["achieved_gb_per_s"] =
        median > 0 ? static_cast<double>(data->feature_bytes()) / median * 1e-9 : 0.0;  // one pass over the data
    m["population"] = pop_size;
    m["rules"] = flat.rules();
    m["primitives_per_instance"] = flat.primitives;
    m["mean_primitives_per_rule"] = flat.rules() ? static_cast<double>(flat.primitives) / flat.rules() : 0.0;
    m["max_stack_depth"] = flat.max_depth;
    m["rule_distribution"] = spec.to_json();
    m["prepare_seconds"] = prepare_seconds;
    m["estimated"] = scale != 1.0;
    if (scale != 1.0) {
      m["measured_individuals"] = measured.size();
      m["extrapolation_factor"] = scale;
      m["estimate_note"] = "CPU time measured on the first individuals and scaled linearly by GPops";
    }
    double acc_sum = 0, acc_best = 0;
    for (double a : res.accuracy) {
      acc_sum += a;
      acc_best = std::max(acc_best, a);
    }
    m["mean_accuracy"] = res.accuracy.empty() ? 0.0 : acc_sum / static_cast<double>(res.accuracy.size());
    m["best_accuracy"] = acc_best;
    m["backend_info"] = ev->info();
    if (power) {
      m["power"] = energy;
      if (energy.value("available", false) && energy.value("mean_watts", 0.0) > 0) {
        const double w = energy["mean_watts"].get<double>();
        m["watts"] = w;
        m["gpops_per_s_per_watt"] = m["gpops_per_s"].get<double>() / w;
      }
    }
    out.checksum = res.checksum();
    out.checksum_exact = scale == 1.0;  // an extrapolated CPU run checksums its measured subset only
    out.validation = validate_against_oracle(ctx, *data, measured, res);
    return out;
  }

  // Sequential oracle on the first individuals within validate_gpops_budget: exact equality.
  ojson validate_against_oracle(const CaseContext& ctx, const Dataset& data, const Population& p,
                                const EvaluationResult& got) {
    ojson v;
    v["reference_backend"] = "sequential";
    v["tolerance"] = 0;
    if (ctx.backend == "sequential") {
      v["passed"] = true;
      v["note"] = "this is the reference";
      return v;
    }
    const double budget = param<double>(ctx, "validate_gpops_budget", 5e8);
    if (budget <= 0) {
      v["passed"] = nullptr;
      v["note"] = "validation disabled";
      return v;
    }
    const auto flat = pittsburgh::flatten(p, rules::Schema::of(data));
    std::size_t k = 0;
    std::uint64_t acc = 0;
    for (; k < p.size(); ++k) {
      std::uint64_t g = 0;
      for (std::uint32_t r = flat.individual_rule_begin[k]; r < flat.individual_rule_begin[k + 1]; ++r)
        g += flat.rule_primitives[r];
      g *= data.rows();
      if (k > 0 && static_cast<double>(acc + g) > budget) break;
      acc += g;
    }
    auto ref = ctx.registry->create<RuleSetEvaluator>(pittsburgh::kFamilyName, "sequential");
    ref->prepare(data);
    EvaluationResult want;
    ref->evaluate(first_individuals(p, k), want);
    std::size_t mismatched_rules = 0, mismatched_individuals = 0;
    for (std::size_t r = 0; r < want.rule_confusion.size(); ++r)
      mismatched_rules += !(want.rule_confusion[r] == got.rule_confusion[r]);
    for (std::size_t i = 0; i < want.correct.size(); ++i) mismatched_individuals += want.correct[i] != got.correct[i];
    v["individuals_compared"] = k;
    v["rules_compared"] = want.rule_confusion.size();
    v["max_error"] = mismatched_rules + mismatched_individuals;
    v["passed"] = mismatched_rules == 0 && mismatched_individuals == 0;
    return v;
  }

  CaseResult learn(const CaseContext& ctx) {
    CaseResult out;
    const auto data = ctx.datasets->get(ctx.dataset, ctx.dataset_options);
    GPUDM_REQUIRE(data && data->task() == Task::classification,
                  "pittsburgh: dataset '" + ctx.dataset + "' is not a classification dataset");
    out.dataset = describe_dataset(*data);
    const double test_fraction = param<double>(ctx, "test_fraction", 0.3);
    GPUDM_REQUIRE(test_fraction > 0 && test_fraction < 1, "pittsburgh: test_fraction must be in (0, 1)");
    std::vector<std::size_t> order(data->rows());
    std::iota(order.begin(), order.end(), 0);
    Rng rng(ctx.seed ^ 0x5157u);
    for (std::size_t i = order.size(); i > 1; --i) std::swap(order[i - 1], order[rng.below(i)]);
    const auto ntest = static_cast<std::size_t>(std::llround(test_fraction * static_cast<double>(order.size())));
    std::vector<std::size_t> test_rows(order.begin(), order.begin() + static_cast<std::ptrdiff_t>(ntest));
    std::vector<std::size_t> train_rows(order.begin() + static_cast<std::ptrdiff_t>(ntest), order.end());
    std::sort(test_rows.begin(), test_rows.end());
    std::sort(train_rows.begin(), train_rows.end());
    const Dataset train = data->select(train_rows);
    const Dataset test = data->select(test_rows);

    pittsburgh::GaParams gp;
    gp.population = param<int>(ctx, "population", 10);
    gp.generations = param<int>(ctx, "generations", 50);
    gp.length_penalty = param<double>(ctx, "length_penalty", 0.002);
    gp.init = spec_of(ctx);
    gp.seed = ctx.seed;
    pittsburgh::GaResult ga;
    double test_acc = 0;
    out.timing = measure(ctx.warmup, ctx.repetitions, [&] {
      auto ev = ctx.registry->create<RuleSetEvaluator>(pittsburgh::kFamilyName, ctx.backend);
      ev->configure(options_of(ctx));
      ev->prepare(train);
      ga = pittsburgh::run_ga(*ev, train, gp);
      ev->prepare(test);
      test_acc = pittsburgh::accuracy_of(*ev, ga.best);
    });
    out.breakdown.add("evaluation", ga.evaluation_seconds);
    ojson& m = out.metrics;
    m["train_accuracy"] = ga.train_accuracy;
    m["test_accuracy"] = test_acc;
    m["train_rows"] = train.rows();
    m["test_rows"] = test.rows();
    m["best_rules"] = ga.best.rules.size();
    m["best_fitness"] = ga.best_fitness;
    m["generations"] = ga.generations;
    m["evaluations"] = ga.evaluations;
    m["gpops"] = ga.gpops;
    m["gpops_definition"] = pittsburgh::kGpopsDefinition;
    m["evaluation_seconds"] = ga.evaluation_seconds;
    m["ga"] = gp.to_json();
    m["best_individual"] = pittsburgh::population_to_json(Population{{ga.best}})["individuals"][0];
    const std::string best = m["best_individual"].dump();
    out.checksum = checksum_hex(best.data(), best.size());
    out.validation = {{"reference_backend", "none"}, {"note", "learning run; evaluation equivalence is tested"}};
    return out;
  }

  // RAPL when readable, else the paper's method: TDP x (threads used / cores), labelled.
  class CpuEnergyMeterHolder {
   public:
    explicit CpuEnergyMeterHolder(bool on) : on_(on) {}
    void start() {
      sw_.reset();
      if (on_ && meter_.available()) meter_.start();
    }
    ojson stop(const CaseContext& ctx) {
      const double secs = sw_.seconds();
      if (meter_.available()) return meter_.stop().to_json();
      double tdp = param<double>(ctx, "cpu_tdp_watts", 0.0);
      int cores = param<int>(ctx, "cpu_cores", 0);
      std::string source = "cpu_tdp_watts param";
      if (tdp <= 0) {
        const machine::CpuTdp known = machine::cpu_tdp_from_model();
        tdp = known.watts;
        if (cores <= 0) cores = known.cores;
        source = "built-in TDP table for '" + known.model + "'";
      }
      if (tdp <= 0)
        return {{"available", false},
                {"reason", meter_.reason() + "; CPU model not in the TDP table and no cpu_tdp_watts given"}};
      if (cores <= 0) cores = std::max(1, static_cast<int>(std::thread::hardware_concurrency() / 2));
      int threads = ctx.backend == "sequential" ? 1 : param<int>(ctx, "threads", 0);
      if (threads <= 0) threads = cores;
      const double w = tdp * std::min(1.0, static_cast<double>(threads) / cores);
      return {{"available", true}, {"method", "tdp_share (the paper's method: TDP x threads / cores, full load)"},
              {"tdp_watts", tdp}, {"tdp_source", source}, {"cores", cores}, {"threads", threads}, {"seconds", secs},
              {"mean_watts", w}, {"joules", w * secs}, {"rapl_unavailable", meter_.reason()}};
    }

   private:
    bool on_;
    machine::CpuEnergyMeter meter_;
    Stopwatch sw_;
  };
};

}  // namespace

std::unique_ptr<Family> make_pittsburgh_family() { return std::make_unique<PittsburghFamily>(); }

}  // namespace gpudm
