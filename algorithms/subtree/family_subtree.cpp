// The "subtree" family: GPops/s of tree interpreters over populations of full condition trees
// (Cano & Ventura, GECCO 2014 poster). One case = one dataset x population x tree size x
// interpreter on one backend: the population is generated from the seed (identical on every
// backend), evaluated warm-up + repetitions times, and its coverage checked against the
// one-instance-at-a-time reference on the first validate_rows rows.
#include <algorithm>
#include <cmath>
#include <memory>

#include "algorithms/core/error.hpp"
#include "algorithms/core/family.hpp"
#include "algorithms/core/replay_estimate.hpp"
#include "algorithms/core/rng.hpp"
#include "algorithms/core/stopwatch.hpp"
#include "algorithms/subtree/interpreter.hpp"

namespace gpudm {

namespace {

constexpr const char* kGpopsDefinition =
    "tree nodes x instances: every node of a full tree (2^d comparisons and 2^d - 1 AND/OR) counts once per "
    "instance; a comparison's attribute and constant belong to its node and are not counted as separate terminals "
    "(the pure postfix encoding spends 3-4 tokens on one comparison, counted as 1 node), so every interpreter is "
    "credited the same work for the same trees";

// One case's params, declared once in table() below.
struct SubtreeCase {
  subtree::InterpreterOptions backend;  // interpreter ("auto" by default), threads
  int population = 64;
  int tree_size = 63;
  long long estimate_sample_rows = 100000;
  long long validate_rows = 4096;
  double and_probability = 0.5;
};

const ParamTable<SubtreeCase>& table() {
  static const ParamTable<SubtreeCase> t = [] {
    ParamTable<SubtreeCase> t("subtree");
    std::vector<nlohmann::json> sizes;
    for (int d = 1; d <= subtree::kMaxDepth; ++d) sizes.push_back((1 << (d + 1)) - 1);
    t.add_enum<subtree::Strategy>("interpreter", [](SubtreeCase& c) -> subtree::Strategy& { return c.backend.strategy; },
                                  subtree::strategy_names(),
                                  "postfix | mixed | subtree | best | auto (auto: mixed, the stack interpreter, on host "
                                  "backends; best on device backends)")
        .backend_only();
    t.add("population", &SubtreeCase::population, "trees evaluated in one batched call (the poster: 32, 64, 128)")
        .range(1, 65535);
    t.add("tree_size", &SubtreeCase::tree_size, "nodes per full tree, 2^(d+1)-1 (the poster: 31, 63, 127)").one_of(sizes);
    t.add<int>("threads", [](SubtreeCase& c) -> int& { return c.backend.threads; }, "OpenMP threads (0: the OpenMP default)")
        .range(0, 4096)
        .backend_only();
    t.add("estimate_sample_rows", &SubtreeCase::estimate_sample_rows,
          "host backends on more rows evaluate a sample of this many, in kSamplePieces runs of consecutive rows spread "
          "over the dataset; GPops/s is measured on them and the whole time estimated (algorithms/core/"
          "replay_estimate.hpp), flagged metrics.estimated (0: all rows)")
        .at_least(0);
    t.add("validate_rows", &SubtreeCase::validate_rows,
          "rows checked against the one-instance reference interpreter (0: all)")
        .at_least(0);
    t.add("and_probability", &SubtreeCase::and_probability, "probability that a logical node is AND (else OR)")
        .range(0, 1);
    return t;
  }();
  return t;
}

// One configured case: the population drawn, the interpreter prepared on the rows it evaluates;
// run_timed_case() times run_once(); finish() has the metrics and the validation.
class SubtreeTimedCase final : public TimedCase {
 public:
  explicit SubtreeTimedCase(const CaseContext& ctx) {
    GPUDM_REQUIRE(ctx.datasets != nullptr && ctx.registry != nullptr, "subtree: a case needs datasets and a registry");
    const SubtreeCase p = table().read(ctx.params);
    const int population = p.population;
    depth = subtree::depth_for_size(p.tree_size);
    const long long sample_rows = p.estimate_sample_rows;
    validate_rows = p.validate_rows;

    // The backend first: an unavailable one is skipped before any dataset is built.
    interp = ctx.registry->create<subtree::TreeInterpreter>("subtree", ctx.backend);
    const Capabilities caps = interp->capabilities();
    strategy = subtree::resolve_strategy(p.backend.strategy, caps.placement);
    interp->configure(p.backend);

    data = ctx.datasets->get(ctx.dataset, ctx.dataset_options);
    GPUDM_REQUIRE(data && data->rows() > 0, "subtree: dataset '" + ctx.dataset + "' is empty");

    // Trees are drawn from the full dataset so every backend sees the same population.
    subtree::GeneratorOptions gen;
    gen.and_probability = p.and_probability;
    pop = subtree::generate_population(*data, population, depth, Rng(ctx.seed), gen);
    subtree::validate_population(pop, *data);

    // Host baselines on large sets run on a sample of the rows spread over the data (flagged
    // estimated): kSamplePieces runs of consecutive rows, evaluated as one dataset.
    cpu = caps.host();
    eval = data.get();
    if (cpu && sample_rows > 0 && data->rows() > static_cast<std::size_t>(sample_rows)) {
      const std::size_t n = data->rows(), s = static_cast<std::size_t>(sample_rows);
      std::vector<std::size_t> rows;
      for (std::size_t i = 0; i < kSamplePieces; ++i) {
        const std::size_t len = s * (i + 1) / kSamplePieces - s * i / kSamplePieces;
        const std::size_t first = i * (n - len) / (kSamplePieces - 1);
        for (std::size_t r = first; r < first + len; ++r) rows.push_back(r);
      }
      part = data->select(rows);
      eval = &part;
    }
    estimated = eval != data.get();

    res.dataset = describe_dataset(*data);
    Stopwatch prep;
    interp->prepare(*eval);
    prepare_s = prep.seconds();
  }
  void run_once(PhaseTimer& timer) override { interp->evaluate(pop, cov, timer); }
  CaseResult finish(TimingStats timing, PhaseTimer breakdown) override {
    res.timing = std::move(timing);
    res.breakdown = std::move(breakdown);
    const double reps = static_cast<double>(res.timing.samples.size());

    // Metrics.
    const double rows = static_cast<double>(eval->rows());
    const double gpops = static_cast<double>(pop.trees) * pop.nodes_per_tree() * rows;
    const double median = res.timing.median();
    const double interpret_s = res.breakdown.seconds("interpret") / reps;
    std::size_t covered = 0;
    for (int t = 0; t < pop.trees; ++t) covered += cov.covered(t);
    ojson& m = res.metrics;
    m["interpreter"] = subtree::to_string(strategy);
    m["tree_depth"] = depth;
    m["tree_nodes"] = pop.nodes_per_tree();
    m["population"] = pop.trees;
    m["rows_evaluated"] = eval->rows();
    m["rows_total"] = data->rows();
    m["estimated"] = estimated;
    if (estimated) {
      // Every row costs the same work (the population's nodes): the replay estimator over the rows
      // with one point, the sample's seconds per row.
      const ReplayEstimate e = replay_estimate(std::vector<double>(1, static_cast<double>(data->rows())), {{0.0, rows, median}});
      m["estimated_full_seconds"] = e.seconds;
      m["estimate_method"] = "the sample's " + std::to_string(eval->rows()) + " rows (" + std::to_string(kSamplePieces) +
                             " runs of consecutive rows spread over the " + std::to_string(data->rows()) +
                             ") timed, the whole time = their seconds per row x the rows (algorithms/core/replay_estimate.hpp)";
    }
    m["gpops"] = gpops;
    m["gpops_per_s"] = median > 0 ? gpops / median : 0.0;
    m["gpops_per_s_interpret"] = interpret_s > 0 ? gpops / interpret_s : 0.0;
    m["gpops_definition"] = kGpopsDefinition;
    m["terminals_counted"] = false;
    m["instances_per_s"] = median > 0 ? rows * pop.trees / median : 0.0;
    m["mean_coverage"] = static_cast<double>(covered) / (rows * pop.trees);
    m["prepare_seconds"] = prepare_s;
    if (ojson launch = interp->describe(); !launch.empty()) {
      launch.erase("interpreter");
      launch.erase("threads");
      if (!launch.empty()) m["launch"] = launch;
    }
    m["timed_region"] = cpu ? "encode + interpret (host wall clock)"
                            : "encode + upload trees + interpret + download coverage (host wall clock)";

    // Validation against the one-instance reference (shared opcode header) on the first rows.
    const std::size_t vrows = validate_rows == 0 ? eval->rows() : std::min<std::size_t>(eval->rows(), validate_rows);
    const subtree::Coverage ref = subtree::reference_coverage(pop, *eval, vrows);
    const std::string diff = subtree::first_difference(cov, ref, vrows);
    res.validation = {{"reference_backend", "reference (one instance at a time, rules::evaluate)"},
                      {"rows_checked", vrows},
                      {"max_error", diff.empty() ? 0 : 1},
                      {"tolerance", 0},
                      {"passed", diff.empty()}};
    if (!diff.empty()) {
      res.status = "failed";
      res.reason = "coverage differs from the reference interpreter at " + diff;
      res.validation["first_difference"] = diff;
    }
    res.checksum = checksum_hex(cov.bits.data(), cov.bits.size() * sizeof(std::uint32_t));
    // Equal across backends and interpreters for the same trees and rows (CPU row caps excepted).
    res.checksum_exact = !estimated;
    return res;
  }

