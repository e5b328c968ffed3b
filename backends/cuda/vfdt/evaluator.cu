// CUDA streaming forest: owns the stream and the device state, launches the per-batch steps.
// Default path: compact node pool (kernels.cuh). Faithful path: the paper's layout
// (faithful.cuh). Both produce the sequential backend's trees for the same seed and batch.
#include <cmath>
#include <string>

#include "algorithms/vfdt/forest.hpp"
#include "backends/cuda/common/common.cuh"
#include "backends/cuda/vfdt/faithful.cuh"
#include "backends/cuda/vfdt/forest_cuda.hpp"
#include "backends/cuda/vfdt/kernels.cuh"

namespace gpudm::backend::cuda {

namespace {

using vfdt_kernels::ForestView;
using vfdt_kernels::Policy;

class CudaForest final : public vfdt::ForestBackend {
 public:
  std::string name() const override { return "cuda"; }

  void prepare(const vfdt::EncodedStream& s, const vfdt::ForestParams& p) override {
    p.validate(s);
    if (s.classes > Policy::kMaxClasses)
      throw Unavailable("vfdt/cuda: " + std::to_string(s.classes) + " classes; the vote kernel supports at most " +
                        std::to_string(Policy::kMaxClasses));
    require_device();
    s_ = &s;
    p_ = p;
    L_ = vfdt::ForestLayout::make(s, p);
    faithful_ = p.path == "faithful";
    const std::size_t T = L_.trees, N = L_.nodes, B = static_cast<std::size_t>(p.batch);
    std::vector<std::int32_t> values(s.attributes);
    for (int a = 0; a < s.attributes; ++a) values[a] = s.coding[a].values;
    attr_values_ = DeviceBuffer<std::int32_t>(values);
    if (faithful_) {
      faithful_state_.prepare(s, p, L_, stream_);
    } else {
      n_nodes_ = DeviceBuffer<std::int32_t>(T);
      n_slots_ = DeviceBuffer<std::int32_t>(T);
      generation_ = DeviceBuffer<std::uint32_t>(T);
      drift_ = DeviceBuffer<std::int32_t>(T);
      splits_ = DeviceBuffer<unsigned long long>(T);
      resets_ = DeviceBuffer<unsigned long long>(T);
      node_attr_ = DeviceBuffer<std::int32_t>(T * N);
      node_child_ = DeviceBuffer<std::int32_t>(T * N);
      node_depth_ = DeviceBuffer<std::int32_t>(T * N);
      decision_ = DeviceBuffer<std::int32_t>(T * N);
      slot_class_ = DeviceBuffer<std::uint32_t>(T * N * L_.classes);
      slot_seen_ = DeviceBuffer<std::uint32_t>(T * N);
      slot_last_ = DeviceBuffer<std::uint32_t>(T * N);
      slot_key_ = DeviceBuffer<std::uint64_t>(T * N);
      slot_subset_ = DeviceBuffer<std::int16_t>(T * N * L_.features);
      counters_ = DeviceBuffer<std::uint32_t>(T * N * L_.counters_per_slot());
      adwins_ = DeviceBuffer<vfdt::Adwin>(T);
      leaf_ = DeviceBuffer<std::int32_t>(T * B);
      tree_pred_ = DeviceBuffer<std::uint8_t>(T * B);
    }
    // whole-stream device buffers now, so no allocation falls inside a timed process()
    codes_ = DeviceBuffer<std::uint8_t>(s.rows * s.attributes);
    labels_ = DeviceBuffer<std::uint8_t>(s.rows);
    out_ = DeviceBuffer<std::int32_t>(s.rows);
    reset();  // also loads the module and warms the context before any timed call
  }

  void reset() override {
    GPUDM_REQUIRE(s_ != nullptr, "vfdt/cuda: reset() before prepare()");
    if (faithful_) {
      faithful_state_.reset(stream_);
    } else {
      vfdt_kernels::k_init<<<L_.trees, Policy::kSplitBlock, 0, stream_>>>(view());
      GPUDM_CUDA_CHECK_LAUNCH();
    }
    stream_.synchronize();
    phases_.clear();
  }

