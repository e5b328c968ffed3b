// Family "vfdt": prequential evaluation of a streaming Hoeffding tree or an online-bagged random
// forest of them (Marron et al., ECAI 2014) on one stream, on one backend.
#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>

#include "algorithms/core/family.hpp"
#include "algorithms/core/progress.hpp"
#include "algorithms/core/stopwatch.hpp"
#include "algorithms/vfdt/forest.hpp"
#include "algorithms/vfdt/prequential.hpp"

namespace gpudm {

namespace {

using vfdt::ForestBackend;
using vfdt::ForestParams;

class VfdtFamily final : public Family {
 public:
  std::string name() const override { return "vfdt"; }
  std::string description() const override {
    return "Streaming Hoeffding trees / random forests with online bagging and ADWIN, prequential (Marron et al. 2014)";
  }

  std::vector<ParamSpec> params() const override {
    return {
        {"mode", "string", "forest", "\"forest\" (M trees, bagging, ADWIN, sqrt(d) attributes) or \"tree\" (one tree, all attributes)"},
        {"trees", "int", 100, "forest size M (mode forest)"},
        {"batch", "int", 1024, "mini-batch B: instances predicted, then learned, then split-checked together; 1 = exact streaming"},
        {"delta", "number", 1e-7, "split confidence of the Hoeffding bound"},
        {"tau", "number", 0.05, "tie threshold"},
        {"grace", "int", 200, "n_min: weight a leaf sees between split checks"},
        {"features", "int", 0, "attributes per leaf; 0 = floor(sqrt(d)) for forests, all for a tree"},
        {"bagging", "bool", true, "online bagging with Poisson(1) weights (mode forest)"},
        {"adwin", "bool", true, "one ADWIN per tree resetting it on a rise in error (mode forest)"},
        {"adwin_delta", "number", 0.002, "ADWIN confidence"},
        {"reset_rule", "string", "rise", "which ADWIN cut resets a tree: \"rise\" (the error estimate went up: MOA's ARF, the default) or \"any\" (every cut: River's ARF)"},
        {"batch_order", "string", "auto", "inside a mini-batch: \"stream\" (each tree predicts, learns and feeds ADWIN instance by instance, resets at once; only split checks wait for the batch end: B = 1's accuracy), \"deferred\" (the paper's: predict all, learn all, ADWIN, reset at the batch end) or \"auto\" (stream where the CUDA engine is the persistent one and leaves vote \"mc\", else deferred)"},
        {"leaf_prediction", "string", "mc", "leaf vote: \"mc\" (majority class) or \"nb\" (naive Bayes over the leaf's attribute counters, as MOA's NB leaves; not on path faithful)"},
        {"bound_weight", "string", "auto", "n of the Hoeffding bound: \"total\" (the leaf's class counts, inherited at the split + learned since: MOA's and River's), \"learned\" (learned since the leaf was created: VFDT's n, the faithful path's) or \"auto\" (total on path default, learned on faithful)"},
        {"max_depth", "int", 20, "depth limit"},
        {"max_nodes", "int", 4096, "node-pool capacity per tree"},
        {"bins", "int", 8, "quantile bins of numeric attributes"},
        {"bin_warmup", "int", 1000, "bin edges come from this many first instances"},
        {"max_values", "int", 32, "nominal attributes keep at most this many codes"},
        {"path", "string", "default", "CUDA layout: \"default\" (compact node pool) or \"faithful\" (the paper's 2^depth array, binary attributes)", true},
        {"threads", "int", 0, "OpenMP threads (0 = all)", true},
        {"engine", "string", "auto", "CUDA default path: \"persistent\" (one block per tree walks the whole stream, one launch), \"batched\" (five kernels per mini-batch) or \"auto\" (persistent for forests of >= 16 trees with the prefix ADWIN, else batched)", true},
        {"adwin_kernel", "string", "prefix", "CUDA ADWIN: \"prefix\" (running error counts, all clock ticks of a batch tested at once; the persistent engine's) or, with engine \"batched\", \"warp\" (block inserts, warp-parallel checks) or \"simple\" (one lane inserts)", true},
        {"time_budget_s", "number", 0.0, "stop repeating once the timed repetitions took this long (0 = run them all) and skip the warm-up on CPU backends; for slow CPU baselines", true},
        {"curve_points", "int", 100, "points of the learning curve recorded in metrics.curve"},
        {"window", "int", 1000, "sliding window of the windowed accuracy (MOA's default evaluator)"},
        {"validate", "bool", false, "also run the sequential backend with the same batch and compare predictions and trees"},
        {"peer", "string", "results/cpu/river_vfdt.json", "River peer results attached to matching runs (metrics.river_*); \"\" = none"},
    };
  }