 private:
  std::unique_ptr<subtree::TreeInterpreter> interp;
  subtree::Strategy strategy{};
  int depth = 0;
  long long validate_rows = 0;
  bool cpu = true, estimated = false;
  std::shared_ptr<const Dataset> data;
  static constexpr std::size_t kSamplePieces = 8;
  Dataset part;                    // the sample of the rows, when a host run is estimated
  const Dataset* eval = nullptr;   // the rows evaluated: *data or part
  subtree::Population pop;
  subtree::Coverage cov;
  double prepare_s = 0.0;
  CaseResult res;
};

class SubtreeFamily final : public Family {
 public:
  std::string name() const override { return "subtree"; }
  std::string description() const override {
    return "Tree interpreters (pure postfix, mixed prefix/postfix, parallel subtree, bit-level) over populations of "
           "full AND/OR condition trees: coverage bit vectors and GPops/s (Cano & Ventura, GECCO 2014)";
  }
  std::vector<ParamSpec> params() const override { return table().specs(); }

  std::unique_ptr<TimedCase> make_case(const CaseContext& ctx) override { return std::make_unique<SubtreeTimedCase>(ctx); }
};

}  // namespace

std::unique_ptr<Family> make_subtree_family() { return std::make_unique<SubtreeFamily>(); }

}  // namespace gpudm