  void process(std::size_t begin, std::size_t end, std::int32_t* predictions) override {
    GPUDM_REQUIRE(s_ != nullptr, "vfdt/cuda: process() before prepare()");
    GPUDM_REQUIRE(begin <= end && end <= s_->rows, "vfdt: process range past the end of the stream");
    const std::size_t n = end - begin, d = static_cast<std::size_t>(s_->attributes);
    if (n == 0) return;
    // Phase events on every kPhaseSample-th batch only (scaled up at the end): events on every
    // batch would cost more host time than a single tree's kernels take.
    DevicePhases& dp = dp_;
    DevicePhases off(stream_, false);
    std::size_t sampled = 0, batches = 0;
    {
      auto ph = dp.scope("transfers");
      codes_.upload_async(s_->codes.data() + begin * d, n * d, stream_);
      labels_.upload_async(s_->labels.data() + begin, n, stream_);
    }
    const std::size_t B = static_cast<std::size_t>(p_.batch);
    for (std::size_t b0 = 0; b0 < n; b0 += B) {
      const int nb = static_cast<int>(std::min(B, n - b0));
      const bool sample = batches++ % kPhaseSample == 0;
      sampled += sample;
      DevicePhases& dp = sample ? dp_ : off;
      const std::uint8_t* codes = codes_.data() + b0 * d;
      const std::uint8_t* labels = labels_.data() + b0;
      if (faithful_) {
        faithful_state_.batch(dp, codes, labels, nb, begin + b0, out_.data() + b0, stream_);
        continue;
      }
      const ForestView f = view();
      const dim3 grid(grid_for(nb, Policy::kInstanceBlock), L_.trees);
      {
        auto ph = dp.scope("traversal");
        vfdt_kernels::k_predict<<<grid, Policy::kInstanceBlock, 0, stream_>>>(f, codes, nb);
        GPUDM_CUDA_CHECK_LAUNCH();
      }
      {
        auto ph = dp.scope("vote");
        vfdt_kernels::k_vote<<<grid_for(nb, Policy::kInstanceBlock), Policy::kInstanceBlock, 0, stream_>>>(
            f, nb, out_.data() + b0);
        GPUDM_CUDA_CHECK_LAUNCH();
      }
      {
        auto ph = dp.scope("counters");
        vfdt_kernels::k_learn<<<grid, Policy::kInstanceBlock, 0, stream_>>>(f, codes, labels, nb, begin + b0);
        GPUDM_CUDA_CHECK_LAUNCH();
      }
      if (p_.adwin) {
        auto ph = dp.scope("adwin");
        if (p_.adwin_kernel == "warp") vfdt_kernels::k_adwin_warp<<<L_.trees, 32, 0, stream_>>>(f, labels, nb);
        else vfdt_kernels::k_adwin<<<L_.trees, 32, 0, stream_>>>(f, labels, nb);
        GPUDM_CUDA_CHECK_LAUNCH();
      }
      {
        auto ph = dp.scope("split");
        vfdt_kernels::k_split<<<L_.trees, Policy::kSplitBlock, 0, stream_>>>(f);
        GPUDM_CUDA_CHECK_LAUNCH();
      }
    }
    {
      auto ph = dp.scope("transfers_out");
      out_.download_async(predictions, n, stream_);
    }
    stream_.synchronize();
    PhaseTimer raw;
    dp.flush(raw);
    const double scale = sampled ? static_cast<double>(batches) / static_cast<double>(sampled) : 1.0;
    for (const auto& ph : raw.phases()) {
      const bool per_batch = ph.name != "transfers" && ph.name != "transfers_out";
      phases_.add(ph.name == "transfers_out" ? "transfers" : ph.name, per_batch ? ph.seconds * scale : ph.seconds,
                  PhaseClock::device);
    }
  }

  vfdt::ForestSnapshot snapshot() override {
    if (faithful_) return faithful_state_.snapshot(L_, stream_);
    stream_.synchronize();
    vfdt::ForestSnapshot s;
    s.layout = L_;
    s.n_nodes = n_nodes_.to_host();
    s.generation = generation_.to_host();
    s.node_attr = node_attr_.to_host();
    s.node_child = node_child_.to_host();
    s.node_depth = node_depth_.to_host();
    s.slot_class = slot_class_.to_host();
    s.attr_values = attr_values_.to_host();
    for (auto v : splits_.to_host()) s.splits += static_cast<long long>(v);
    for (auto v : resets_.to_host()) s.resets += static_cast<long long>(v);
    return s;
  }

  const PhaseTimer& phases() const override { return phases_; }

 private:
  ForestView view() {
    ForestView f{};
    f.trees = L_.trees;
    f.nodes = L_.nodes;
    f.attributes = L_.attributes;
    f.classes = L_.classes;
    f.values = L_.values;
    f.features = L_.features;
    f.batch = p_.batch;
    f.grace = p_.grace;
    f.max_depth = p_.max_depth;
    f.bagging = p_.bagging;
    f.adwin = p_.adwin;
    const double r = std::log2(static_cast<double>(L_.classes));
    f.hb_numer = r * r * std::log(1.0 / p_.delta);
    f.tau = p_.tau;
    f.adwin_delta = p_.adwin_delta;
    f.seed = p_.seed;
    f.attr_values = attr_values_.data();
    f.n_nodes = n_nodes_.data();
    f.n_slots = n_slots_.data();
    f.generation = generation_.data();
    f.drift = drift_.data();
    f.splits = splits_.data();
    f.resets = resets_.data();
    f.node_attr = node_attr_.data();
    f.node_child = node_child_.data();
    f.node_depth = node_depth_.data();
    f.slot_class = slot_class_.data();
    f.slot_seen = slot_seen_.data();
    f.slot_last = slot_last_.data();
    f.slot_key = slot_key_.data();
    f.slot_subset = slot_subset_.data();
    f.counters = counters_.data();
    f.adwins = adwins_.data();
    f.leaf = leaf_.data();
    f.tree_pred = tree_pred_.data();
    f.decision = decision_.data();
    return f;
  }

  static constexpr std::size_t kPhaseSample = 8;
  Stream stream_;  // declared before the buffers: their frees are ordered on it
  DevicePhases dp_{stream_};
  const vfdt::EncodedStream* s_ = nullptr;
  vfdt::ForestParams p_;
  vfdt::ForestLayout L_;
  bool faithful_ = false;
  vfdt_faithful::FaithfulForest faithful_state_;
  DeviceBuffer<std::int32_t> attr_values_, n_nodes_, n_slots_, drift_, node_attr_, node_child_, node_depth_, decision_, leaf_;
  DeviceBuffer<std::uint32_t> generation_, slot_class_, slot_seen_, slot_last_, counters_;
  DeviceBuffer<unsigned long long> splits_, resets_;
  DeviceBuffer<std::uint64_t> slot_key_;
  DeviceBuffer<std::int16_t> slot_subset_;
  DeviceBuffer<vfdt::Adwin> adwins_;
  DeviceBuffer<std::uint8_t> tree_pred_, codes_, labels_;
  DeviceBuffer<std::int32_t> out_;
  PhaseTimer phases_;
};

}  // namespace

std::unique_ptr<vfdt::ForestBackend> make_vfdt_forest() { return std::make_unique<CudaForest>(); }

}  // namespace gpudm::backend::cuda
