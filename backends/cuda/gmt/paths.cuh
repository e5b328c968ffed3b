#pragma once
// The two evaluation paths of the CUDA GMT evaluator (evaluator.cu owns the stream, the dataset
// and the exact leaf solver; the paths own their work buffers).
#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <memory>
#include <thread>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "algorithms/core/comm.hpp"
#include "algorithms/core/phase_timer.hpp"
#include "algorithms/gmt/evaluator.hpp"
#include "backends/cuda/common/buffer.cuh"
#include "backends/cuda/common/dataset.cuh"
#include "backends/cuda/common/device.cuh"
#include "backends/cuda/common/event_timer.cuh"
#include "algorithms/core/host_workers.hpp"
#include "backends/cuda/gmt/batch.cuh"
#include "backends/cuda/gmt/launch.cuh"
#include "backends/cuda/gmt/leaf_solver.cuh"
#include "algorithms/gmt/flat_tree.hpp"
#include "algorithms/gmt/tree.hpp"

namespace gpudm::backend::cuda::gmt_cuda {

// Named device-clock phases on one stream. Marks recorded while the stream is being captured
// become event-record nodes of the graph (cudaEventRecordExternal), so a replayed graph reports
// its phases as direct launches do.
class PhaseMarks {
 public:
  void begin(const char* name, cudaStream_t s, bool capture);
  void end(cudaStream_t s, bool capture);
  // Adds every recorded phase to `timer` (device clock); waits for the last stop event.
  void flush(::gpudm::PhaseTimer& timer) const;
  void clear() { used_ = 0; }
  bool empty() const { return used_ == 0; }

 private:
  struct Mark {
    std::string name;
    Event start, stop;
  };
  void record(Event& e, cudaStream_t s, bool capture);
  std::vector<Mark> marks_;
  std::size_t used_ = 0;
  bool open_ = false;
};

// Device memory this evaluator may still take: what the device has free, capped by
// EvalOptions::device_memory_limit (bytes held in all, dataset included).
class MemoryGuard {
 public:
  void set_limit(double bytes) { limit_ = bytes; }
  // Throws gpudm::Unavailable "gmt/cuda: WHAT needs N bytes of device memory, M free" when
  // `more` bytes cannot be taken now; otherwise counts them as held.
  void take(std::size_t more, const std::string& what);
  void give(std::size_t bytes) { held_ = bytes > held_ ? 0 : held_ - bytes; }
  std::size_t held() const { return held_; }