  CaseResult run_case(const CaseContext& ctx) override {
    GPUDM_REQUIRE(ctx.registry != nullptr, "vfdt: no backend registry");
    GPUDM_REQUIRE(ctx.datasets != nullptr, "vfdt: no dataset provider");
    const auto& P = ctx.params;
    const std::string mode = P.value("mode", "forest");
    if (mode != "forest" && mode != "tree") throw Error("vfdt params: 'mode' must be \"forest\" or \"tree\", got \"" + mode + "\"");
    ForestParams fp;
    fp.trees = mode == "tree" ? 1 : P.value("trees", 100);
    fp.batch = P.value("batch", 1024);
    fp.delta = P.value("delta", 1e-7);
    fp.tau = P.value("tau", 0.05);
    fp.grace = P.value("grace", 200);
    fp.features = P.value("features", 0);
    fp.bagging = mode == "forest" && P.value("bagging", true);
    fp.adwin = mode == "forest" && P.value("adwin", true);
    fp.adwin_delta = P.value("adwin_delta", 0.002);
    fp.reset_rule = P.value("reset_rule", std::string("rise"));
    fp.batch_order = P.value("batch_order", "auto");
    fp.leaf_prediction = P.value("leaf_prediction", "mc");
    fp.bound_weight = P.value("bound_weight", "auto");
    fp.max_depth = P.value("max_depth", 20);
    fp.max_nodes = P.value("max_nodes", 4096);
    fp.path = P.value("path", "default");
    fp.engine = P.value("engine", "auto");
    fp.adwin_kernel = P.value("adwin_kernel", "prefix");
    fp.seed = ctx.seed;
    vfdt::EncodingOptions eo;
    eo.bins = P.value("bins", 8);
    eo.bin_warmup = P.value("bin_warmup", 1000);
    eo.max_values = P.value("max_values", 32);

    const auto data = ctx.datasets->get(ctx.dataset, ctx.dataset_options);
    const vfdt::EncodedStream stream = vfdt::EncodedStream::encode(*data, eo);
    fp.validate(stream.attributes);

    auto backend = ctx.registry->create<ForestBackend>("vfdt", ctx.backend);
    backend->set_threads(P.value("threads", 0));
    backend->prepare(stream, fp);

    CaseResult r;
    r.dataset = describe_dataset(*data);
    std::vector<std::int32_t> pred(stream.rows);
    Progress progress("vfdt " + ctx.dataset + " " + ctx.backend, static_cast<double>(ctx.warmup + ctx.repetitions), "run");
    const double budget = P.value("time_budget_s", 0.0);
    auto once = [&] {
      backend->reset();
      backend->process(0, stream.rows, pred.data());
    };
    // With a time budget (slow CPU baselines of seconds each) the warm-up is kept for the GPU only,
    // where it loads the module and touches device memory; a CPU run's buffers are allocated and
    // touched in prepare().
    const int warmup = budget > 0 && ctx.backend != "cuda" ? 0 : ctx.warmup;
    r.timing.warmup = warmup;
    for (int i = 0; i < warmup; ++i) {
      once();
      progress.advance();
    }
    double spent = 0;
    for (int i = 0; i < ctx.repetitions; ++i) {
      Stopwatch sw;
      once();
      const double s = sw.seconds();
      r.timing.samples.push_back(s);
      r.breakdown.merge(backend->phases());
      progress.advance();
      spent += s;
      if (budget > 0 && spent >= budget) break;  // recorded: timing.repetitions < requested
    }
    progress.finish();
    const vfdt::ForestSnapshot snap = backend->snapshot();
    const vfdt::PrequentialSummary sum =
        vfdt::summarize(stream, pred, P.value("window", 1000), P.value("curve_points", 100));

    const double t = r.timing.median();
    const double n = static_cast<double>(stream.rows);
    ojson& m = r.metrics;
    m["accuracy"] = sum.accuracy;
    m["accuracy_window"] = sum.window_accuracy;
    m["instances"] = stream.rows;
    m["instances_per_s"] = t > 0 ? n / t : 0.0;
    m["tree_instance_updates_per_s"] = t > 0 ? n * fp.trees / t : 0.0;
    m["tree_instance_updates_definition"] = "instances x trees per second (every tree predicts every instance; ~63% also learn it)";
    m["mode"] = mode;
    m["trees"] = fp.trees;
    m["batch"] = fp.batch;
    m["batch_order"] = fp.order();
    m["leaf_prediction"] = fp.leaf_prediction;
    m["bound_weight"] = fp.bound_total() ? "total" : "learned";
    m["features_per_leaf"] = fp.features_for(stream.attributes);
    m["encoded_attributes"] = stream.attributes;
    m["binary_attributes"] = stream.all_binary();
    if (ctx.backend == "cuda")
      m["cuda_engine"] = fp.path == "faithful" ? std::string("faithful (per-batch kernels, ADWIN ") +
                                                     (fp.adwin_kernel == "simple" ? "simple" : "warp") + ")"
                                               : fp.cuda_engine() + " (ADWIN " + fp.adwin_kernel + ")";
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
    attach_peer(ctx, mode, stream, pred, m);

    r.checksum = checksum_hex(pred.data(), pred.size() * sizeof(std::int32_t));
    r.checksum_exact = true;  // predictions equal the sequential backend's for the same params
    // "auto" resolves from the params, backend-only ones included (engine, path): the CUDA batched
    // engine and the faithful path run "deferred" where the CPU's "auto" is "stream"
    r.resolved_params = {{"batch_order", fp.order()}, {"bound_weight", m["bound_weight"]}};
    m["checksum_definition"] = "FNV-1a of the forest's prequential predictions (int32 per instance)";
    m["repetitions_requested"] = ctx.repetitions;
    m["tree_checksum"] = snap.checksum();

    if (P.value("validate", false) && ctx.backend != "sequential") {
      auto ref = ctx.registry->create<ForestBackend>("vfdt", "sequential");
      ref->prepare(stream, fp);
      ref->reset();
      std::vector<std::int32_t> rp(stream.rows);
      ref->process(0, stream.rows, rp.data());
      std::size_t mismatches = 0;
      for (std::size_t i = 0; i < rp.size(); ++i) mismatches += rp[i] != pred[i];
      const std::string tree_diff = ref->snapshot().diff(snap);
      r.validation = {{"reference_backend", "sequential"},
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
  // River's numbers for the same stream (scripts/peers/river_vfdt.py writes them), shown
  // beside ours. Matching: dataset name, rows, mode.
  static void attach_peer(const CaseContext& ctx, const std::string& mode, const vfdt::EncodedStream& stream,
                          const std::vector<std::int32_t>& pred, ojson& m) {
    const std::size_t rows = stream.rows;
    const std::string rel = ctx.params.value("peer", std::string("results/cpu/river_vfdt.json"));
    if (rel.empty()) return;
    std::filesystem::path path(rel);
#ifdef GPUDM_SOURCE_DIR
    if (path.is_relative()) path = std::filesystem::path(GPUDM_SOURCE_DIR) / path;
#endif
    std::ifstream in(path);
    if (!in) return;
    nlohmann::json j;
    try {
      in >> j;
    } catch (const std::exception& e) {
      throw Error("vfdt: peer results " + path.string() + " are not valid JSON: " + e.what());
    }
    for (const auto& run : j.value("runs", nlohmann::json::array())) {
      if (run.value("dataset", "") != ctx.dataset || run.value("mode", "") != mode) continue;
      const nlohmann::json mine = ctx.dataset_options.is_object() ? ctx.dataset_options : nlohmann::json::object();
      if (run.value("options", nlohmann::json::object()) != mine) continue;  // e.g. covertype binary vs not
      const auto n = run.value("instances", std::size_t(0));
      if (run.value("total_rows", std::size_t(0)) != rows || n == 0 || n > rows) continue;  // another length
      std::size_t ok = 0;
      for (std::size_t i = 0; i < n; ++i) ok += pred[i] == stream.labels[i];
      // forests: River's own vote ("soft", summed class probabilities; runs without "vote" are
      // those) -> river_*; one vote per tree ("majority", as ours) -> river_majority_*. With
      // MOA's reset rule ("detector": "rise", ours) -> river_rise_* / river_rise_majority_*;
      // River's own rule ("any", or no "detector") keeps the names above.
      const std::string vote = run.value("vote", std::string(mode == "forest" ? "soft" : "tree"));
      const bool rise = run.value("detector", std::string("any")) == "rise";
      if (rise) {
        const std::string key = vote == "majority" ? "river_rise_majority_accuracy" : "river_rise_accuracy";
        m[key] = run.value("accuracy", 0.0);
        m["river_rise_instances"] = n;
        continue;
      }
      if (vote == "majority") {
        m["river_majority_accuracy"] = run.value("accuracy", 0.0);
        m["river_majority_instances"] = n;
        m["accuracy_at_river_majority_prefix"] = 100.0 * static_cast<double>(ok) / static_cast<double>(n);
        continue;
      }
      m["accuracy_at_river_prefix"] = 100.0 * static_cast<double>(ok) / static_cast<double>(n);
      m["river_model"] = run.value("model", "");
      m["river_accuracy"] = run.value("accuracy", 0.0);
      m["river_instances"] = n;
      m["river_instances_per_s"] = run.value("instances_per_s", 0.0);
      m["river_version"] = run.value("river_version", j.value("river_version", ""));
      m["river_estimated"] = n != rows;
    }
  }
};

}  // namespace

std::unique_ptr<Family> make_vfdt_family() { return std::make_unique<VfdtFamily>(); }

}  // namespace gpudm
