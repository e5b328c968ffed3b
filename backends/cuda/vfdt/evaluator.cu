// CUDA streaming forest: owns the stream and the device state, launches the per-batch steps.
// Default path: compact node pool (kernels.cuh). Faithful path: the paper's layout
// (faithful.cuh). Both produce the sequential backend's trees for the same seed and batch.
#include <cmath>
#include <cstring>
#include <string>

#include "algorithms/vfdt/forest.hpp"
#include "backends/cuda/common/common.cuh"
#include "backends/cuda/vfdt/faithful.cuh"
#include "backends/cuda/vfdt/forest_cuda.hpp"
#include "backends/cuda/vfdt/kernels.cuh"
#include "backends/cuda/vfdt/persistent.cuh"

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
    GPUDM_REQUIRE(s.codes.size() == s.rows * s.attributes && s.labels.size() == s.rows,
                  "vfdt/cuda: the encoded stream's codes/labels do not match its rows x attributes");
    // Set last (before reset()): a prepare() that fails half way (out of device or pinned memory)
    // leaves an evaluator that says "before prepare()" instead of buffers of two streams.
    s_ = nullptr;
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
      split_total_ = DeviceBuffer<std::uint64_t>(T * N);
      split_class_term_ = DeviceBuffer<std::int64_t>(T * N);
      split_merit_ = DeviceBuffer<std::int64_t>(T * N * L_.features);
      slot_class_ = DeviceBuffer<std::uint32_t>(T * N * L_.classes);
      slot_seen_ = DeviceBuffer<std::uint32_t>(T * N);
      slot_other_ = DeviceBuffer<std::uint32_t>(T * N);

      slot_last_ = DeviceBuffer<std::uint32_t>(T * N);
      slot_key_ = DeviceBuffer<std::uint64_t>(T * N);
      slot_subset_ = DeviceBuffer<std::int16_t>(T * N * L_.features);
      counters_ = DeviceBuffer<std::uint32_t>(T * N * L_.counters_per_slot());
      adwins_ = DeviceBuffer<vfdt::Adwin>(T);
      leaf_ = DeviceBuffer<std::int32_t>(T * B);
      tree_pred_ = DeviceBuffer<std::uint8_t>(T * B);
      persistent_ = p.cuda_engine() == "persistent";
      if (p.stream_order() && !persistent_)
        throw Error("vfdt/cuda: batch_order \"stream\" runs on the persistent engine only (engine \"" + p.cuda_engine() +
                    "\" runs \"deferred\"); use engine \"persistent\" or batch_order \"deferred\"");
      if (p.stream_order() && p.naive_bayes())
        throw Error("vfdt/cuda: batch_order \"stream\" runs majority-class leaves only (its in-batch walk keeps majority "
                    "votes); leaf_prediction \"nb\" runs with batch_order \"deferred\" (or \"auto\")");
      if (p.stream_order() && p.batch > 32 * Policy::kStreamWindows)
        throw Error("vfdt/cuda: batch_order \"stream\" supports batch <= " + std::to_string(32 * Policy::kStreamWindows) +
                    " on the GPU, got " + std::to_string(p.batch) + "; use a smaller batch or batch_order \"deferred\"");
      if (p.adwin_kernel == "prefix") {
        // Running error count per tree and stream position (4 bytes x trees x rows): ADWIN's
        // bucket totals are differences of it (vfdt_math.hpp, AdwinPrefix).
        GPUDM_REQUIRE(s.rows < 0xffffffffull, "vfdt/cuda: the prefix ADWIN supports streams of < 2^32 instances");
        adwinp_ = DeviceBuffer<vfdt::AdwinPrefix>(T);
        hist_ = DeviceBuffer<std::uint32_t>(T * (s.rows + 1));
      }
      if (persistent_) {
        pred_all_ = DeviceBuffer<std::uint8_t>(T * s.rows);
        cycles_ = DeviceBuffer<unsigned long long>(T * vfdt_kernels::kPhCount);
      }
    }
    // whole-stream device buffers now, so no allocation falls inside a timed process()
    codes_ = DeviceBuffer<std::uint8_t>(s.rows * s.attributes);
    labels_ = DeviceBuffer<std::uint8_t>(s.rows);
    // The encoded stream staged once in pinned host memory, as a streaming system receives its
    // instances into pinned buffers: the timed uploads then run at the link's DMA rate instead of
    // through the driver's pageable staging (Covertype-shaped, 26 MB: ~4 ms pageable on the x2
    // H200 host, docs/perf-notes-vfdt.md). The copy here is outside every timed region, like
    // reading the file.
    h_codes_ = PinnedBuffer<std::uint8_t>(s.rows * s.attributes);
    h_labels_ = PinnedBuffer<std::uint8_t>(s.rows);
    if (!s.codes.empty()) std::memcpy(h_codes_.data(), s.codes.data(), s.codes.size());
    if (!s.labels.empty()) std::memcpy(h_labels_.data(), s.labels.data(), s.labels.size());
    s_ = &s;
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
      slot_other_.memset_async(0, stream_);  // kept zero between batches by the kernels themselves
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
      codes_.upload_async(h_codes_.data() + begin * d, n * d, stream_);
      labels_.upload_async(h_labels_.data() + begin, n, stream_);
    }
    if (!faithful_ && persistent_) {
      process_persistent(begin, n);
      return finish(predictions, n, 1.0);
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
        if (p_.adwin_kernel == "prefix")
          vfdt_kernels::k_adwin_prefix<Policy::kAdwinBlock><<<L_.trees, Policy::kAdwinBlock, 0, stream_>>>(
              f, labels, nb, static_cast<std::uint32_t>(begin + b0));
        else if (p_.adwin_kernel == "warp")
          vfdt_kernels::k_adwin_warp<<<L_.trees, 32, 0, stream_>>>(f, labels, nb);
        else
          vfdt_kernels::k_adwin<<<L_.trees, 32, 0, stream_>>>(f, labels, nb);
        GPUDM_CUDA_CHECK_LAUNCH();
      }
      {
        auto ph = dp.scope("split");
        vfdt_kernels::k_split<<<L_.trees, Policy::kSplitBlock, 0, stream_>>>(f);
        GPUDM_CUDA_CHECK_LAUNCH();
      }
    }
    finish(predictions, n, sampled ? static_cast<double>(batches) / static_cast<double>(sampled) : 1.0);
  }

  // Engine "persistent": one block per tree over the whole range, then one vote over it. The
  // kernel's time is split into the per-batch phases by the trees' SM cycle counts (mean shares).
  void process_persistent(std::size_t begin, std::size_t n) {
    const ForestView f = view();
    {
      auto ph = dp_.scope("persistent");
      vfdt_kernels::k_forest_persistent<Policy::kPersistentBlock><<<L_.trees, Policy::kPersistentBlock, 0, stream_>>>(
          f, codes_.data(), labels_.data(), n, static_cast<std::uint32_t>(begin), cycles_.data());
      GPUDM_CUDA_CHECK_LAUNCH();
    }
    {
      auto ph = dp_.scope("vote");
      vfdt_kernels::k_vote_stream<<<grid_for(n, Policy::kInstanceBlock), Policy::kInstanceBlock, 0, stream_>>>(
          f, n, static_cast<std::uint32_t>(begin), out_.data());
      GPUDM_CUDA_CHECK_LAUNCH();
    }
  }

  // Download the predictions, wait, and turn the recorded events into phases (per-batch phases
  // were timed on every kPhaseSample-th batch: scaled by `scale`).
  void finish(std::int32_t* predictions, std::size_t n, double scale) {
    {
      auto ph = dp_.scope("transfers_out");
      out_.download_async(predictions, n, stream_);
    }
    stream_.synchronize();
    PhaseTimer raw;
    dp_.flush(raw);
    static const char* kNames[vfdt_kernels::kPhCount] = {"traversal", "counters", "adwin", "split"};
    for (const auto& ph : raw.phases()) {
      if (ph.name == "persistent") {
        const auto cyc = cycles_.to_host();
        double share[vfdt_kernels::kPhCount] = {0, 0, 0, 0};
        for (int t = 0; t < L_.trees; ++t) {
          double tot = 0;
          for (int k = 0; k < vfdt_kernels::kPhCount; ++k) tot += static_cast<double>(cyc[t * vfdt_kernels::kPhCount + k]);
          for (int k = 0; k < vfdt_kernels::kPhCount; ++k)
            share[k] += tot > 0 ? static_cast<double>(cyc[t * vfdt_kernels::kPhCount + k]) / tot / L_.trees : 0.0;
        }
        for (int k = 0; k < vfdt_kernels::kPhCount; ++k) phases_.add(kNames[k], ph.seconds * share[k], PhaseClock::device);
        continue;
      }
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
    f.stream_order = p_.stream_order();
    f.naive_bayes = p_.naive_bayes();
    f.bound_total = p_.bound_total();
    f.reset_any = p_.reset_on_any_cut();
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
    f.slot_other = slot_other_.data();
    f.slot_last = slot_last_.data();
    f.slot_key = slot_key_.data();
    f.slot_subset = slot_subset_.data();
    f.counters = counters_.data();
    f.adwins = adwins_.data();
    f.adwinp = adwinp_.size() ? adwinp_.data() : nullptr;
    f.hist = hist_.size() ? hist_.data() : nullptr;
    f.hist_stride = s_->rows + 1;
    f.pred_all = pred_all_.size() ? pred_all_.data() : nullptr;
    f.pred_stride = s_->rows;
    f.leaf = leaf_.data();
    f.tree_pred = tree_pred_.data();
    f.decision = decision_.data();
    f.split_total = split_total_.data();
    f.split_class_term = split_class_term_.data();
    f.split_merit = split_merit_.data();
    return f;
  }

  static constexpr std::size_t kPhaseSample = 8;
  Stream stream_;  // declared before the buffers: their frees are ordered on it
  DevicePhases dp_{stream_};
  const vfdt::EncodedStream* s_ = nullptr;
  vfdt::ForestParams p_;
  vfdt::ForestLayout L_;
  bool faithful_ = false;
  bool persistent_ = false;
  vfdt_faithful::FaithfulForest faithful_state_;
  DeviceBuffer<std::int32_t> attr_values_, n_nodes_, n_slots_, drift_, node_attr_, node_child_, node_depth_, decision_, leaf_;
  DeviceBuffer<std::uint32_t> generation_, slot_class_, slot_seen_, slot_other_, slot_last_, counters_;
  DeviceBuffer<unsigned long long> splits_, resets_;
  DeviceBuffer<std::uint64_t> slot_key_, split_total_;
  DeviceBuffer<std::int64_t> split_class_term_, split_merit_;
  DeviceBuffer<std::int16_t> slot_subset_;
  DeviceBuffer<vfdt::Adwin> adwins_;
  DeviceBuffer<vfdt::AdwinPrefix> adwinp_;
  DeviceBuffer<std::uint32_t> hist_;
  DeviceBuffer<std::uint8_t> pred_all_;
  DeviceBuffer<unsigned long long> cycles_;
  DeviceBuffer<std::uint8_t> tree_pred_, codes_, labels_;
  PinnedBuffer<std::uint8_t> h_codes_, h_labels_;  // the encoded stream, staged in prepare()
  DeviceBuffer<std::int32_t> out_;
  PhaseTimer phases_;
};

}  // namespace

std::unique_ptr<vfdt::ForestBackend> make_vfdt_forest() { return std::make_unique<CudaForest>(); }

}  // namespace gpudm::backend::cuda
