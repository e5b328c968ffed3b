// The Pittsburgh family the runner calls. Modes:
//   "evaluate" (Tables 3-5, Figs 5-6): a random population (rules per individual = classes,
//     rule length random and scaled to the attribute count: population.hpp states the
//     distribution) evaluated by the chosen backend; timing = wall clock of one whole
//     evaluation including host<->device transfers of population and results (the dataset is
//     uploaded once in prepare, as in a GA); metrics.gpops_per_s = GPops / interpreter time
//     (the coverage step: "coverage" phase, or "coverage_fused" for the CUDA fast path, which
//     also counts); power over the timed repetitions, measured here by placement: NVML on every
//     device the run uses (summed), RAPL on the host, or the paper's TDP share when RAPL is unreadable.
//   "learn": the GA (ga.hpp) on a stratification-free shuffled train/test split; reports
//     train and test accuracy of the best decision list.
#include <algorithm>
#include <cmath>
#include <iostream>
#include <memory>
#include <numeric>
#include <thread>
#include <utility>
#include <vector>

#include "algorithms/core/family.hpp"
#include "algorithms/core/progress.hpp"
#include "algorithms/core/replay_estimate.hpp"
#include "algorithms/core/stopwatch.hpp"
#include "algorithms/core/machine.hpp"
#include "algorithms/pittsburgh/evaluate_cli.hpp"
#include "algorithms/pittsburgh/evaluator.hpp"
#include "algorithms/pittsburgh/sharded.hpp"
#include "algorithms/pittsburgh/ga.hpp"
#include "algorithms/pittsburgh/params.hpp"

