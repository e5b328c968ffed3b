// Family "vfdt": prequential evaluation of a streaming Hoeffding tree or an online-bagged random
// forest of them (Marron et al., ECAI 2014) on one stream, on one backend.
#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "algorithms/vfdt/sharded_forest.hpp"
#include "algorithms/core/family.hpp"
#include "algorithms/core/progress.hpp"
#include "algorithms/core/stopwatch.hpp"
#include "algorithms/vfdt/forest.hpp"
#include "algorithms/vfdt/online.hpp"
#include "algorithms/vfdt/prequential.hpp"

namespace gpudm {

namespace {

using vfdt::ForestBackend;
using vfdt::ForestParams;

// "forest": M trees, bagging, ADWIN, sqrt(d) attributes; "tree": one tree, all attributes, no
// bagging or ADWIN (whatever trees/bagging/adwin say).
enum class Mode { forest, tree };
const char* to_string(Mode m) { return m == Mode::tree ? "tree" : "forest"; }

// One case's params, declared once in table() below; the defaults are these initialisers and
// ForestParams' / EncodingOptions' own.
struct VfdtCase {
  Mode mode = Mode::forest;
  ForestParams forest;            // what every backend is configured with (seed from the run)
  vfdt::EncodingOptions encoding;
  double time_budget_s = 0.0;
  int curve_points = 100;
  int window = 1000;
  bool validate = false;
  std::vector<long long> accuracy_prefixes;
};

const ParamTable<VfdtCase>& table() {
  static const ParamTable<VfdtCase> t = [] {
    using namespace vfdt;
    ParamTable<VfdtCase> t("vfdt");
    auto forest = [](auto member) {
      return [member](VfdtCase& c) -> auto& { return c.forest.*member; };
    };
    auto encoding = [](auto member) {
      return [member](VfdtCase& c) -> auto& { return c.encoding.*member; };
    };
    t.add_enum<Mode>("mode", &VfdtCase::mode, {{"forest", Mode::forest}, {"tree", Mode::tree}},
                     "\"forest\" (M trees, bagging, ADWIN, sqrt(d) attributes) or \"tree\" (one tree, all attributes)");
    t.add<int>("trees", forest(&ForestParams::trees), "forest size M (mode forest)").range(1, 65535);
    t.add<int>("batch", forest(&ForestParams::batch),
               "mini-batch B: instances predicted, then learned, then split-checked together; 1 = exact streaming")
        .at_least(1);
    t.add<double>("delta", forest(&ForestParams::delta), "split confidence of the Hoeffding bound (0 < delta <= 1)")
        .range(0, 1);
    t.add<double>("tau", forest(&ForestParams::tau), "tie threshold").at_least(0);
    t.add<int>("grace", forest(&ForestParams::grace), "n_min: weight a leaf sees between split checks").at_least(1);
    t.add<int>("features", forest(&ForestParams::features),
               "attributes per leaf; 0 = floor(sqrt(d)) for forests, all for a tree")
        .range(0, 255);
    t.add<bool>("bagging", forest(&ForestParams::bagging), "online bagging with Poisson(1) weights (mode forest)");
    t.add<bool>("adwin", forest(&ForestParams::adwin), "one ADWIN per tree resetting it on a rise in error (mode forest)");
    t.add<double>("adwin_delta", forest(&ForestParams::adwin_delta), "ADWIN confidence (0 < adwin_delta <= 1)").range(0, 1);
    t.add_enum<ResetRule>("reset_rule", forest(&ForestParams::reset_rule), named({ResetRule::rise, ResetRule::any}),
                          "which ADWIN cut resets a tree: \"rise\" (the error estimate went up: MOA's ARF, the "
                          "default) or \"any\" (every cut: River's ARF)");
    t.add_enum<BatchOrder>("batch_order", forest(&ForestParams::batch_order),
                           named({BatchOrder::automatic, BatchOrder::stream, BatchOrder::deferred}),
                           "inside a mini-batch: \"stream\" (each tree predicts, learns and feeds ADWIN instance by "
                           "instance, resets at once; only split checks wait for the batch end: B = 1's accuracy), "
                           "\"deferred\" (the paper's: predict all, learn all, ADWIN, reset at the batch end) or "
                           "\"auto\" (stream where the CUDA engine is the persistent one and leaves vote \"mc\", else "
                           "deferred)");
    t.add_enum<LeafPrediction>("leaf_prediction", forest(&ForestParams::leaf_prediction),
                               named({LeafPrediction::mc, LeafPrediction::nb}),
                               "leaf vote: \"mc\" (majority class) or \"nb\" (naive Bayes over the leaf's attribute "
                               "counters, as MOA's NB leaves; not on path faithful)");
    t.add_enum<BoundWeight>("bound_weight", forest(&ForestParams::bound_weight),
                            named({BoundWeight::automatic, BoundWeight::learned, BoundWeight::total}),
                            "n of the Hoeffding bound: \"total\" (the leaf's class counts, inherited at the split + "
                            "learned since: MOA's and River's), \"learned\" (learned since the leaf was created: VFDT's "
                            "n, the faithful path's) or \"auto\" (total on path default, learned on faithful)");
    t.add<int>("max_depth", forest(&ForestParams::max_depth), "depth limit").range(1, 30);
    t.add<int>("max_nodes", forest(&ForestParams::max_nodes), "node-pool capacity per tree").at_least(3);
    t.add<int>("bins", encoding(&EncodingOptions::bins), "quantile bins of numeric attributes").range(2, 64);
    t.add<int>("bin_warmup", encoding(&EncodingOptions::bin_warmup), "bin edges come from this many first instances")
        .at_least(1);
    t.add<int>("max_values", encoding(&EncodingOptions::max_values), "nominal attributes keep at most this many codes")
        .range(2, 255);
    t.add_enum<ForestPath>("path", forest(&ForestParams::path), named({ForestPath::compact, ForestPath::faithful}),
                           "CUDA layout: \"default\" (compact node pool) or \"faithful\" (the paper's 2^depth array, "
                           "binary attributes)")
        .backend_only();
    t.add<int>("threads", forest(&ForestParams::threads), "OpenMP threads (0 = all)").range(0, 4096).backend_only();
    t.add_enum<Engine>("engine", forest(&ForestParams::engine),
                       named({Engine::automatic, Engine::persistent, Engine::batched}),
                       "CUDA default path: \"persistent\" (one block per tree walks the whole stream, one launch), "
                       "\"batched\" (five kernels per mini-batch) or \"auto\" (persistent for forests of >= 16 trees "
                       "with the prefix ADWIN, else batched)")
        .backend_only();
    t.add_enum<AdwinKernel>("adwin_kernel", forest(&ForestParams::adwin_kernel),
                            named({AdwinKernel::prefix, AdwinKernel::warp, AdwinKernel::simple}),
                            "CUDA ADWIN: \"prefix\" (running error counts, all clock ticks of a batch tested at once; "
                            "the persistent engine's) or, with engine \"batched\", \"warp\" (block inserts, "
                            "warp-parallel checks) or \"simple\" (one lane inserts)")
        .backend_only();
    t.add("time_budget_s", &VfdtCase::time_budget_s,
          "stop repeating once the timed repetitions took this long (0 = run them all) and skip the warm-up on host "
          "backends; for slow CPU baselines")
        .at_least(0)
        .backend_only();
    t.add("curve_points", &VfdtCase::curve_points, "points of the learning curve recorded in metrics.curve").at_least(1);
    t.add("window", &VfdtCase::window, "sliding window of the windowed accuracy (MOA's default evaluator)").at_least(1);
    t.add("validate", &VfdtCase::validate,
          "also run the family's reference backend with the same batch and compare predictions and trees");
    t.add("accuracy_prefixes", &VfdtCase::accuracy_prefixes,
          "record our prequential accuracy (%) over these first instances in metrics.accuracy_at_prefix, keyed by "
          "the instances counted (a prefix longer than the stream counts the whole stream); peers such as River "
          "join their numbers at the same prefix in the tables")
        .at_least(1);
    return t;
  }();
  return t;
}

// Our prequential accuracy (%) over the first p instances of the stream for each requested p,
// keyed by the instances counted (min(p, rows)): a peer that ran on a prefix of the stream
// (River, scripts/peers/river_vfdt.py) is compared at the same prefix by the table renderer.
ojson accuracy_at_prefixes(const vfdt::EncodedStream& stream, const std::vector<std::int32_t>& pred,
                          const std::vector<long long>& prefixes) {
  ojson out = ojson::object();
  for (const long long p : prefixes) {
    const std::size_t n = std::min<std::size_t>(stream.rows, static_cast<std::size_t>(p));
    if (n == 0) continue;
    std::size_t ok = 0;
    for (std::size_t i = 0; i < n; ++i) ok += pred[i] == stream.labels[i];
    out[std::to_string(n)] = 100.0 * static_cast<double>(ok) / static_cast<double>(n);
  }
  return out;
}

// One prequential run of the forest (or tree) over the stream: the backend prepared with the encoded
// stream; run_timed_case() times run_once() (the learner reset, then every instance predicted and
// learnt); finish() has the accuracy, the learning curve, the trees and the validation.
class VfdtTimedCase final : public TimedCase {
 public:
  explicit VfdtTimedCase(const CaseContext& ctx)
      : ctx_(ctx), c_(table().read(ctx.params)), progress_("vfdt " + ctx.dataset + " " + ctx.backend,
                                                          static_cast<double>(ctx.warmup + ctx.repetitions), "run") {
    GPUDM_REQUIRE(ctx.registry != nullptr, "vfdt: no backend registry");
    GPUDM_REQUIRE(ctx.datasets != nullptr, "vfdt: no dataset provider");
    fp_ = c_.forest;
    if (c_.mode == Mode::tree) {
      fp_.trees = 1;
      fp_.bagging = fp_.adwin = false;
    }
    fp_.seed = ctx.seed;
    data_ = ctx.datasets->get(ctx.dataset, ctx.dataset_options);
    stream_ = vfdt::EncodedStream::encode(*data_, c_.encoding);
    fp_.validate(stream_.attributes);
    backend_ = across_ranks(ctx.registry->create<ForestBackend>("vfdt", ctx.backend));  // (trees split over MPI ranks)
    caps_ = backend_->capabilities();
    backend_->configure(fp_);
    backend_->prepare(stream_);
    pred_.assign(stream_.rows, 0);
  }