 private:
  double limit_ = 0.0;
  std::size_t held_ = 0;
};

// This device's block of the rows for the fast path (FusedGroups, fused_types.cuh): the chunking of the
// whole data (chunk rows from its row count and the device's SM count: the same on every rank of a
// run and in one process, so the summation order is too), its groups [g0, g1) of G, chunks
// [chunk0, chunk0 + chunks) of chunks_all and rows [row0, row0 + rows). One process holds every
// group; rank r of a rows split the groups shard(G, r, ranks).
struct RowBlock {
  int chunk_rows = 0, chunks_all = 0, G = 1, g0 = 0, g1 = 1, chunk0 = 0, chunks = 0;
  long long row0 = 0, rows = 0;
  static RowBlock of(long long n, int sm_count, int rank, int ranks);
};

struct Context {
  cudaStream_t stream = nullptr;
  DatasetView data{};  // the rows this device holds (RowBlock: all of them in one process)
  const ::gpudm::Dataset* host = nullptr;  // the training set on the host (repairs, moved rows)
  const ::gpudm::gmt::EvalOptions* options = nullptr;
  LeafSolver* solver = nullptr;
  const DeviceProps* props = nullptr;
  MemoryGuard* memory = nullptr;
  ::gpudm::HostWorkers* pool = nullptr;  // the host steps' threads (the evaluator's pool)
  // A rows split over MPI ranks (nullptr or one rank: one process): the fast path's
  // ranks combine their groups' statistics, counts and the exact solver's rows through it.
  ::gpudm::Comm* comm = nullptr;
  RowBlock block;
  bool split() const { return comm != nullptr && comm->size() > 1; }
};

// Grows a buffer to at least n elements (1.5x headroom), through the memory guard; returns true
// when it was reallocated.
template <class T>
bool reserve(DeviceBuffer<T>& b, std::size_t n, MemoryGuard& mem, const char* what) {
  if (b.size() >= n && n > 0) return false;
  if (n == 0 && b.size() > 0) return false;
  const std::size_t want = std::max<std::size_t>(n + n / 2, 1);
  mem.give(b.bytes());
  b = DeviceBuffer<T>();
  mem.take(want * sizeof(T), what);
  b = DeviceBuffer<T>(want);
  return true;
}
// (keep: the elements at the front that a grown buffer keeps)
template <class T>
void reserve(PinnedBuffer<T>& b, std::size_t n, std::size_t keep = 0) {
  if (b.size() >= n) return;
  PinnedBuffer<T> g(n + n / 2 + 16);
  if (keep > 0) std::memcpy(g.data(), b.data(), std::min(keep, b.size()) * sizeof(T));
  b = std::move(g);
}

// The exact QR solve of one leaf of a compact tree on the device: its rows found by routing the
// tree (stable: row order), gathered as [1, x_a..., y], solved by the LeafSolver (the CPU's rank
// rule), the residual sum of squares summed in a fixed order. Writes the leaf's model (set_fit)
// and its SSE. The fast path's fallback for leaves its statistics cannot decide.
class ExactLeaf {
 public:
  explicit ExactLeaf(const Context& c) : c_(c) {}
  void solve(::gpudm::gmt::Tree& tree, int leaf_node, long long rows_expected);
  long long solved() const { return solved_; }

 private:
  Context c_;
  long long solved_ = 0;
  DeviceBuffer<unsigned char> nodes_;
  DeviceBuffer<int> rows_, n_sel_, attrs_;
  DeviceBuffer<double> mat_, coef_, sse_;
  DeviceBuffer<std::byte> temp_;
  PinnedBuffer<int> h_n_;
  PinnedBuffer<double> h_sse_;
  PinnedBuffer<double> h_mat_;  // a rows split's leaf rows (this rank's, then the stack)
};

// The exact solve of many leaves in one launch (exact_batch.cuh: one block per leaf, the CPU's
// rank rule, the residuals' SSE): one upload, one download, one synchronisation per call. Leaves
// wider than ExactBatchPolicy::kMaxCols values or larger than EvalOptions::exact_batch_max_rows
// rows go to `single` (ExactLeaf) one by one.
class ExactBatch {
 public:
  struct Leaf {
    ::gpudm::gmt::Tree* tree = nullptr;
    int node = -1;
    long long rows = 0;  // the statistics pass's count
  };
  ExactBatch(const Context& c, ExactLeaf& single) : c_(c), single_(single) {}
  void solve(const std::vector<Leaf>& leaves);
  long long batched() const { return batched_; }
  long long launches() const { return launches_; }

 private:
  void solve_group(const std::vector<Leaf>& leaves, std::size_t first, std::size_t last);
  Context c_;
  ExactLeaf& single_;
  long long batched_ = 0, launches_ = 0;
  PinnedBuffer<unsigned char> h_in_, h_out_;
  DeviceBuffer<unsigned char> d_in_, d_out_;
  DeviceBuffer<int> rows_;
  DeviceBuffer<double> mat_, orig_;  // (orig_: a rows split's gathered matrices as gathered, for the residuals)
  DeviceBuffer<unsigned> mask_;
  PinnedBuffer<double> h_mat_;
  PinnedBuffer<long long> h_found_;
};

// The paper's six procedures, one individual after the other (the compact tree flattened to the
// paper's 2i+1 / 2i+2 array first); repairs decided from the counts of the first redistribute.
class FaithfulPath {
 public:
  explicit FaithfulPath(const Context& c) : c_(c) {}
  void evaluate(const ::gpudm::gmt::EvalBatch& batch, ::gpudm::PhaseTimer& timer, ::gpudm::gmt::EvalCounters& counters);
  nlohmann::ordered_json describe() const;

