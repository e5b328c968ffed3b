#include "algorithms/gmt/train.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

#include "algorithms/core/progress.hpp"
#include "algorithms/core/stopwatch.hpp"

namespace gpudm {
namespace gmt {

std::vector<ParamSpec> param_specs() {
  const GmtParams d;
  const EvalOptions e;
  std::vector<ParamSpec> v;
  auto add = [&v](const char* name, const char* type, nlohmann::json def, const char* doc) {
    ParamSpec s;
    s.name = name;
    s.type = type;
    s.default_value = std::move(def);
    s.doc = doc;
    v.push_back(std::move(s));
  };
  add("population", "int", d.population, "individuals (paper: 64)");
  add("iterations", "int", d.iterations, "maximum generations (paper: 10,000)");
  add("stall_iterations", "int", d.stall_iterations, "stop after this many generations without improvement of the best (0 = off)");
  add("max_seconds", "number", d.max_seconds, "stop the loop after this many seconds of wall time (0 = off; the stop is reported as stop_reason \"time\")");
  add("crossover", "number", d.crossover, "crossover probability per individual (paper: 0.2)");
  add("mutation", "number", d.mutation, "mutation probability per individual (paper: 0.8)");
  add("elitism", "int", d.elitism, "best individuals copied unchanged (paper: 1)");
  add("ranking_pressure", "number", d.ranking_pressure, "linear ranking: expected copies of the best, in [1, 2]");
  add("fitness", "string", "auto", "bic | weighted | auto (BIC below 1M training rows, weighted Eq. (2) above; both minimised)");
  add("bic_k", "string", "2(Q+W)", "BIC complexity k(T): 2(Q+W) | Q+W | W+3Q-2 | I+W (Q leaves, W model attributes, I internal nodes)");
  add("alpha", "number", d.fitness.alpha, "weight of k(T) = I + W in the weighted fitness Eq. (2)");
  add("init_sample_fraction", "number", d.init_sample_fraction, "initial trees grow on this fraction of the training rows");
  add("init_sample_max", "int", d.init_sample_max, "... at most this many rows");
  add("init_sample_min", "int", d.init_sample_min, "... at least this many rows");
  add("init_max_depth", "int", d.init_max_depth, "levels of an initial tree");
  add("init_model_attrs", "number", d.init_model_attrs, "expected attributes in an initial leaf model");
  add("max_depth", "int", d.max_depth, "maximum tree levels (flat array of 2^levels - 1 nodes)");
  add("min_leaf_rows", "int", d.min_leaf_rows, "a node with fewer training rows is pruned away after evaluation (0 = allow empty leaves)");
  add("repair", "string", "promote", "node with a child under min_leaf_rows rows: promote (replaced by its populated child's subtree) | collapse (becomes a leaf)");
  add("shift_target", "string", "node_row", "'shift threshold' moves the threshold a uniform fraction of the way to x[attr] of: node_row (a uniform row of the node) | dipole (random, lowest- or highest-target row)");
  add("mut_new_test", "number", d.mut_new_test, "weight of the 'new dipolar test' mutation (internal nodes)");
  add("mut_shift_threshold", "number", d.mut_shift_threshold, "weight of 'shift threshold' (internal nodes)");
  add("mut_swap_test", "number", d.mut_swap_test, "weight of 'swap the test with a random internal descendant's' (internal nodes)");
  add("mut_prune", "number", d.mut_prune, "weight of 'prune to a leaf' (internal nodes)");
  add("mut_change_model", "number", d.mut_change_model, "weight of 'change model: add/remove/replace an attribute' (leaves)");
  add("mut_expand", "number", d.mut_expand, "weight of 'expand: leaf -> test + two leaves' (leaves)");
  add("cx_subtrees", "number", d.cx_subtrees, "weight of crossover 'exchange subtrees'");
  add("cx_tests", "number", d.cx_tests, "weight of crossover 'exchange tests'");
  add("cx_branches", "number", d.cx_branches, "weight of crossover 'exchange branches'");
  add("cx_asymmetric", "number", d.cx_asymmetric, "weight of the asymmetric crossover (lower-error subtree copied over the higher-error one)");
  add("threads", "int", 0, "OpenMP threads (0 = OpenMP default); ignored by other backends");
  add("omp_mode", "string", "auto", "OpenMP backend: rows (row chunks of one individual over threads, the paper's OpenMP GMT) | individuals (the generation's individuals over threads) | auto (individuals when the data has fewer row chunks than threads); same results in every mode");
  v.back().backend_only = true;
  add("chunk_rows", "int", e.chunk_rows, "rows per fixed chunk of the data-parallel passes (results do not depend on threads)");
  add("qr_block_rows", "int", e.qr_block_rows, "rows per TSQR block of a leaf's least squares");
  add("rank_tol", "number", e.rank_tol, "rank rule: drop a model column whose remaining norm <= rank_tol x its norm");
  add("rows_per_param", "number", e.rows_per_param, "degrees-of-freedom guard: a leaf of n rows keeps at most max(1, n / rows_per_param) parameters (0 = off)");
  add("gpu_path", "string", "fast", "CUDA backend: fast (a generation's trees in one launch sequence, FP64 sufficient statistics) | faithful (the paper's six procedures per individual: CUB sort, cuSOLVER geqrf/ormqr + cuBLAS trsm per leaf)");
  v.back().allowed = {"fast", "faithful"};
  v.back().backend_only = true;
  add("precision", "string", "double", "CUDA faithful path: least squares in double (as the CPU backends) | float (the paper)");
  v.back().allowed = {"double", "float"};
  v.back().backend_only = true;
  add("gpu_blocks", "int", e.gpu_blocks, "CUDA faithful path: blocks of the data-parallel kernels (0 = the paper's Sec. 5.3 setting by rows)");
  v.back().backend_only = true;
  add("gpu_threads", "int", e.gpu_threads, "CUDA faithful path: threads per block (0 = the paper's Sec. 5.3 setting by rows)");
  v.back().backend_only = true;
  add("gram_engine", "string", "fp64", "CUDA fast path: Gram accumulation on FP64 CUDA cores (fp64) or FP64 tensor cores (dmma)");
  v.back().allowed = {"fp64", "dmma"};
  v.back().backend_only = true;
  add("fast_pivot_guard", "number", e.fast_pivot_guard, "CUDA fast path: a pivot <= this x its column's centred norm^2 sends the leaf to the exact QR solver");
  v.back().backend_only = true;
  add("cuda_graphs", "bool", e.cuda_graphs, "CUDA fast path: replay each generation's kernels as CUDA graphs");
  v.back().backend_only = true;
  add("device_memory_limit", "number", e.device_memory_limit, "CUDA backend: usable device memory in bytes (0 = all free memory)");
  v.back().backend_only = true;
  add("batch_sample_every", "int", 0, "record every k-th generation's batch of modified individuals (flattened) and the run's totals in batch_sample_file, for replay_from on a slower backend (0 = off)");
  add("batch_sample_file", "string", ".cache/gmt_batches/{experiment}_{dataset}_s{seed}.bin", "where batch_sample_every writes and replay_from reads ({experiment}, {dataset} (with its options), {seed} replaced)");
  add("replay_from", "string", "", "estimate instead of running the EA: replay batches recorded by batch_sample_every (this file; \"sample\" = batch_sample_file) on this backend; time = its seconds per evaluation x the recorded run's evaluations + the recorded host EA time; flagged estimated");
  add("replay_max_evaluations", "int", 64, "replay_from: at most this many recorded individuals (whole batches spread over the run)");
  add("replay_batch_trees", "int", 16, "replay_from: recorded batches are replayed in pieces of at most this many trees (a slow backend's time cap can stop inside a batch; 16 keeps 16 OpenMP threads busy)");
  add("replay_max_seconds", "number", 0.0, "replay_from: stop adding batches once the first replay has taken this long (at least one batch; 0 = no cap)");
  add("estimate_above_rows", "int", 0, "training sets with more rows run estimate_iterations iterations, timed and scaled to iterations (flagged estimated, as the paper's footnote a; 0 = off)");
  add("estimate_iterations", "int", 1000, "iterations run on sets above estimate_above_rows");
  add("test_fraction", "number", 0.0, "hold out this fraction of the rows (seeded shuffle) for test RMSE/MAE (0 = train on all)");
  add("extrapolate_iterations", "int", 0, "when > iterations: timing is scaled to this many iterations and flagged estimated");
  // Ranges, checked when a config is validated (before anything under results/ is touched) and by
  // --param; an int needs both bounds (ParamSpec::check bounds an unranged int to the int range only).
  constexpr double kInt = 2147483647.0, kNoMax = std::numeric_limits<double>::infinity();  // numbers only
  const std::pair<const char*, std::pair<double, double>> bounds[] = {
      {"population", {2, 1 << 24}}, {"iterations", {0, kInt}}, {"stall_iterations", {0, kInt}},
      {"max_seconds", {0, kNoMax}}, {"crossover", {0, 1}}, {"mutation", {0, 1}}, {"elitism", {0, (1 << 24) - 1}},
      {"ranking_pressure", {1, 2}}, {"alpha", {0, kNoMax}}, {"init_sample_fraction", {0, 1}},
      {"init_sample_max", {0, kInt}}, {"init_sample_min", {0, kInt}}, {"init_max_depth", {1, 20}},
      {"init_model_attrs", {0, kNoMax}}, {"max_depth", {1, 20}}, {"min_leaf_rows", {0, kInt}},
      {"mut_new_test", {0, kNoMax}}, {"mut_shift_threshold", {0, kNoMax}}, {"mut_swap_test", {0, kNoMax}},
      {"mut_prune", {0, kNoMax}}, {"mut_change_model", {0, kNoMax}}, {"mut_expand", {0, kNoMax}},
      {"cx_subtrees", {0, kNoMax}}, {"cx_tests", {0, kNoMax}}, {"cx_branches", {0, kNoMax}}, {"cx_asymmetric", {0, kNoMax}},
      {"threads", {0, 65536}}, {"chunk_rows", {1, kInt}}, {"qr_block_rows", {1, kInt}}, {"rank_tol", {0, 1}},
      {"rows_per_param", {0, kNoMax}}, {"gpu_blocks", {0, kInt}}, {"gpu_threads", {0, 1024}}, {"fast_pivot_guard", {0, 1}},
      // bytes; 2^53 keeps every value exact and its conversion to an integer defined
      {"device_memory_limit", {0, 9007199254740992.0}}, {"batch_sample_every", {0, kInt}},
      {"replay_max_evaluations", {0, kInt}}, {"replay_batch_trees", {1, kInt}}, {"replay_max_seconds", {0, kNoMax}},
      {"estimate_above_rows", {0, kInt}}, {"estimate_iterations", {1, kInt}}, {"test_fraction", {0, 1}},
      {"extrapolate_iterations", {0, kInt}}};
  for (const auto& [name, range] : bounds)
    for (ParamSpec& s : v)
      if (s.name == name) {
        s.minimum = range.first;
        if (range.second != kNoMax) s.maximum = range.second;
      }
  return v;
}

namespace {
template <class T>
T get(const nlohmann::json& j, const char* key, T def) {
  if (!j.is_object() || !j.contains(key) || j[key].is_null()) return def;
  try {
    return j[key].get<T>();
  } catch (const std::exception&) {
    throw Error(std::string("gmt: params.") + key + " has the wrong type: " + j[key].dump());
  }
}
}  // namespace

GmtParams params_from_json(const nlohmann::json& j, std::size_t rows) {
  GmtParams p;
  p.population = get(j, "population", p.population);
  p.iterations = get(j, "iterations", p.iterations);
  p.stall_iterations = get(j, "stall_iterations", p.stall_iterations);
  p.max_seconds = get(j, "max_seconds", p.max_seconds);
  p.crossover = get(j, "crossover", p.crossover);
  p.mutation = get(j, "mutation", p.mutation);
  p.elitism = get(j, "elitism", p.elitism);
  p.ranking_pressure = get(j, "ranking_pressure", p.ranking_pressure);
  p.fitness.kind = parse_fitness_kind(get<std::string>(j, "fitness", "auto"), rows);
  p.fitness.bic_k = parse_bic_k(get<std::string>(j, "bic_k", "2(Q+W)"));
  p.fitness.alpha = get(j, "alpha", p.fitness.alpha);
  p.init_sample_fraction = get(j, "init_sample_fraction", p.init_sample_fraction);
  p.init_sample_max = get(j, "init_sample_max", p.init_sample_max);
  p.init_sample_min = get(j, "init_sample_min", p.init_sample_min);
  p.init_max_depth = get(j, "init_max_depth", p.init_max_depth);
  p.init_model_attrs = get(j, "init_model_attrs", p.init_model_attrs);
  p.max_depth = get(j, "max_depth", p.max_depth);
  p.min_leaf_rows = get(j, "min_leaf_rows", p.min_leaf_rows);
  p.mut_new_test = get(j, "mut_new_test", p.mut_new_test);
  p.mut_shift_threshold = get(j, "mut_shift_threshold", p.mut_shift_threshold);
  p.mut_prune = get(j, "mut_prune", p.mut_prune);
  p.mut_swap_test = get(j, "mut_swap_test", p.mut_swap_test);
  p.repair = parse_repair_mode(get<std::string>(j, "repair", "promote"));
  p.shift_target = parse_shift_target(get<std::string>(j, "shift_target", "node_row"));
  p.mut_change_model = get(j, "mut_change_model", p.mut_change_model);
  p.mut_expand = get(j, "mut_expand", p.mut_expand);
  p.cx_subtrees = get(j, "cx_subtrees", p.cx_subtrees);
  p.cx_tests = get(j, "cx_tests", p.cx_tests);
  p.cx_branches = get(j, "cx_branches", p.cx_branches);
  p.cx_asymmetric = get(j, "cx_asymmetric", p.cx_asymmetric);
  GPUDM_REQUIRE(p.iterations >= 0, "gmt: params.iterations must be >= 0");
  GPUDM_REQUIRE(p.max_seconds >= 0, "gmt: params.max_seconds must be >= 0");
  GPUDM_REQUIRE(p.crossover >= 0 && p.crossover <= 1 && p.mutation >= 0 && p.mutation <= 1,
                "gmt: params.crossover and params.mutation must be probabilities in [0, 1]");
  GPUDM_REQUIRE(p.mut_new_test >= 0 && p.mut_shift_threshold >= 0 && p.mut_swap_test >= 0 && p.mut_prune >= 0 &&
                    p.mut_change_model >= 0 && p.mut_expand >= 0,
                "gmt: mutation weights (mut_*) must be >= 0");
  GPUDM_REQUIRE(p.mut_new_test + p.mut_shift_threshold + p.mut_swap_test + p.mut_prune > 0 && p.mut_change_model + p.mut_expand > 0 &&
                    p.cx_subtrees + p.cx_tests + p.cx_branches + p.cx_asymmetric > 0,
                "gmt: every group of operator weights (mut_* internal, mut_* leaf, cx_*) needs a positive sum");
  GPUDM_REQUIRE(p.min_leaf_rows >= 0, "gmt: params.min_leaf_rows must be >= 0");
  return p;
}

EvalOptions eval_options_from_json(const nlohmann::json& j) {
  EvalOptions o;
  o.threads = get(j, "threads", o.threads);
  o.chunk_rows = get(j, "chunk_rows", o.chunk_rows);
  const std::string mode = get<std::string>(j, "omp_mode", "auto");
  if (mode == "auto") o.omp_mode = EvalOptions::OmpMode::kAuto;
  else if (mode == "rows") o.omp_mode = EvalOptions::OmpMode::kRows;
  else if (mode == "individuals") o.omp_mode = EvalOptions::OmpMode::kIndividuals;
  else throw Error("gmt: params.omp_mode must be auto, rows or individuals, not \"" + mode + "\"");
  o.qr_block_rows = get(j, "qr_block_rows", o.qr_block_rows);
  o.rank_tol = get(j, "rank_tol", o.rank_tol);
  o.rows_per_param = get(j, "rows_per_param", o.rows_per_param);
  const std::string path = get<std::string>(j, "gpu_path", "fast");
  if (path == "fast") o.gpu_path = EvalOptions::GpuPath::kFast;
  else if (path == "faithful") o.gpu_path = EvalOptions::GpuPath::kFaithful;
  else throw Error("gmt: params.gpu_path must be fast or faithful, not \"" + path + "\"");
  const std::string prec = get<std::string>(j, "precision", "double");
  if (prec == "double") o.gpu_precision = EvalOptions::GpuPrecision::kDouble;
  else if (prec == "float") o.gpu_precision = EvalOptions::GpuPrecision::kFloat;
  else throw Error("gmt: params.precision must be double or float, not \"" + prec + "\"");
  const std::string engine = get<std::string>(j, "gram_engine", "fp64");
  if (engine == "fp64") o.gram_engine = EvalOptions::GramEngine::kFp64;
  else if (engine == "dmma") o.gram_engine = EvalOptions::GramEngine::kDmma;
  else throw Error("gmt: params.gram_engine must be fp64 or dmma, not \"" + engine + "\"");
  o.gpu_blocks = get(j, "gpu_blocks", o.gpu_blocks);
  o.gpu_threads = get(j, "gpu_threads", o.gpu_threads);
  o.fast_pivot_guard = get(j, "fast_pivot_guard", o.fast_pivot_guard);
  o.cuda_graphs = get(j, "cuda_graphs", o.cuda_graphs);
  o.device_memory_limit = get(j, "device_memory_limit", o.device_memory_limit);
  GPUDM_REQUIRE(o.gpu_blocks >= 0 && o.gpu_threads >= 0 && o.gpu_threads <= 1024,
                "gmt: params.gpu_blocks must be >= 0 and params.gpu_threads in [0, 1024]");
  GPUDM_REQUIRE(o.fast_pivot_guard >= 0 && o.fast_pivot_guard < 1, "gmt: params.fast_pivot_guard must be in [0, 1)");
  GPUDM_REQUIRE(o.device_memory_limit >= 0, "gmt: params.device_memory_limit must be >= 0");
  GPUDM_REQUIRE(o.rows_per_param >= 0, "gmt: params.rows_per_param must be >= 0");
  GPUDM_REQUIRE(o.chunk_rows > 0 && o.qr_block_rows > 0, "gmt: params.chunk_rows and params.qr_block_rows must be > 0");
  return o;
}

Scores score(const Node* root, const Dataset& d, double gross_threshold) {
  Scores s;
  s.rows = static_cast<std::int64_t>(d.rows());
  double se = 0.0, ae = 0.0, se_rest = 0.0;
  for (std::size_t r = 0; r < d.rows(); ++r) {
    const double e = static_cast<double>(d.target(r)) - predict(root, d, r);
    se += e * e;
    ae += std::fabs(e);
    if (gross_threshold > 0.0 && std::fabs(e) > gross_threshold) ++s.gross;
    else se_rest += e * e;
  }
  const double n = std::max<double>(1.0, static_cast<double>(d.rows()));
  s.rmse = std::sqrt(se / n);
  s.mae = ae / n;
  s.rmse_without_gross = std::sqrt(se_rest / std::max<double>(1.0, n - static_cast<double>(s.gross)));
  return s;
}

TrainResult train(const Dataset& data, const GmtParams& p, ModelTreeEvaluator& eval, bool progress) {
  TrainResult r;
  r.fitness_kind = p.fitness.kind;
  Stopwatch sw;
  { auto s = r.timer.scope(prepare_phase(eval)); eval.prepare(data); }
  GmtEA ea(p, eval, data, r.timer);
  std::unique_ptr<Progress> bar;
  if (progress) bar = std::make_unique<Progress>("gmt " + data.name() + " [" + eval.name() + "]", p.iterations, "it");
  r.best = ea.run([&](int it, const Individual&) {
    if (bar) bar->set(it);
  });
  if (bar) bar->finish();
  r.summary = ea.summary();
  r.thresholds_centered = center_thresholds(r.best.root.get(), data);
  r.seconds = sw.seconds();
  return r;
}

std::vector<double> impute_missing(Dataset& d, const std::vector<double>* values) {
  std::vector<double> v(d.cols(), 0.0);
  if (values) {
    GPUDM_REQUIRE(values->size() == d.cols(), "gmt: imputation values for " + std::to_string(values->size()) +
                                                  " attributes, dataset '" + d.name() + "' has " + std::to_string(d.cols()));
    v = *values;
  }
  for (std::size_t c = 0; c < d.cols(); ++c) {
    float* col = d.column(c);
    if (!values) {
      double sum = 0.0;
      std::size_t n = 0;
      for (std::size_t r = 0; r < d.rows(); ++r)
        if (std::isfinite(col[r])) sum += col[r], ++n;
      v[c] = n ? sum / double(n) : 0.0;
    }
    for (std::size_t r = 0; r < d.rows(); ++r)
      if (!std::isfinite(col[r])) col[r] = static_cast<float>(v[c]);
  }
  return v;
}

std::vector<double> model_imputation(const nlohmann::json& j) {
  std::vector<double> v;
  if (j.contains("impute_missing")) v = j["impute_missing"].get<std::vector<double>>();
  return v;
}

nlohmann::ordered_json model_json(const Node* root, const Dataset& train, const nlohmann::ordered_json& info,
                                  const std::vector<double>& impute) {
  nlohmann::ordered_json j;
  j["format"] = kModelFormat;
  j["version"] = 1;
  j["dataset"] = train.name();
  auto names = nlohmann::ordered_json::array();
  for (const auto& a : train.attributes()) names.push_back(a.name);
  j["attributes"] = names;
  j["leaves"] = count_leaves(root);
  j["internal_nodes"] = count_internal(root);
  j["attributes_in_models"] = count_model_attributes(root);
  j["info"] = info;
  if (!impute.empty()) j["impute_missing"] = impute;
  j["tree"] = to_json(root, train);
  return j;
}

std::unique_ptr<Node> model_from_json(const nlohmann::json& j, const Dataset& d, const std::string& path) {
  GPUDM_REQUIRE(j.is_object() && j.value("format", "") == kModelFormat,
                path + ": not a gpudm GMT model (missing \"format\": \"gpudm-gmt-model\")");
  GPUDM_REQUIRE(j.value("version", 0) == 1, path + ": unsupported model version");
  GPUDM_REQUIRE(j.contains("attributes") && j["attributes"].is_array() && j.contains("tree"),
                path + ": a model needs \"attributes\" (the attribute names) and \"tree\"");
  const auto& names = j.at("attributes");
  for (const auto& n : names) GPUDM_REQUIRE(n.is_string(), path + ": attribute names must be strings, got " + n.dump());
  GPUDM_REQUIRE(names.size() == d.cols(), path + ": model has " + std::to_string(names.size()) + " attributes, dataset '" +
                                              d.name() + "' has " + std::to_string(d.cols()));
  for (std::size_t c = 0; c < d.cols(); ++c)
    GPUDM_REQUIRE(names[c].get<std::string>() == d.attribute(c).name,
                  path + ": attribute " + std::to_string(c) + " is '" + names[c].get<std::string>() + "' in the model, '" +
                      d.attribute(c).name + "' in dataset '" + d.name() + "'");
  return from_json(j.at("tree"), static_cast<int>(d.cols()), path);
}

void holdout_split(const Dataset& d, double test_fraction, std::uint64_t seed, Dataset* train, Dataset* test) {
  GPUDM_REQUIRE(test_fraction > 0 && test_fraction < 1, "gmt: test_fraction must be in (0, 1)");
  std::vector<std::size_t> idx(d.rows());
  std::iota(idx.begin(), idx.end(), std::size_t{0});
  Rng rng(seed ^ 0x5EEDF00Dull);
  for (std::size_t i = idx.size(); i > 1; --i) std::swap(idx[i - 1], idx[rng.below(i)]);
  const auto nt = static_cast<std::size_t>(std::llround(test_fraction * static_cast<double>(d.rows())));
  std::vector<std::size_t> te(idx.begin(), idx.begin() + static_cast<std::ptrdiff_t>(nt));
  std::vector<std::size_t> tr(idx.begin() + static_cast<std::ptrdiff_t>(nt), idx.end());
  std::sort(te.begin(), te.end());
  std::sort(tr.begin(), tr.end());
  *train = d.select(tr);
  *test = d.select(te);
  train->set_name(d.name() + "[train]");
  test->set_name(d.name() + "[test]");
}

}  // namespace gmt
}  // namespace gpudm