  // With a time budget (slow CPU baselines of seconds each) the warm-up is kept for device
  // backends only, where it loads the module and touches device memory; a host run's buffers
  // are allocated and touched in prepare().
  int warmups(int asked) const override { return c_.time_budget_s > 0 && caps_.host() ? 0 : asked; }
  void run_once(PhaseTimer& timer) override {
    backend_->reset();
    backend_->process(0, stream_.rows, pred_.data(), timer);
  }
  void tear_down(bool) override { progress_.advance(); }
  // recorded: timing.repetitions < requested; the slowest rank's time, so an MPI run's ranks agree
  bool enough(int, double spent) const override {
    return c_.time_budget_s > 0 && world().max(spent, "vfdt: the time budget") >= c_.time_budget_s;
  }

  CaseResult finish(TimingStats timing, PhaseTimer breakdown) override {
    progress_.finish();
    const CaseContext& ctx = ctx_;
    const VfdtCase& c = c_;
    const ForestParams& fp = fp_;
    const vfdt::EncodedStream& stream = stream_;
    const std::vector<std::int32_t>& pred = pred_;
    const Capabilities& caps = caps_;
    CaseResult r;
    r.dataset = describe_dataset(*data_);
    r.timing = std::move(timing);
    r.breakdown = std::move(breakdown);
    const vfdt::ForestSnapshot snap = backend_->snapshot();
    const vfdt::PrequentialSummary sum = vfdt::summarize(stream, pred, c.window, c.curve_points);

    const double t = r.timing.median();
    const double n = static_cast<double>(stream.rows);
    ojson& m = r.metrics;
    m["accuracy"] = sum.accuracy;
    m["accuracy_window"] = sum.window_accuracy;
    m["instances"] = stream.rows;
    m["instances_per_s"] = t > 0 ? n / t : 0.0;
    m["tree_instance_updates_per_s"] = t > 0 ? n * fp.trees / t : 0.0;
    m["tree_instance_updates_definition"] = "instances x trees per second (every tree predicts every instance; ~63% also learn it)";
    m["mode"] = to_string(c.mode);
    m["trees"] = fp.trees;
    m["batch"] = fp.batch;
    m["batch_order"] = to_string(fp.order());
    m["leaf_prediction"] = to_string(fp.leaf_prediction);
    m["bound_weight"] = fp.bound_total() ? "total" : "learned";
    m["features_per_leaf"] = fp.features_for(stream.attributes);
    m["encoded_attributes"] = stream.attributes;
    m["binary_attributes"] = stream.all_binary();
    // What the backend resolved its engine to (device backends describe one; host ones do not).
    // Across ranks, the forest's combine step (vote sums: calls, bytes this rank received) beside it.
    const ojson described = backend_->describe();
    if (described.contains("cuda_engine")) m["cuda_engine"] = described["cuda_engine"];
    if (described.contains("ranks")) m["backend_info"] = described;
    double nodes = 0, leaves = 0;
    int depth = 0;
    for (int i = 0; i < fp.trees; ++i) {
      nodes += snap.n_nodes[i];
      leaves += snap.leaves(i);
      depth = std::max(depth, snap.depth(i));
    }
    m["mean_nodes"] = nodes / fp.trees;
    m["mean_leaves"] = leaves / fp.trees;
    m["max_depth"] = depth;
    m["splits"] = snap.splits;
    m["drift_resets"] = snap.resets;
    const double phase_total = r.breakdown.total();
    // batch_order "stream" on the CPU interleaves ADWIN with the other steps: no separate phase
    if (phase_total > 0 && r.breakdown.seconds("adwin") > 0) m["adwin_share"] = r.breakdown.seconds("adwin") / phase_total;
    m["curve"] = {{"instances", sum.curve_x}, {"accuracy", sum.curve_acc}, {"window_accuracy", sum.curve_window}};
    if (!c.accuracy_prefixes.empty()) m["accuracy_at_prefix"] = accuracy_at_prefixes(stream, pred, c.accuracy_prefixes);

    r.checksum = checksum_hex(pred.data(), pred.size() * sizeof(std::int32_t));
    r.checksum_exact = true;  // predictions equal the reference backend's for the same params
    // "auto" resolves from the params, backend-only ones included (engine, path): the CUDA batched
    // engine and the faithful path run "deferred" where the CPU's "auto" is "stream"
    r.resolved_params = {{"batch_order", to_string(fp.order())}, {"bound_weight", m["bound_weight"]}};
    m["checksum_definition"] = "FNV-1a of the forest's prequential predictions (int32 per instance)";
    m["repetitions_requested"] = ctx.repetitions;
    m["tree_checksum"] = snap.checksum();

    if (c.validate && !caps.reference) {
      const std::string ref_name = ctx.registry->reference("vfdt");
      auto ref = ctx.registry->create<ForestBackend>("vfdt", ref_name);
      ref->configure(fp);
      ref->prepare(stream);
      ref->reset();
      std::vector<std::int32_t> rp(stream.rows);
      PhaseTimer ref_timer;
      ref_timer.set_enabled(false);
      ref->process(0, stream.rows, rp.data(), ref_timer);
      std::size_t mismatches = 0;
      for (std::size_t i = 0; i < rp.size(); ++i) mismatches += rp[i] != pred[i];
      const std::string tree_diff = ref->snapshot().diff(snap);
      r.validation = {{"reference_backend", ref_name},
                      {"max_error", mismatches},
                      {"error_definition", "instances whose forest prediction differs"},
                      {"tolerance", 0},
                      {"trees_identical", tree_diff.empty()},
                      {"first_difference", tree_diff},
                      {"passed", mismatches == 0 && tree_diff.empty()}};
    }
    return r;
  }
 private:
  CaseContext ctx_;
  VfdtCase c_;
  ForestParams fp_;
  std::shared_ptr<const Dataset> data_;
  vfdt::EncodedStream stream_;
  std::unique_ptr<ForestBackend> backend_;
  Capabilities caps_;
  std::vector<std::int32_t> pred_;
  Progress progress_;
};

class VfdtFamily final : public Family {
 public:
  std::string name() const override { return "vfdt"; }
  std::string description() const override {
    return "Streaming Hoeffding trees / random forests with online bagging and ADWIN, prequential (Marron et al. 2014)";
  }

  std::vector<ParamSpec> params() const override { return table().specs(); }
  std::string split_across_ranks() const override {
    return "trees: each rank learns its block of the forest over the whole stream, votes summed per pass (every backend)";
  }

  std::unique_ptr<TimedCase> make_case(const CaseContext& ctx) override { return std::make_unique<VfdtTimedCase>(ctx); }
};

}  // namespace

std::unique_ptr<Family> make_vfdt_family() { return std::make_unique<VfdtFamily>(); }

namespace vfdt {

std::vector<ParamSpec> online_param_specs() { return table().specs(); }

OnlineSettings read_online_settings(const nlohmann::json& params) {
  const VfdtCase c = table().read(params);
  OnlineSettings s{c.forest, c.encoding};
  if (c.mode == Mode::tree) {  // as VfdtTimedCase does
    s.forest.trees = 1;
    s.forest.bagging = s.forest.adwin = false;
  }
  return s;
}

}  // namespace vfdt

}  // namespace gpudm