 private:
  template <class T>
  void calc_models(const PackedBatch& b, const std::vector<int>& counts, std::vector<double>& coef, std::vector<int>& rank,
                   T* mat, const std::vector<long long>& mat_off);
  // Routes and sorts one flat tree: counts per leaf slot (host), rows sorted by leaf on the device.
  void route(const ::gpudm::gmt::FlatTree& flat, std::vector<int>& counts, PhaseMarks& marks);
  void evaluate_one(::gpudm::gmt::Tree& tree, std::uint64_t salt, const ::gpudm::gmt::RepairSpec& repair, PhaseMarks& marks,
                    ::gpudm::PhaseTimer& host, ::gpudm::gmt::EvalCounters& counters);

  Context c_;
  int blocks_ = 0, threads_ = 0;
  bool last_shared_tables_ = true;
  long long leaves_solved_ = 0, qr_calls_ = 0;
  ::gpudm::gmt::FlatTree flat_;
  PackedBatch batch_;
  PinnedBuffer<unsigned char> h_batch_;
  DeviceBuffer<unsigned char> d_batch_;
  DeviceBuffer<int> leaf_of_, sorted_leaf_, iota_, sorted_row_, counts_;
  DeviceBuffer<long long> leaf_begin_, mat_off_;
  DeviceBuffer<float> mat_f_;
  DeviceBuffer<double> mat_d_;
  DeviceBuffer<double> t_sse_, t_sae_;
  DeviceBuffer<unsigned long long> t_lo_, t_hi_, t_rnd_;
  DeviceBuffer<NodeAcc> scratch_;
  DeviceBuffer<NodeOut> out_;
  DeviceBuffer<std::byte> sort_temp_;
  PinnedBuffer<int> h_counts_, h_rows_;
  PinnedBuffer<long long> h_layout_;
  PinnedBuffer<NodeOut> h_out_;
  PinnedBuffer<double> h_coef_;
};

struct LeafOut;  // (fused_types.cuh)

// The fast path: a call's trees in one fused statistics pass, one graph, one upload, one download,
// one synchronisation. The evaluator's side is here and in fast.cu (lifecycle, the call, describe);
// fast_pack.cu packs the batch and sizes the buffers, fast_launch.cu holds the launch policy and
// the launches (the only unit with the kernels: fused_stats.cuh, fused_merge.cuh), fast_finish.cu
// the host finish of a tree, fast_split.cu a rows split's exchange, exact.cu the exact solvers.
class FastPath {
 public:
  explicit FastPath(const Context& c);
  ~FastPath();
  FastPath(const FastPath&) = delete;
  FastPath& operator=(const FastPath&) = delete;
  void evaluate(const ::gpudm::gmt::EvalBatch& batch, ::gpudm::PhaseTimer& timer, ::gpudm::gmt::EvalCounters& counters);
  nlohmann::ordered_json describe() const;