namespace gpudm {

namespace {

using pittsburgh::EvaluationResult;
using pittsburgh::Population;
using pittsburgh::RuleSetEvaluator;

using pittsburgh::CaseParams;
using pittsburgh::params_table;

// `pieces` runs of consecutive individuals of a population of n, together about `fraction` of them
// (at least one each), their starts spread evenly over the population.
std::vector<std::pair<std::size_t, std::size_t>> sample_pieces(std::size_t n, double fraction, int pieces) {
  std::vector<std::pair<std::size_t, std::size_t>> out;
  const auto k = static_cast<std::size_t>(std::max(1, std::min<int>(pieces, static_cast<int>(n))));
  const std::size_t each = std::max<std::size_t>(1, static_cast<std::size_t>(std::llround(fraction * static_cast<double>(n) / static_cast<double>(k))));
  for (std::size_t i = 0; i < k; ++i) {
    const std::size_t a = std::min(n - std::min(n, each), i * n / k);
    out.emplace_back(a, std::min(n, a + each));
  }
  return out;
}

Population first_individuals(const Population& p, std::size_t k) {
  Population q;
  q.individuals.assign(p.individuals.begin(), p.individuals.begin() + static_cast<std::ptrdiff_t>(k));
  return q;
}

// The first individuals of `f` whose GPops over `rows` stay within `budget` (at least one), and
// their GPops.
std::pair<std::size_t, std::uint64_t> individuals_within(const pittsburgh::FlatPopulation& f,
                                                                std::uint64_t rows, double budget) {
  std::uint64_t acc = 0;
  std::size_t k = 0;
  for (; k < f.individuals(); ++k) {
    std::uint64_t g = 0;
    for (std::uint32_t r = f.individual_rule_begin[k]; r < f.individual_rule_begin[k + 1]; ++r)
      g += f.rule_primitives[r];
    g *= rows;
    if (k > 0 && static_cast<double>(acc + g) > budget) break;
    acc += g;
  }
  return {k, acc};
}

// The family's reference backend on the first individuals within validate_gpops_budget: exact equality.
ojson validate_against_reference(const CaseContext& ctx, const CaseParams& p, const Dataset& data,
                                 const Population& pop, const EvaluationResult& got) {
  ojson v;
  const std::string reference = ctx.registry->reference(pittsburgh::kFamilyName);
  v["reference_backend"] = reference;
  v["tolerance"] = 0;
  if (ctx.registry->is_reference(pittsburgh::kFamilyName, ctx.backend)) {
    v["passed"] = true;
    v["note"] = "this is the reference";
    return v;
  }
  const double budget = p.validate_gpops_budget;
  if (budget <= 0) {
    v["passed"] = nullptr;
    v["note"] = "validation disabled";
    return v;
  }
  const auto flat = pittsburgh::flatten(pop, rules::Schema::of(data));
  const std::size_t k = individuals_within(flat, data.rows(), budget).first;
  auto ref = ctx.registry->create<RuleSetEvaluator>(pittsburgh::kFamilyName, reference);
  ref->prepare(data);
  EvaluationResult want;
  PhaseTimer untimed;
  ref->evaluate(first_individuals(pop, k), want, untimed);
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

// Energy over the timed repetitions, by the backend's placement: NVML on every device the run
// uses (devices 0 .. devices - 1, summed); on the host RAPL when readable, else the paper's
// method, TDP x (threads used / cores), labelled.
class EnergyRegion {
 public:
  EnergyRegion(const Capabilities& caps, const CaseParams& p) : caps_(caps), p_(p) {}
  void start() {
    sw_.reset();
    if (caps_.device()) {
      gpu_.clear();
      for (int d = 0; d < std::max(1, p_.backend.devices); ++d) {
        gpu_.push_back(std::make_unique<machine::GpuEnergyMeter>(d));
        gpu_.back()->start();
      }
    } else if (cpu_.available()) {
      cpu_.start();
    }
  }
  ojson stop() {
    const double secs = sw_.seconds();
    if (caps_.device()) {
      std::vector<machine::EnergyReading> parts;
      ojson per = ojson::array();
      for (auto& m : gpu_) {
        parts.push_back(m->stop());
        per.push_back(parts.back().to_json());
      }
      gpu_.clear();
      ojson j = machine::EnergyReading::sum(parts).to_json();
      if (j.value("available", false)) j["devices"] = std::move(per);
      return j;
    }
    if (cpu_.available()) return cpu_.stop().to_json();
    double tdp = p_.cpu_tdp_watts;
    int cores = p_.cpu_cores;
    std::string source = "cpu_tdp_watts param";
    if (tdp <= 0) {
      const machine::CpuTdp known = machine::cpu_tdp_from_model();
      tdp = known.watts;
      if (cores <= 0) cores = known.cores;
      source = "built-in TDP table for '" + known.model + "'";
    }
    if (tdp <= 0)
      return {{"available", false},
              {"reason", cpu_.reason() + "; CPU model not in the TDP table and no cpu_tdp_watts given"}};
    if (cores <= 0) cores = std::max(1, static_cast<int>(std::thread::hardware_concurrency() / 2));
    int threads = caps_.threads ? p_.backend.threads : 1;
    if (threads <= 0) threads = cores;
    const double w = tdp * std::min(1.0, static_cast<double>(threads) / cores);
    return {{"available", true}, {"method", "tdp_share (the paper's method: TDP x threads / cores, full load)"},
            {"tdp_watts", tdp}, {"tdp_source", source}, {"cores", cores}, {"threads", threads}, {"seconds", secs},
            {"mean_watts", w}, {"joules", w * secs}, {"rapl_unavailable", cpu_.reason()}};
  }

 private:
  Capabilities caps_;
  const CaseParams& p_;
  machine::CpuEnergyMeter cpu_;
  std::vector<std::unique_ptr<machine::GpuEnergyMeter>> gpu_;
  Stopwatch sw_;
};

// "evaluate": a random population evaluated by the backend (prepared with the dataset in the
// constructor); run_timed_case() times run_once() (one whole evaluation), the energy meter around
// the timed repetitions; finish() has the metrics and the validation.
class EvaluateCase final : public TimedCase {
 public:
  EvaluateCase(const CaseContext& ctx, const CaseParams& p) : ctx_(ctx), p_(p) {
    data_ = ctx.datasets->get(ctx.dataset, ctx.dataset_options);
    GPUDM_REQUIRE(data_ && data_->task() == Task::classification,
                  "pittsburgh: dataset '" + ctx.dataset + "' is not a classification dataset");
    full_ = pittsburgh::random_population(*data_, static_cast<std::size_t>(p.population), p.rules, ctx.seed);
    flat_ = pittsburgh::flatten(full_, rules::Schema::of(*data_));
    total_gpops_ = flat_.primitives * data_->rows();
    ev_ = pittsburgh::across_ranks(ctx.registry->create<RuleSetEvaluator>(pittsburgh::kFamilyName, ctx.backend));  // (rows split over MPI ranks)
    caps_ = ev_->capabilities();
    // Host baselines that would take minutes: estimated from pieces of the population spread over
    // it (estimating()).
    if (caps_.host() && p.estimate_above_gpops > 0 && static_cast<double>(total_gpops_) > p.estimate_above_gpops)
      pieces_ = sample_pieces(full_.size(), p.estimate_sample_fraction, p.estimate_pieces);
    ev_->configure(p.backend);
    Stopwatch prep;
    ev_->prepare(*data_);
    prepare_seconds_ = prep.seconds();
    energy_region_ = std::make_unique<EnergyRegion>(caps_, p_);
  }
  void run_once(PhaseTimer& t) override { ev_->evaluate(full_, res_, t); }

  // Whether this evaluation is estimated from a sample of its individuals (estimate()) instead of
  // timed whole (run_timed_case).
  bool estimating() const { return !pieces_.empty(); }
  // The estimate: the runner's replay loop (time_replay) times each piece's evaluation; the steps
  // are the population's individuals, each one's work its GPops; the breakdown is the pieces'
  // phases scaled to the estimate.
  CaseResult estimate() {
    struct Replay final : ReplayCase {
      EvaluateCase& c;
      explicit Replay(EvaluateCase& cs) : c(cs) {}
      std::size_t samples() const override { return c.pieces_.size(); }
      double step(std::size_t i) const override { return 0.5 * static_cast<double>(c.pieces_[i].first + c.pieces_[i].second - 1); }
      double work(std::size_t i) const override {
        double w = 0;
        for (std::size_t k = c.pieces_[i].first; k < c.pieces_[i].second; ++k) w += c.work_[k];
        return w;
      }
      void set_up(std::size_t i) override {
        const auto [a, b] = c.pieces_[i];
        c.measured_.individuals.assign(c.full_.individuals.begin() + static_cast<std::ptrdiff_t>(a),
                                       c.full_.individuals.begin() + static_cast<std::ptrdiff_t>(b));
      }
      void run(std::size_t, PhaseTimer& t) override { c.ev_->evaluate(c.measured_, c.res_, t); }
    };
    for (std::size_t k = 0; k < full_.size(); ++k) {
      std::uint64_t g = 0;
      for (std::uint32_t r = flat_.individual_rule_begin[k]; r < flat_.individual_rule_begin[k + 1]; ++r) g += flat_.rule_primitives[r];
      work_.push_back(static_cast<double>(g * data_->rows()));
    }
    Replay replay(*this);
    if (p_.measure_power) energy_region_->start();
    const ReplayTiming rt = time_replay(replay, work_, 0.0, ctx_.warmup, ctx_.repetitions, 0.0);
    if (p_.measure_power) energy_ = energy_region_->stop();
    PhaseTimer breakdown;
    for (const ReplayRepetition& r : rt.repetitions) {
      const double factor = r.replay_seconds > 0 ? r.estimate.seconds / r.replay_seconds : 0.0;
      for (const auto& ph : r.phases.phases()) breakdown.add(ph.name, ph.seconds * factor, ph.clock);
    }
    estimate_ = rt.repetitions.back().estimate;
    return finish(rt.timing, std::move(breakdown));
  }
  void before_timed() override {
    if (p_.measure_power) energy_region_->start();
  }
  void after_timed() override {
    if (p_.measure_power) energy_ = energy_region_->stop();
  }
  CaseResult finish(TimingStats timing, PhaseTimer breakdown) override {
    const CaseContext& ctx = ctx_;
    const CaseParams& p = p_;
    const Dataset* data = data_.get();
    const int pop_size = p.population;
    const auto& spec = p.rules;
    const pittsburgh::FlatPopulation& flat = flat_;
    const std::uint64_t total_gpops = total_gpops_;
    const bool estimated = estimating();
    const Population& validated = estimated ? measured_ : full_;
    const EvaluationResult& res = res_;
    const double prepare_seconds = prepare_seconds_;
    const bool power = p.measure_power;
    const ojson& energy = energy_;
    CaseResult out;
    out.dataset = describe_dataset(*data_);
    out.timing = std::move(timing);
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
    m["estimated"] = estimated;
    if (estimated) {
      std::size_t sampled = 0;
      for (const auto& [a, b] : pieces_) sampled += b - a;
      m["sampled_individuals"] = sampled;
      m["sampled_pieces"] = pieces_.size();
      m["estimate_method"] = replay_estimate_method(ctx.backend + " (this backend's own evaluation)", "individual", "GPops", estimate_,
                                                    full_.size()) +
                             "; sampled as " + std::to_string(pieces_.size()) + " runs of consecutive individuals, each evaluated as one population";
    }
    double acc_sum = 0, acc_best = 0;
    for (double a : res.accuracy) {
      acc_sum += a;
      acc_best = std::max(acc_best, a);
    }
    m["mean_accuracy"] = res.accuracy.empty() ? 0.0 : acc_sum / static_cast<double>(res.accuracy.size());
    m["best_accuracy"] = acc_best;
    m["backend_info"] = ev_->describe();
    if (power) {
      m["power"] = energy;
      if (energy.value("available", false) && energy.value("mean_watts", 0.0) > 0) {
        const double w = energy["mean_watts"].get<double>();
        m["watts"] = w;
        m["gpops_per_s_per_watt"] = m["gpops_per_s"].get<double>() / w;
      }
    }
    out.checksum = res.checksum();
    out.checksum_exact = !estimated;  // an estimated run checksums its last sampled piece only
    out.validation = validate_against_reference(ctx, p, *data, validated, res);
    return out;
  }

 private:
  CaseContext ctx_;
  CaseParams p_;
  std::shared_ptr<const Dataset> data_;
  Population full_, measured_;  // measured_: the piece an estimate evaluates
  pittsburgh::FlatPopulation flat_;
  std::uint64_t total_gpops_ = 0;
  std::vector<std::pair<std::size_t, std::size_t>> pieces_;  // an estimate's pieces [first, last) of individuals
  std::vector<double> work_;                                 // GPops of each individual (an estimate's steps)
  ReplayEstimate estimate_;
  std::unique_ptr<RuleSetEvaluator> ev_;
  Capabilities caps_;
  double prepare_seconds_ = 0.0;
  EvaluationResult res_;
  std::unique_ptr<EnergyRegion> energy_region_;
  ojson energy_ = ojson::object();
};

// "learn": the GA on a shuffled train/test split; run_timed_case() times run_once() (a backend made
// and prepared, the whole GA, the best individual scored on the test rows); finish() has the
// accuracies and the best decision list.
class LearnCase final : public TimedCase {
 public:
  LearnCase(const CaseContext& ctx, const CaseParams& p) : ctx_(ctx), p_(p) {
    data_ = ctx.datasets->get(ctx.dataset, ctx.dataset_options);
    GPUDM_REQUIRE(data_ && data_->task() == Task::classification,
                  "pittsburgh: dataset '" + ctx.dataset + "' is not a classification dataset");
    const double test_fraction = p.test_fraction;
    GPUDM_REQUIRE(test_fraction > 0 && test_fraction < 1, "pittsburgh: test_fraction must be in (0, 1)");
    std::vector<std::size_t> order(data_->rows());
    std::iota(order.begin(), order.end(), 0);
    Rng rng(ctx.seed ^ 0x5157u);
    for (std::size_t i = order.size(); i > 1; --i) std::swap(order[i - 1], order[rng.below(i)]);
    const auto ntest = static_cast<std::size_t>(std::llround(test_fraction * static_cast<double>(order.size())));
    std::vector<std::size_t> test_rows(order.begin(), order.begin() + static_cast<std::ptrdiff_t>(ntest));
    std::vector<std::size_t> train_rows(order.begin() + static_cast<std::ptrdiff_t>(ntest), order.end());
    std::sort(test_rows.begin(), test_rows.end());
    std::sort(train_rows.begin(), train_rows.end());
    train_ = data_->select(train_rows);
    test_ = data_->select(test_rows);
    gp_ = p.ga;
    gp_.population = p.population;
    gp_.init = p.rules;
    gp_.seed = ctx.seed;
  }
  void run_once(PhaseTimer&) override {
    auto ev = pittsburgh::across_ranks(ctx_.registry->create<RuleSetEvaluator>(pittsburgh::kFamilyName, ctx_.backend));  // (rows split over MPI ranks)
    ev->configure(p_.backend);
    ev->prepare(train_);
    ga_ = pittsburgh::run_ga(*ev, train_, gp_);
    ev->prepare(test_);
    test_acc_ = pittsburgh::accuracy_of(*ev, ga_.best);
  }
  CaseResult finish(TimingStats timing, PhaseTimer) override {
    CaseResult out;
    out.dataset = describe_dataset(*data_);
    out.timing = std::move(timing);
    const pittsburgh::GaResult& ga = ga_;
    const pittsburgh::GaParams& gp = gp_;
    const Dataset& train = train_;
    const Dataset& test = test_;
    const double test_acc = test_acc_;
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

 private:
  CaseContext ctx_;
  CaseParams p_;
  std::shared_ptr<const Dataset> data_;
  Dataset train_, test_;
  pittsburgh::GaParams gp_;
  pittsburgh::GaResult ga_;
  double test_acc_ = 0.0;
};

class PittsburghFamily final : public Family {
 public:
  std::string name() const override { return pittsburgh::kFamilyName; }
  std::string description() const override {
    return "Pittsburgh rule-set evaluation (Cano, Zafra, Ventura 2014): rule coverage, rule fitness, "
           "decision-list classification and accuracy for a whole population; GA learner";
  }
  std::vector<ParamSpec> params() const override { return params_table().specs(); }
  std::string split_across_ranks() const override {
    return "rows: each rank evaluates the population on its block of rows (CPU backends: the rule engine's coverage on the "
           "rank's rows, the decision list on the same rows; CUDA: the backend prepared with the rank's rows) and the rule "
           "counts, correct counts and GPops are summed (integers: exact)";
  }

  std::vector<FamilyCommand> commands() const override {
    FamilyCommand evaluate;
    evaluate.trigger = "--evaluate";
    evaluate.data_task = "classification";
    evaluate.usage = "--evaluate pittsburgh --population P.json --dataset NAME [--backend B] [--path P] [--devices N]";
    evaluate.run = [](const std::vector<std::string>& args, CommandEnv& env) {
      return pittsburgh::evaluate_command(args, env, std::cout, std::cerr);
    };
    return {evaluate};
  }

  CaseResult run_case(const CaseContext& ctx) override {
    GPUDM_REQUIRE(ctx.datasets && ctx.registry, "pittsburgh: the runner must provide datasets and a registry");
    const CaseParams p = params_table().read(ctx.params);
    if (p.mode == pittsburgh::Mode::learn) {
      LearnCase c(ctx, p);
      return run_timed_case(c, ctx.warmup, ctx.repetitions);
    }
    EvaluateCase c(ctx, p);
    if (c.estimating()) return c.estimate();  // (the runner's replay loop: time_replay)
    return run_timed_case(c, ctx.warmup, ctx.repetitions);
  }
};

}  // namespace

std::unique_ptr<Family> make_pittsburgh_family() { return std::make_unique<PittsburghFamily>(); }

}  // namespace gpudm
