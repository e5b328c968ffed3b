#include "algorithms/gmt/params.hpp"
#include "algorithms/core/replay_params.hpp"

#include <vector>

namespace gpudm::gmt {

const ParamTable<GmtCase>& params_table() {
  static const ParamTable<GmtCase> t = [] {
    using C = GmtCase;
    using E = EvalOptions;
    ParamTable<C> t("gmt");
    // A member of the EA's params / of the evaluators' options.
    auto ea = [](auto GmtParams::*m) { return [m](C& c) -> auto& { return c.ea.*m; }; };
    auto ev = [](auto E::*m) { return [m](C& c) -> auto& { return c.eval.*m; }; };
    auto positive_weight = [&](const char* name, double GmtParams::*m, const char* doc) {
      t.add<double>(name, ea(m), doc).at_least(0);
    };

    // ---- the EA (Sec. 3) ----
    t.add<int>("population", ea(&GmtParams::population), "individuals (paper: 64)").range(2, 1 << 24);
    t.add<int>("iterations", ea(&GmtParams::iterations), "maximum generations (paper: 10,000)").at_least(0);
    t.add<int>("stall_iterations", ea(&GmtParams::stall_iterations),
               "stop after this many generations without improvement of the best (0 = off)")
        .at_least(0);
    t.add<double>("max_seconds", ea(&GmtParams::max_seconds),
                  "stop the loop after this many seconds of wall time (0 = off; the stop is reported as stop_reason "
                  "\"time\")")
        .at_least(0);
    t.add<double>("crossover", ea(&GmtParams::crossover), "crossover probability per individual (paper: 0.2)").range(0, 1);
    t.add<double>("mutation", ea(&GmtParams::mutation), "mutation probability per individual (paper: 0.8)").range(0, 1);
    t.add<int>("elitism", ea(&GmtParams::elitism), "best individuals copied unchanged (paper: 1)").at_least(0);
    t.add<double>("ranking_pressure", ea(&GmtParams::ranking_pressure),
                  "linear ranking: expected copies of the best, in [1, 2]")
        .range(1, 2);
    t.add_enum<FitnessChoice>("fitness", &C::fitness,
                              {{"bic", FitnessChoice::bic}, {"weighted", FitnessChoice::weighted}, {"auto", FitnessChoice::by_rows}},
                              "bic | weighted | auto (BIC below 1M training rows, weighted Eq. (2) above; both minimised)");
    t.add_enum<BicK>("bic_k", [](C& c) -> BicK& { return c.ea.fitness.bic_k; },
                     {{"2(Q+W)", BicK::two_q_plus_w},
                      {"Q+W", BicK::q_plus_w},
                      {"W+3Q-2", BicK::w_plus_3q_minus_2},
                      {"I+W", BicK::internal_plus_w}},
                     "BIC complexity k(T): 2(Q+W) | Q+W | W+3Q-2 | I+W (Q leaves, W model attributes, I internal nodes)");
    t.add<double>("alpha", [](C& c) -> double& { return c.ea.fitness.alpha; },
                  "weight of k(T) = I + W in the weighted fitness Eq. (2)")
        .at_least(0);
    t.add<double>("init_sample_fraction", ea(&GmtParams::init_sample_fraction),
                  "initial trees grow on this fraction of the training rows")
        .range(0, 1);
    t.add<int>("init_sample_max", ea(&GmtParams::init_sample_max), "... at most this many rows").at_least(1);
    t.add<int>("init_sample_min", ea(&GmtParams::init_sample_min), "... at least this many rows").at_least(1);
    t.add<int>("init_max_depth", ea(&GmtParams::init_max_depth), "levels of an initial tree").range(1, 20);
    t.add<double>("init_model_attrs", ea(&GmtParams::init_model_attrs), "expected attributes in an initial leaf model")
        .at_least(0);
    t.add<int>("max_depth", ea(&GmtParams::max_depth), "maximum tree levels (flat array of 2^levels - 1 nodes)").range(1, 20);
    t.add<int>("min_leaf_rows", ea(&GmtParams::min_leaf_rows),
               "a node with fewer training rows is pruned away after evaluation (0 = allow empty leaves)")
        .at_least(0);
    t.add_enum<RepairMode>("repair", ea(&GmtParams::repair),
                           {{"promote", RepairMode::promote}, {"collapse", RepairMode::collapse}},
                           "node with a child under min_leaf_rows rows: promote (replaced by its populated child's "
                           "subtree) | collapse (becomes a leaf)");
    t.add_enum<ShiftTarget>("shift_target", ea(&GmtParams::shift_target),
                            {{"node_row", ShiftTarget::node_row}, {"dipole", ShiftTarget::dipole}},
                            "'shift threshold' moves the threshold a uniform fraction of the way to x[attr] of: node_row "
                            "(a uniform row of the node) | dipole (random, lowest- or highest-target row)");
    positive_weight("mut_new_test", &GmtParams::mut_new_test, "weight of the 'new dipolar test' mutation (internal nodes)");
    positive_weight("mut_shift_threshold", &GmtParams::mut_shift_threshold, "weight of 'shift threshold' (internal nodes)");
    positive_weight("mut_swap_test", &GmtParams::mut_swap_test,
                    "weight of 'swap the test with a random internal descendant's' (internal nodes)");
    positive_weight("mut_prune", &GmtParams::mut_prune, "weight of 'prune to a leaf' (internal nodes)");
    positive_weight("mut_change_model", &GmtParams::mut_change_model,
                    "weight of 'change model: add/remove/replace an attribute' (leaves)");
    positive_weight("mut_expand", &GmtParams::mut_expand, "weight of 'expand: leaf -> test + two leaves' (leaves)");
    positive_weight("cx_subtrees", &GmtParams::cx_subtrees, "weight of crossover 'exchange subtrees'");
    positive_weight("cx_tests", &GmtParams::cx_tests, "weight of crossover 'exchange tests'");
    positive_weight("cx_branches", &GmtParams::cx_branches, "weight of crossover 'exchange branches'");
    positive_weight("cx_asymmetric", &GmtParams::cx_asymmetric,
                    "weight of the asymmetric crossover (lower-error subtree copied over the higher-error one)");

    // ---- the evaluators (evaluator.hpp) ----
    t.add<int>("threads", ev(&E::threads), "OpenMP threads (0 = OpenMP default); ignored by other backends")
        .range(0, 4096)
        .backend_only();
    t.add_enum<E::OmpMode>(
         "omp_mode", ev(&E::omp_mode),
         {{"rows", E::OmpMode::kRows}, {"individuals", E::OmpMode::kIndividuals}, {"auto", E::OmpMode::kAuto}},
         "OpenMP backend: rows (row chunks of one individual over threads, the paper's OpenMP GMT) | individuals (the "
         "generation's individuals over threads) | auto (individuals when the data has fewer row chunks than threads); "
         "same results in every mode")
        .backend_only();
    t.add_enum<E::RankSplit>(
         "rank_split", ev(&E::rank_split),
         {{"auto", E::RankSplit::kAuto}, {"rows", E::RankSplit::kRows}, {"individuals", E::RankSplit::kIndividuals}},
         "MPI runs: rows (each rank a block of whole row chunks; sequential and OpenMP: leaf counts, R factors and error "
         "partials combined; CUDA fast path: each GPU a block of whole merge groups, the groups' statistics combined) | "
         "individuals (each rank a block of every generation's trees on all rows) | auto (rows on the CPU backends when the "
         "data has a row chunk a rank, else individuals); each split gives the same results at any rank count")
        .backend_only();
    t.add<int>("chunk_rows", ev(&E::chunk_rows),
               "rows per fixed chunk of the data-parallel passes (results do not depend on threads)")
        .at_least(1);
    t.add<int>("qr_block_rows", ev(&E::qr_block_rows), "rows per TSQR block of a leaf's least squares").at_least(1);
    t.add<double>("rank_tol", ev(&E::rank_tol),
                  "rank rule: drop a model column whose remaining norm <= rank_tol x its norm")
        .at_least(0);
    t.add<double>("rows_per_param", ev(&E::rows_per_param),
                  "the leaf rule: a leaf of n rows keeps fewer than n / rows_per_param model parameters, the intercept "
                  "included (1 = the GMT papers' rule, more rows than parameters; 0 = off: as many parameters as rows)")
        .at_least(0);
    t.add_enum<E::GpuPath>("gpu_path", ev(&E::gpu_path), {{"fast", E::GpuPath::kFast}, {"faithful", E::GpuPath::kFaithful}},
                           "CUDA backend: fast (a generation's trees in one fused statistics pass: FP64 sufficient statistics, batched solves, one graph and one sync per generation) | "
                           "faithful (the paper's six procedures per individual: CUB sort, cuSOLVER geqrf/ormqr + cuBLAS "
                           "trsm per leaf)")
        .backend_only();
    t.add_enum<E::GpuPrecision>("precision", ev(&E::gpu_precision),
                                {{"double", E::GpuPrecision::kDouble}, {"float", E::GpuPrecision::kFloat}},
                                "CUDA faithful path: least squares in double (as the CPU backends) | float (the paper)")
        .backend_only();
    t.add<int>("gpu_blocks", ev(&E::gpu_blocks),
               "CUDA faithful path: blocks of the data-parallel kernels (0 = the paper's Sec. 5.3 setting by rows)")
        .at_least(0)
        .backend_only();
    t.add<int>("gpu_threads", ev(&E::gpu_threads),
               "CUDA faithful path: threads per block (0 = the paper's Sec. 5.3 setting by rows)")
        .range(0, 1024)
        .backend_only();
    t.add<double>("fast_pivot_guard", ev(&E::fast_pivot_guard),
                  "CUDA fast path: a pivot <= this x its column's centred norm^2 sends the leaf to the exact QR solver")
        .range(0, 1)
        .backend_only();
    t.add<bool>("cuda_graphs", ev(&E::cuda_graphs), "CUDA fast path: replay each generation's kernels as one CUDA graph")
        .backend_only();
    t.add_enum<E::StatSplit>("fast_stat_split", ev(&E::fast_stat_split),
                             {{"auto", E::StatSplit::kAuto}, {"warps", E::StatSplit::kWarps}, {"leaf", E::StatSplit::kLeaf}},
                             "CUDA fast path: how the statistics pass shares a leaf's rows of a chunk among a block's warps: "
                             "auto (a run per warp for a leaf of >= 128 rows in the chunk, else one warp) | warps | leaf; each "
                             "sums in its own fixed order (trees within the stated tolerance of each other)")
        .backend_only();
    t.add_enum<E::StatsGrid>("fast_stats_grid", ev(&E::fast_stats_grid),
                             {{"auto", E::StatsGrid::kAuto}, {"chunk", E::StatsGrid::kChunk}, {"tree", E::StatsGrid::kTree}},
                             "CUDA fast path: the statistics pass's grid chunk-fastest | tree-fastest | auto (chunk-fastest "
                             "when the training data fits in half the L2); the same bits either way")
        .backend_only();
    t.add<int>("fast_merge_grid", ev(&E::fast_merge_grid),
               "CUDA fast path: the merge kernel's most blocks, each looping over the stat leaves (0 = the blocks resident "
               "at once); the same bits for any grid")
        .range(0, 1 << 20)
        .backend_only();
    t.add<int>("host_threads", ev(&E::host_threads),
               "CUDA backend: host threads of the evaluator's pool, the caller's included (0 = min(16, hardware threads)); "
               "results do not depend on it")
        .range(0, 64)
        .backend_only();
    t.add<int>("host_spin_us", ev(&E::host_spin_us),
               "CUDA backend: microseconds an idle pool worker polls for the next step before it sleeps (0 = sleep at once)")
        .range(0, 100000)
        .backend_only();
    t.add<double>("device_memory_limit", ev(&E::device_memory_limit),
                  "CUDA backend: usable device memory in bytes (0 = all free memory)")
        .range(0, 9007199254740992.0)  // 2^53: every value exact, its conversion to an integer defined
        .backend_only();

    // ---- the family's runs: recorded batches, replay, estimates, hold-out ----
    add_replay_params(t, &C::batch_sample_every, &C::batch_sample_file, &C::replay_from,
                      {.every = "batch_sample_every",
                       .file = "batch_sample_file",
                       .recorded = "every k-th generation's batch of modified individuals (compact trees) and the run's totals",
                       .for_backend = "a slower backend",
                       .file_fields = "{experiment}, {dataset} (with its options), {seed}",
                       .replay = "estimate instead of running the EA: replay batches",
                       .check = "",
                       .time_model = "the recorded host EA time + the run's evaluations per generation x this backend's "
                                     "seconds per evaluation, interpolated between the sampled generations"});
    t.add("replay_max_evaluations", &C::replay_max_evaluations,
          "replay_from: at most this many recorded individuals (whole batches spread over the run; 0 = every recorded "
          "batch: with batch_sample_every <= iterations / 100, at least 1 % of the generations)")
        .at_least(0);
    t.add("replay_batch_trees", &C::replay_batch_trees,
          "replay_from: recorded batches are replayed in pieces of at most this many trees, so a slow backend's time "
          "cap can stop inside a batch (0 = whole batches, as the run evaluated them: pieces of 16 overstated OpenMP "
          "16's time by 64-81 %, results/h200/estimator_check.md)")
        .at_least(0);
    t.add("replay_max_seconds", &C::replay_max_seconds,
          "replay_from: stop adding batches once the first replay has taken this long (at least one batch; 0 = no cap)")
        .at_least(0);
    t.add("estimate_above_rows", &C::estimate_above_rows,
          "training sets with more rows run estimate_iterations iterations, timed and scaled to iterations (flagged "
          "estimated, as the paper's footnote a; 0 = off)")
        .at_least(0);
    t.add("estimate_iterations", &C::estimate_iterations, "iterations run on sets above estimate_above_rows").at_least(1);
    t.add("test_fraction", &C::test_fraction,
          "hold out this fraction of the rows (seeded shuffle) for test RMSE/MAE (0 = train on all)")
        .range(0, 1);
    t.add("clamp_margin", &C::clamp_margin,
          "bounded predictions (Cubist's): a leaf's prediction is clamped to its training targets' range widened by "
          "clamp_margin x that range on each side, then to the training range widened alike; stored in the model file, "
          "applied to test and --predict predictions, never in the fitness (< 0 = off)")
        .range(-1, 1000);
    t.add("smoothing", &C::smoothing,
          "M5's smoothing constant k: a leaf's prediction blended, node by node up to the root, with least-squares "
          "models of the internal nodes' training rows, p = (n p + k M) / (n + k); the smoothed leaf models are "
          "the model file's; applied to test and --predict predictions, never in the fitness (0 = off; 15 is M5's constant)")
        .range(0, 1e6);
    t.add("extrapolate_iterations", &C::extrapolate_iterations,
          "when > iterations: timing is scaled to this many iterations and flagged estimated")
        .at_least(0);
    return t;
  }();
  return t;
}

FitnessKind resolve_fitness(FitnessChoice c, std::size_t rows) {
  switch (c) {
    case FitnessChoice::bic: return FitnessKind::bic;
    case FitnessChoice::weighted: return FitnessKind::weighted;
    case FitnessChoice::by_rows: break;
  }
  return rows < kWeightedFitnessRows ? FitnessKind::bic : FitnessKind::weighted;
}

GmtCase read_case(const nlohmann::json& params) {
  GmtCase c = params_table().read(params);
  const GmtParams& p = c.ea;
  GPUDM_REQUIRE(p.mut_new_test + p.mut_shift_threshold + p.mut_swap_test + p.mut_prune > 0 && p.mut_change_model + p.mut_expand > 0 &&
                    p.cx_subtrees + p.cx_tests + p.cx_branches + p.cx_asymmetric > 0,
                "gmt: every group of operator weights (mut_* internal, mut_* leaf, cx_*) needs a positive sum");
  GPUDM_REQUIRE(c.eval.fast_pivot_guard < 1, "gmt: params.fast_pivot_guard must be in [0, 1)");
  return c;
}

GmtParams ea_params(const GmtCase& c, std::size_t rows) {
  GmtParams p = c.ea;
  p.fitness.kind = resolve_fitness(c.fitness, rows);
  return p;
}

}  // namespace gpudm::gmt