 private:
  struct Host;  // the packed batch's host arrays (fast_detail.cuh)
  void pack(const ::gpudm::gmt::EvalBatch& batch);
  bool ensure_capacity();
  void write_view();
  void launch_batch(PhaseMarks& direct);     // upload, graph (or direct launches), download: async
  int launch_wide_kv() const;                // the wide path's tile width in the variant launched (0: none)
  static std::vector<const void*> stats_kernels();  // every variant of fused_stats_kernel
  static int merge_blocks_per_sm();          // the merge kernel's resident blocks an SM (occupancy)
  // part: kAll (one process: the whole call's kernels), kPartA (a rows split's init, stats pass and
  // the merge's level 1), kPartB (the merge's level 2 and solve, the residual pass and its level 1).
  // Each part has its own graph slot: kAll and kPartA slot 0, kPartB slot 1.
  static constexpr int kAll = 0, kPartA = 1, kPartB = 2;
  static int slot_of(int part) { return part == kPartB ? 1 : 0; }
  void launch_all(PhaseMarks& marks, bool capture, int part = kAll);
  void capture_graph(int part = kAll);
  void run_part(int part, PhaseMarks& direct);  // the graph of `part` (captured when stale) or direct launches
  // A rows split's call on the device (its two parts, the ranks' combine between them and after
  // them): upload, part A, download, combine, upload, part B, download; leaves h_out_ as one
  // process's download would be.
  void launch_split(PhaseMarks& direct, ::gpudm::PhaseTimer& timer);
  void drop_graph(int slot);
  void drop_graphs(const std::string& why);  // graphs off for the rest of the run
  struct FinishCounts {
    std::int64_t repairs = 0, repaired_trees = 0;
    long long host_solves = 0, clean_mismatches = 0;
  };
  void attach_outputs();  // the Host's views into the downloaded buffer
  bool finish_tree(const ::gpudm::gmt::EvalBatch& batch, const Host& h, int t, std::vector<int>& exact, FinishCounts& cnt) const;

  Context c_;
  std::unique_ptr<Host> h_;
  int chunk_rows_ = 0, chunks_ = 0, wide_kv_ = 0;
  int stat_split_ = 0;        // FusedPolicy::kSplit*, from EvalOptions::fast_stat_split
  int merge_grid_max_ = 1;    // the merge kernel's most blocks (the blocks resident at once, or fast_merge_grid)
  bool chunk_major_ = false;  // the stats pass's grid chunk-fastest (EvalOptions::fast_stats_grid)
  std::vector<std::size_t> order_;  // a host step's trees, largest first (largest_first)
  bool in_flight_ = false;  // the call's work is queued on the stream (waited for if the call throws)
  // capacities the graph was captured for
  int cap_B_ = 0, cap_L_ = 0, cap_S_ = 0, cap_nl_ = 0, cap_ns_ = 0;
  int cap_kv_ = 0;  // widest summed model so far (values per row): picks the stats kernel's variant
  std::size_t smem_ = 0;
  bool smem_leaves_ = true;
  std::size_t in_bytes_ = 0, out_bytes_ = 0;
  PinnedBuffer<unsigned char> h_in_, h_out_;
  DeviceBuffer<unsigned char> d_in_, d_out_;
  DeviceBuffer<double> part_, work_;
  DeviceBuffer<int> part_n_, part_k_, work_i_;
  DeviceBuffer<double> part_shift_;  // the values at each partial's shift row (FusedView::part_shift)
  DeviceBuffer<double> grec_, gres_, grun_;  // the merge's group records, the residuals per (group, stat leaf), level 1's run sums (FusedView)
  long long runs_ = 0;                       // level 1's runs of this device's groups (FusedGroups::runs)
  // a rows split (Context::split): the group records and residual groups on the host, the combined
  // leaf results, the combine's counters
  bool split_ = false;
  PinnedBuffer<double> h_grec_, h_gres_;
  std::vector<LeafOut> comb_leaf_;
  std::vector<int> comb_nstray_, comb_strays_;
  long long combine_calls_ = 0;
  std::uint64_t combine_bytes_ = 0;
  double combine_s_ = 0.0;
  ExactLeaf exact_;
  ExactBatch exact_batch_;
  cudaGraphExec_t exec_[2] = {nullptr, nullptr};
  PhaseMarks marks_[2], direct_;
  bool graphs_on_ = false;
  std::string graph_note_;
  long long epoch_ = 0, graph_epoch_[2] = {-1, -1}, captures_ = 0;
  long long calls_ = 0, trees_ = 0, stat_leaves_ = 0, exact_leaves_ = 0, host_solves_ = 0, second_passes_ = 0,
            clean_mismatches_ = 0, resid_leaves_ = 0;
  double host_launch_s_ = 0.0, host_wait_s_ = 0.0, host_flush_s_ = 0.0;  // describe(): host time outside the phases
};

}  // namespace gpudm::backend::cuda::gmt_cuda
