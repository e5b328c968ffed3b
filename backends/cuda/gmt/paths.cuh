#pragma once
// The two evaluation paths of the CUDA GMT evaluator (evaluator.cu owns the stream, the dataset
// and the exact leaf solver; the paths own their work buffers).
#include <cuda_runtime_api.h>

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "algorithms/core/phase_timer.hpp"
#include "algorithms/gmt/evaluator.hpp"
#include "backends/cuda/common/buffer.cuh"
#include "backends/cuda/common/dataset.cuh"
#include "backends/cuda/common/device.cuh"
#include "backends/cuda/common/event_timer.cuh"
#include "backends/cuda/gmt/batch.cuh"
#include "backends/cuda/gmt/launch.cuh"
#include "backends/cuda/gmt/leaf_solver.cuh"

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

struct Context {
  cudaStream_t stream = nullptr;
  DatasetView data{};
  const ::gpudm::gmt::EvalOptions* options = nullptr;
  LeafSolver* solver = nullptr;
  const DeviceProps* props = nullptr;
  MemoryGuard* memory = nullptr;
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
template <class T>
void reserve(PinnedBuffer<T>& b, std::size_t n) {
  if (b.size() < n) b = PinnedBuffer<T>(n + n / 2 + 16);
}

// Turns the device's per-present-node results and the leaf models into EvalOutputs.
void assemble_outputs(const std::vector<const ::gpudm::gmt::FlatTree*>& trees, const PackedBatch& batch, const NodeOut* nodes,
                      const int* rank, const double* model_coef, std::vector<::gpudm::gmt::EvalOutput>& out,
                      std::size_t first_tree = 0);

// The paper's six procedures, one individual after the other.
class FaithfulPath {
 public:
  explicit FaithfulPath(const Context& c) : c_(c) {}
  void evaluate(const std::vector<const ::gpudm::gmt::FlatTree*>& trees, std::vector<::gpudm::gmt::EvalOutput>& out,
                ::gpudm::PhaseTimer& timer);
  nlohmann::ordered_json describe() const;

 private:
  template <class T>
  void calc_models(const PackedBatch& b, const std::vector<int>& counts, std::vector<double>& coef, std::vector<int>& rank,
                   T* mat, const std::vector<long long>& mat_off);
  void evaluate_one(const ::gpudm::gmt::FlatTree* tree, ::gpudm::gmt::EvalOutput& out, PhaseMarks& marks);

  Context c_;
  int blocks_ = 0, threads_ = 0;
  bool last_shared_tables_ = true;
  long long leaves_solved_ = 0, qr_calls_ = 0;
  PackedBatch batch_;
  PinnedBuffer<unsigned char> h_batch_;
  DeviceBuffer<unsigned char> d_batch_;
  DeviceBuffer<int> leaf_of_, sorted_leaf_, iota_, sorted_row_, counts_;
  DeviceBuffer<long long> leaf_begin_, mat_off_;
  DeviceBuffer<float> mat_f_;
  DeviceBuffer<double> mat_d_;
  DeviceBuffer<double> t_sse_, t_sae_;
  DeviceBuffer<unsigned long long> t_lo_, t_hi_;
  DeviceBuffer<NodeAcc> scratch_;
  DeviceBuffer<NodeOut> out_;
  DeviceBuffer<std::byte> sort_temp_;
  PinnedBuffer<int> h_counts_;
  PinnedBuffer<long long> h_layout_;
  PinnedBuffer<NodeOut> h_out_;
  PinnedBuffer<double> h_coef_;
};

// One launch sequence per generation.
class FastPath {
 public:
  explicit FastPath(const Context& c);
  ~FastPath();
  FastPath(const FastPath&) = delete;
  FastPath& operator=(const FastPath&) = delete;
  void evaluate(const std::vector<const ::gpudm::gmt::FlatTree*>& trees, std::vector<::gpudm::gmt::EvalOutput>& out,
                ::gpudm::PhaseTimer& timer);
  nlohmann::ordered_json describe() const;

 private:
  bool ensure_capacity();
  FastArgs args() const;
  void launch_a(PhaseMarks& marks, bool capture);
  void launch_b(PhaseMarks& marks, bool capture);
  void capture_graphs();
  void drop_graphs();
  void exact_solves(int n, PhaseMarks& marks);

  Context c_;
  FastLaunch plan_;
  PackedBatch batch_;
  PinnedBuffer<unsigned char> h_batch_;
  DeviceBuffer<unsigned char> d_batch_;
  DeviceBuffer<int> cnt_, total_, kth_sub_, kth_local_, seg_begin_, seg_leaf_, seg_idx_, list_, rank_, amb_, scalars_;
  DeviceBuffer<long long> list_begin_, rnd_;
  DeviceBuffer<double> gram_, psse_, psae_, exact_mat_;
  DeviceBuffer<unsigned long long> plo_, phi_;
  DeviceBuffer<NodeAcc> scratch_;
  DeviceBuffer<NodeOut> out_;
  PinnedBuffer<int> h_scalars_, h_rank_, h_amb_, h_total_;
  PinnedBuffer<long long> h_list_begin_;
  PinnedBuffer<NodeOut> h_out_;
  PinnedBuffer<double> h_coef_, h_exact_coef_;
  int tiles_max_ = 1;
  // CUDA graphs of the two launch sequences (before and after the exact solves).
  cudaGraphExec_t exec_a_ = nullptr, exec_b_ = nullptr;
  PhaseMarks marks_a_, marks_b_, direct_;
  bool graphs_on_ = false;
  long long captures_ = 0;
  std::string graph_note_;
  long long epoch_ = 0, graph_epoch_ = -1;
  long long generations_ = 0, exact_leaves_ = 0, refit_leaves_ = 0;
};

}  // namespace gpudm::backend::cuda::gmt_cuda
