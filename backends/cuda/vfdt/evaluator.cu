// CUDA streaming forest: owns the stream, the device state of both paths and the staged encoded
// stream; process() runs the per-batch steps through the launchers (launch.cuh). Path default:
// compact node pool, persistent or batched engine (kernels.cuh, persistent.cuh). Path faithful:
// the paper's layout (faithful.cuh). Both produce the sequential backend's trees for the same
// seed and batch.
#include <cmath>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "backends/cuda/common/common.cuh"
#include "backends/cuda/vfdt/launch.cuh"
#include "backends/cuda/vfdt/policy.cuh"
#include "backends/vfdt.hpp"

namespace gpudm::backend::cuda {

namespace {

namespace k = vfdt_kernels;
using vfdt::AdwinKernel;
using vfdt::Engine;
using vfdt::ForestPath;

// R^2 ln(1/delta) of the Hoeffding bound (host math, passed to the kernels as the CPU engine's).
double hb_numer(int classes, double delta) {
  const double r = std::log2(static_cast<double>(classes));
  return r * r * std::log(1.0 / delta);
}

// The scalar fields both paths' views share (the rest is each layout's own).
template <class View>
void fill_shared(View& v, const vfdt::ForestParams& p, const vfdt::ForestLayout& L) {
  v.trees = L.trees;
  v.attributes = L.attributes;
  v.classes = L.classes;
  v.features = L.features;
  v.batch = p.batch;
  v.grace = p.grace;
  v.bagging = p.bagging;
  v.hb_numer = hb_numer(L.classes, p.delta);
  v.tau = p.tau;
  v.seed = p.seed;
  v.first_tree = p.first_tree;
}

// Where a run of instances' votes go: the forest's majority (process) or, for a forest split over
// ranks, its trees' votes per class (process_votes); pointers at the run's first instance.
struct VoteOut {
  std::int32_t* majority = nullptr;
  std::uint32_t* tally = nullptr;
  int classes = 0;
  VoteOut at(std::size_t j) const {
    return VoteOut{majority ? majority + j : nullptr, tally ? tally + j * static_cast<std::size_t>(classes) : nullptr, classes};
  }
};

void launch_votes(const k::VoteView& v, std::size_t n, const VoteOut& out, cudaStream_t stream) {
  if (out.tally != nullptr) k::launch_tally(v, n, out.tally, stream);
  else k::launch_vote(v, n, out.majority, stream);
}

// Device state of the faithful path (the paper's layout, vfdt_kernels::FaithfulView).
class FaithfulState {
 public:
  void prepare(const vfdt::ForestParams& p, const vfdt::ForestLayout& L) {
    p_ = p;
    L_ = L;
    const std::size_t T = L.trees;
    array_nodes_ = (1 << (p.max_depth + 1)) - 1;
    max_leaves_ = 1 << p.max_depth;
    const std::size_t ML = T * max_leaves_;
    tree_ = DeviceBuffer<std::uint32_t>(T * array_nodes_);
    n_leaves_ = DeviceBuffer<std::int32_t>(T);
    generation_ = DeviceBuffer<std::uint32_t>(T);
    drift_ = DeviceBuffer<std::int32_t>(T);
    splits_ = DeviceBuffer<unsigned long long>(T);
    resets_ = DeviceBuffer<unsigned long long>(T);
    leaf_class_ = DeviceBuffer<std::uint8_t>(ML);
    leaf_back_ = DeviceBuffer<std::int32_t>(ML);
    leaf_counts_ = DeviceBuffer<std::uint32_t>(ML * L.classes);
    leaf_seen_ = DeviceBuffer<std::uint32_t>(ML);
    leaf_last_ = DeviceBuffer<std::uint32_t>(ML);
    leaf_key_ = DeviceBuffer<std::uint64_t>(ML);
    counters_ = DeviceBuffer<std::uint32_t>(ML * std::size_t(2 + L.classes) * 2 * L.attributes);
    decision_ = DeviceBuffer<std::uint32_t>(ML);
    leaf_of_ = DeviceBuffer<std::int32_t>(T * p.batch);
    weight_ = DeviceBuffer<std::uint8_t>(T * p.batch);
    tree_pred_ = DeviceBuffer<std::uint8_t>(T * p.batch);
    adwins_ = DeviceBuffer<vfdt::Adwin>(T);
  }

  void reset(cudaStream_t stream) {
    tree_.memset_async(0, stream);
    k::launch_faithful_init(view(), stream);
  }

  void batch(DevicePhases& dp, const std::uint8_t* codes, const std::uint8_t* labels, int nb, std::uint64_t first,
             const VoteOut& out, cudaStream_t stream) {
    const k::FaithfulView v = view();
    {
      auto ph = dp.scope("traversal");
      k::launch_faithful_traverse(v, codes, nb, first, stream);
    }
    {
      auto ph = dp.scope("vote");
      launch_votes(k::VoteView{L_.trees, L_.classes, static_cast<std::size_t>(p_.batch), tree_pred_.data()}, nb, out,
                   stream);
    }
    {
      auto ph = dp.scope("counters");
      k::launch_faithful_count(v, codes, labels, nb, stream);
    }
    if (p_.adwin) {
      auto ph = dp.scope("adwin");
      const k::AdwinView a{L_.trees, p_.batch, p_.adwin_delta, p_.reset_on_any_cut(), tree_pred_.data(), adwins_.data(),
                           drift_.data()};
      k::launch_adwin(a, p_.adwin_kernel, labels, nb, stream);  // prefix (the default) runs warp here
    }
    {
      auto ph = dp.scope("gain");
      k::launch_faithful_gain(v, stream);
    }
    {
      auto ph = dp.scope("split");
      k::launch_faithful_apply(v, stream);
    }
  }

  // The array layout converted to the pool form of ForestSnapshot (breadth-first numbering,
  // children contiguous); leaf slots are the leaf ids.
  vfdt::ForestSnapshot snapshot(Stream& stream) {
    stream.synchronize();
    vfdt::ForestSnapshot s;
    s.layout = L_;
    s.layout.nodes = array_nodes_ + 1;  // >= nodes and >= leaf ids
    const std::size_t N = s.layout.nodes;
    const auto tree = tree_.to_host();
    const auto counts = leaf_counts_.to_host();
    s.generation = generation_.to_host();
    s.node_attr.assign(L_.trees * N, -1);
    s.node_child.assign(L_.trees * N, 0);
    s.node_depth.assign(L_.trees * N, 0);
    s.slot_class.assign(L_.trees * N * L_.classes, 0);
    s.attr_values.assign(L_.attributes, 2);
    s.n_nodes.assign(L_.trees, 0);
    for (int t = 0; t < L_.trees; ++t) {
      const std::uint32_t* tr = tree.data() + std::size_t(t) * array_nodes_;
      std::vector<std::pair<int, int>> queue{{0, 0}};  // (array offset, pool index)
      int next = 1;
      for (std::size_t q = 0; q < queue.size(); ++q) {
        const auto [off, idx] = queue[q];
        const std::size_t ni = std::size_t(t) * N + idx;
        s.node_depth[ni] = 31 - __builtin_clz(static_cast<unsigned>(off + 1));
        if (tr[off] & k::FaithfulPolicy::kLeaf) {
          const int l = static_cast<int>(tr[off] & ~k::FaithfulPolicy::kLeaf);
          s.node_attr[ni] = -1;
          s.node_child[ni] = l;
          for (int c = 0; c < L_.classes; ++c)
            s.slot_class[(std::size_t(t) * N + l) * L_.classes + c] =
                counts[(std::size_t(t) * max_leaves_ + l) * L_.classes + c];
        } else {
          s.node_attr[ni] = static_cast<int>(tr[off]);
          s.node_child[ni] = next;
          queue.push_back({2 * off + 1, next});
          queue.push_back({2 * off + 2, next + 1});
          next += 2;
        }
      }
      s.n_nodes[t] = next;
    }
    for (auto v : splits_.to_host()) s.splits += static_cast<long long>(v);
    for (auto v : resets_.to_host()) s.resets += static_cast<long long>(v);
    return s;
  }

 private:
  k::FaithfulView view() {
    k::FaithfulView v{};
    fill_shared(v, p_, L_);
    v.depth = p_.max_depth;
    v.array_nodes = array_nodes_;
    v.max_leaves = max_leaves_;
    v.tree = tree_.data();
    v.n_leaves = n_leaves_.data();
    v.generation = generation_.data();
    v.drift = drift_.data();
    v.adwins = adwins_.data();
    v.splits = splits_.data();
    v.resets = resets_.data();
    v.leaf_class = leaf_class_.data();
    v.leaf_back = leaf_back_.data();
    v.leaf_counts = leaf_counts_.data();
    v.leaf_seen = leaf_seen_.data();
    v.leaf_last = leaf_last_.data();
    v.leaf_key = leaf_key_.data();
    v.counters = counters_.data();
    v.decision = decision_.data();
    v.leaf_of = leaf_of_.data();
    v.weight = weight_.data();
    v.tree_pred = tree_pred_.data();
    return v;
  }

  vfdt::ForestParams p_;
  vfdt::ForestLayout L_;
  int array_nodes_ = 0, max_leaves_ = 0;
  DeviceBuffer<std::uint32_t> tree_, generation_, leaf_counts_, leaf_seen_, leaf_last_, counters_, decision_;
  DeviceBuffer<std::int32_t> n_leaves_, drift_, leaf_back_, leaf_of_;
  DeviceBuffer<unsigned long long> splits_, resets_;
  DeviceBuffer<std::uint8_t> leaf_class_, weight_, tree_pred_;
  DeviceBuffer<std::uint64_t> leaf_key_;
  DeviceBuffer<vfdt::Adwin> adwins_;
};

// Device state of the default path (pool layout, vfdt_kernels::ForestView): the per-batch
// kernels, or the persistent engine (one block per tree over a whole range).
class DefaultState {
 public:
  void prepare(const vfdt::ForestParams& p, const vfdt::ForestLayout& L, const vfdt::EncodedStream& s) {
    p_ = p;
    L_ = L;
    positions_ = pred_rows_ = s.rows;
    pred_base_ = 0;
    persistent_ = p.cuda_engine() == Engine::persistent;
    const std::size_t T = L.trees, N = L.nodes, B = static_cast<std::size_t>(p.batch);
    std::vector<std::int32_t> values(s.attributes);
    for (int a = 0; a < s.attributes; ++a) values[a] = s.coding[a].values;
    attr_values_ = DeviceBuffer<std::int32_t>(values);
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
    split_merit_ = DeviceBuffer<std::int64_t>(T * N * L.features);
    slot_class_ = DeviceBuffer<std::uint32_t>(T * N * L.classes);
    slot_seen_ = DeviceBuffer<std::uint32_t>(T * N);
    slot_other_ = DeviceBuffer<std::uint32_t>(T * N);
    slot_last_ = DeviceBuffer<std::uint32_t>(T * N);
    slot_key_ = DeviceBuffer<std::uint64_t>(T * N);
    slot_subset_ = DeviceBuffer<std::int16_t>(T * N * L.features);
    counters_ = DeviceBuffer<std::uint32_t>(T * N * L.counters_per_slot());
    adwins_ = DeviceBuffer<vfdt::Adwin>(T);
    leaf_ = DeviceBuffer<std::int32_t>(T * B);
    tree_pred_ = DeviceBuffer<std::uint8_t>(T * B);
    // Optional buffers are sized for this stream and these params or released: the views pass
    // a buffer as present by its size, so one kept from an earlier prepare() (another tree
    // count) would be indexed out of bounds (found by compute-sanitizer on the fixture, which
    // reuses one backend across cases).
    adwinp_ = DeviceBuffer<vfdt::AdwinPrefix>();
    hist_ = DeviceBuffer<std::uint32_t>();
    pred_all_ = DeviceBuffer<std::uint8_t>();
    cycles_ = DeviceBuffer<unsigned long long>();
    if (p.adwin_kernel == AdwinKernel::prefix) {
      // Running error count per tree and stream position (4 bytes x trees x rows): ADWIN's
      // bucket totals are differences of it (vfdt_math.hpp, AdwinPrefix).
      GPUDM_REQUIRE(s.rows < 0xffffffffull, "vfdt/cuda: the prefix ADWIN supports streams of < 2^32 instances");
      adwinp_ = DeviceBuffer<vfdt::AdwinPrefix>(T);
      hist_ = DeviceBuffer<std::uint32_t>(T * (s.rows + 1));
    }
    if (persistent_) {
      pred_all_ = DeviceBuffer<std::uint8_t>(T * s.rows);
      cycles_ = DeviceBuffer<unsigned long long>(T * k::kPhCount);
    }
    view_ = make_view();  // the buffers stay put until the next prepare()
  }

  bool persistent() const { return persistent_; }

  // Throws unless instances [first, first + rows) fit the 32-bit stream positions the prefix ADWIN
  // and the persistent engine use (checked before continue_at changes anything).
  void check_positions(std::uint64_t first, std::size_t rows) const {
    if (hist_.size() && p_.adwin)
      GPUDM_REQUIRE(first + rows < 0xffffffffull, "vfdt/cuda: the prefix ADWIN supports streams of < 2^32 instances");
    if (persistent_)
      GPUDM_REQUIRE(first + rows < 0xffffffffull, "vfdt/cuda: the persistent engine supports streams of < 2^32 instances");
  }

  // A later chunk of the stream, instances [first, first + rows): the prefix ADWIN's running
  // counts (indexed by stream position, state: 4 bytes a tree and instance seen) grow to cover it,
  // kept, by doubling (amortised copies); the persistent engine's votes (scratch) are indexed from
  // first. Without ADWIN the counts are never read and stay as they are.
  void continue_at(std::uint64_t first, std::size_t rows, cudaStream_t stream) {
    check_positions(first, rows);
    const std::size_t T = L_.trees;
    if (hist_.size() && p_.adwin && first + rows > positions_) {
      const std::size_t positions = std::min<std::size_t>(std::max<std::size_t>(first + rows, 2 * positions_), 0xfffffffeull);
      DeviceBuffer<std::uint32_t> grown(T * (positions + 1));
      for (std::size_t t = 0; t < T; ++t)  // (row by row: a 2-D copy's pitch is capped below the rows' length)
        GPUDM_CUDA_CHECK(cudaMemcpyAsync(grown.data() + t * (positions + 1), hist_.data() + t * (positions_ + 1),
                                         (positions_ + 1) * sizeof(std::uint32_t), cudaMemcpyDeviceToDevice, stream));
      GPUDM_CUDA_CHECK(cudaStreamSynchronize(stream));
      hist_ = std::move(grown);
      positions_ = positions;
    }
    if (persistent_) {
      if (rows > pred_rows_) {
        pred_all_ = DeviceBuffer<std::uint8_t>(T * rows);
        pred_rows_ = rows;
      }
      pred_base_ = first;
    }
    view_ = make_view();
  }

  void reset(cudaStream_t stream) {
    k::launch_init(view_, stream);
    slot_other_.memset_async(0, stream);  // kept zero between batches by the kernels themselves
  }

  void batch(DevicePhases& dp, const std::uint8_t* codes, const std::uint8_t* labels, int nb, std::uint64_t first,
             const VoteOut& out, cudaStream_t stream) {
    const k::ForestView& f = view_;
    {
      auto ph = dp.scope("traversal");
      k::launch_predict(f, codes, nb, stream);
    }
    {
      auto ph = dp.scope("vote");
      launch_votes(f.batch_votes(), nb, out, stream);
    }
    {
      auto ph = dp.scope("counters");
      k::launch_learn(f, codes, labels, nb, first, stream);
    }
    if (p_.adwin) {
      auto ph = dp.scope("adwin");
      if (p_.adwin_kernel == AdwinKernel::prefix)
        k::launch_adwin_prefix(f, labels, nb, static_cast<std::uint32_t>(first), stream);
      else
        k::launch_adwin(f.adwin_view(), p_.adwin_kernel, labels, nb, stream);
    }
    {
      auto ph = dp.scope("split");
      k::launch_split(f, stream);
    }
  }

  // Engine "persistent": one block per tree over the whole range, then one vote over it; the
  // trees' SM cycle counts per phase go to cycles() (the caller splits the kernel's time by them).
  void range(DevicePhases& dp, const std::uint8_t* codes, const std::uint8_t* labels, std::size_t n, std::size_t begin,
             const VoteOut& out, cudaStream_t stream) {
    {
      auto ph = dp.scope("persistent");
      k::launch_persistent(view_, codes, labels, n, static_cast<std::uint32_t>(begin), cycles_.data(), stream);
    }
    {
      auto ph = dp.scope("vote");
      launch_votes(view_.stream_votes(begin), n, out, stream);
    }
  }
  std::vector<unsigned long long> cycles() const { return cycles_.to_host(); }

  vfdt::ForestSnapshot snapshot(Stream& stream) {
    stream.synchronize();
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

 private:
  k::ForestView make_view() {
    k::ForestView f{};
    fill_shared(f, p_, L_);
    f.nodes = L_.nodes;
    f.values = L_.values;
    f.max_depth = p_.max_depth;
    f.adwin = p_.adwin;
    f.stream_order = p_.stream_order();
    f.naive_bayes = p_.naive_bayes();
    f.bound_total = p_.bound_total();
    f.reset_any = p_.reset_on_any_cut();
    f.adwin_delta = p_.adwin_delta;
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
    f.hist_stride = positions_ + 1;
    f.pred_all = pred_all_.size() ? pred_all_.data() : nullptr;
    f.pred_stride = pred_rows_;
    f.pred_base = pred_base_;
    f.leaf = leaf_.data();
    f.tree_pred = tree_pred_.data();
    f.decision = decision_.data();
    f.split_total = split_total_.data();
    f.split_class_term = split_class_term_.data();
    f.split_merit = split_merit_.data();
    return f;
  }

  vfdt::ForestParams p_;
  vfdt::ForestLayout L_;
  std::size_t positions_ = 0;  // stream positions hist_ covers (the prepared rows, then every chunk's)
  std::size_t pred_rows_ = 0;  // pred_all_'s columns
  std::uint64_t pred_base_ = 0;
  bool persistent_ = false;
  k::ForestView view_{};
  DeviceBuffer<std::int32_t> attr_values_, n_nodes_, n_slots_, drift_, node_attr_, node_child_, node_depth_, decision_, leaf_;
  DeviceBuffer<std::uint32_t> generation_, slot_class_, slot_seen_, slot_other_, slot_last_, counters_;
  DeviceBuffer<unsigned long long> splits_, resets_;
  DeviceBuffer<std::uint64_t> slot_key_, split_total_;
  DeviceBuffer<std::int64_t> split_class_term_, split_merit_;
  DeviceBuffer<std::int16_t> slot_subset_;
  DeviceBuffer<vfdt::Adwin> adwins_;
  DeviceBuffer<vfdt::AdwinPrefix> adwinp_;
  DeviceBuffer<std::uint32_t> hist_;
  DeviceBuffer<std::uint8_t> pred_all_, tree_pred_;
  DeviceBuffer<unsigned long long> cycles_;
};

class CudaForest final : public vfdt::ForestBackend {
 public:
  std::string name() const override { return "cuda"; }
  Capabilities capabilities() const override {
    Capabilities c;
    c.placement = Placement::device;
    c.devices = 1;
    c.deterministic_over = "launch shape, engine, ADWIN kernel, path";
    return c;
  }
  // The engine, path and ADWIN kernel the configured params resolve to ("cuda_engine": the
  // family's metric of the same name).
  nlohmann::ordered_json describe() const override {
    const vfdt::ForestParams& p = options();
    nlohmann::ordered_json d;
    if (p.path == ForestPath::faithful) {
      const char* adwin = p.adwin_kernel == AdwinKernel::simple ? "simple" : "warp";
      d["path"] = "faithful";
      d["engine"] = "per-batch kernels";
      d["adwin_kernel"] = adwin;
      d["cuda_engine"] = std::string("faithful (per-batch kernels, ADWIN ") + adwin + ")";
    } else {
      d["path"] = "default";
      d["engine"] = vfdt::to_string(p.cuda_engine());
      d["adwin_kernel"] = vfdt::to_string(p.adwin_kernel);
      d["cuda_engine"] = std::string(vfdt::to_string(p.cuda_engine())) + " (ADWIN " + vfdt::to_string(p.adwin_kernel) + ")";
    }
    return d;
  }

  void prepare(const vfdt::EncodedStream& s) override {
    const vfdt::ForestParams& p = options();
    p.validate(s);
    k::check_supported(p, s);
    require_device();
    GPUDM_REQUIRE(s.codes.size() == s.rows * s.attributes && s.labels.size() == s.rows,
                  "vfdt/cuda: the encoded stream's codes/labels do not match its rows x attributes");
    // Set last (before reset()): a prepare() that fails half way (out of device or pinned memory)
    // leaves an evaluator that says "before prepare()" instead of buffers of two streams.
    s_ = nullptr;
    p_ = p;
    L_ = vfdt::ForestLayout::make(s, p);
    first_ = next_ = 0;
    attr_values_.resize(s.attributes);
    for (int a = 0; a < s.attributes; ++a) attr_values_[a] = s.coding[a].values;
    faithful_ = p.path == ForestPath::faithful;
    if (faithful_) {
      faithful_state_.prepare(p, L_);
    } else {
      default_state_.prepare(p, L_, s);
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
    // A forest split over ranks (ShardedForest) asks for its trees' votes per class: sized here,
    // outside the timed calls; a whole forest gets it on its first process_votes().
    tally_ = DeviceBuffer<std::uint32_t>();
    if (p.total_trees() != p.trees) tally_ = DeviceBuffer<std::uint32_t>(s.rows * static_cast<std::size_t>(s.classes));
    reset();  // also loads the module and warms the context before any timed call
  }

  void reset() override {
    GPUDM_REQUIRE(s_ != nullptr, "vfdt/cuda: reset() before prepare()");
    if (faithful_) {
      faithful_state_.reset(stream_);
    } else {
      default_state_.reset(stream_);
    }
    stream_.synchronize();
  }

  void process(std::size_t begin, std::size_t end, std::int32_t* predictions, PhaseTimer& timer) override {
    GPUDM_REQUIRE(s_ != nullptr, "vfdt/cuda: process() before prepare()");
    run(begin, end, VoteOut{out_.data(), nullptr, s_->classes}, timer);
    if (end > begin) finish(timer, predictions, nullptr, end - begin);
  }

  void process_votes(std::size_t begin, std::size_t end, std::uint32_t* votes, PhaseTimer& timer) override {
    GPUDM_REQUIRE(s_ != nullptr, "vfdt/cuda: process_votes() before prepare()");
    const std::size_t cells = s_->rows * static_cast<std::size_t>(s_->classes);
    if (tally_.size() < cells) tally_ = DeviceBuffer<std::uint32_t>(cells);
    run(begin, end, VoteOut{nullptr, tally_.data(), s_->classes}, timer);
    if (end > begin) finish(timer, nullptr, votes, end - begin);
  }

  void continue_with(const vfdt::EncodedStream& chunk, std::uint64_t first_instance) override {
    GPUDM_REQUIRE(s_ != nullptr, "vfdt/cuda: continue_with() before prepare()");
    vfdt::check_chunk(L_, attr_values_, chunk, name());
    // The prefix ADWIN reads the running error count where the chunk starts: the stream's
    // chunks in order, each where the last processed range ended.
    GPUDM_REQUIRE(faithful_ || !p_.adwin || p_.adwin_kernel != AdwinKernel::prefix || first_instance == next_,
                  "vfdt/cuda: with adwin_kernel prefix a chunk starts where the last processed range ended (instance " +
                      std::to_string(next_) + "), not at " + std::to_string(first_instance) + " (adwin_kernel warp or simple: any order)");
    if (!faithful_) default_state_.check_positions(first_instance, chunk.rows);  // (refused: the forest stays usable)
    s_ = nullptr;  // an allocation failing half way leaves "before prepare()", not buffers of two chunks
    if (!faithful_) default_state_.continue_at(first_instance, chunk.rows, stream_);
    const std::size_t cells = chunk.rows * static_cast<std::size_t>(chunk.attributes);
    if (codes_.size() < cells) codes_ = DeviceBuffer<std::uint8_t>(cells);
    if (labels_.size() < chunk.rows) labels_ = DeviceBuffer<std::uint8_t>(chunk.rows);
    if (out_.size() < chunk.rows) out_ = DeviceBuffer<std::int32_t>(chunk.rows);
    if (h_codes_.size() < cells) h_codes_ = PinnedBuffer<std::uint8_t>(cells);
    if (h_labels_.size() < chunk.rows) h_labels_ = PinnedBuffer<std::uint8_t>(chunk.rows);
    if (cells) std::memcpy(h_codes_.data(), chunk.codes.data(), cells);
    if (chunk.rows) std::memcpy(h_labels_.data(), chunk.labels.data(), chunk.rows);
    s_ = &chunk;
    first_ = next_ = first_instance;
  }

  vfdt::ForestSnapshot snapshot() override {
    GPUDM_REQUIRE(s_ != nullptr, "vfdt/cuda: snapshot() before prepare()");
    return faithful_ ? faithful_state_.snapshot(stream_) : default_state_.snapshot(stream_);
  }

 private:
  // The prequential loop over [begin, end): uploads, then the persistent engine's range or the
  // per-batch steps, the votes to `out` (at instance 0 of the range); finish() downloads them.
  void run(std::size_t begin, std::size_t end, const VoteOut& out, PhaseTimer& timer) {
    GPUDM_REQUIRE(begin <= end && end <= s_->rows, "vfdt: process range past the end of the stream");
    const std::size_t n = end - begin, d = static_cast<std::size_t>(s_->attributes);
    if (n == 0) return;
    // Phase events on every kPhaseSample-th batch only (scaled up at the end): events on every
    // batch would cost more host time than a single tree's kernels take. None with a disabled timer.
    DevicePhases& dp = timer.enabled() ? dp_ : dp_off_;
    std::size_t sampled = 0, batches = 0;
    {
      auto ph = dp.scope("transfers");
      codes_.upload_async(h_codes_.data() + begin * d, n * d, stream_);
      labels_.upload_async(h_labels_.data() + begin, n, stream_);
    }
    scale_ = 1.0;
    const std::uint64_t at = first_ + begin;  // the range's first instance in the whole stream
    next_ = first_ + end;
    if (!faithful_ && default_state_.persistent()) {
      default_state_.range(dp, codes_.data(), labels_.data(), n, at, out, stream_);
      return;
    }
    const std::size_t B = static_cast<std::size_t>(p_.batch);
    for (std::size_t b0 = 0; b0 < n; b0 += B) {
      const int nb = static_cast<int>(std::min(B, n - b0));
      const bool sample = batches++ % kPhaseSample == 0;
      sampled += sample;
      DevicePhases& bp = sample ? dp : dp_off_;
      const std::uint8_t* codes = codes_.data() + b0 * d;
      const std::uint8_t* labels = labels_.data() + b0;
      if (faithful_)
        faithful_state_.batch(bp, codes, labels, nb, at + b0, out.at(b0), stream_);
      else
        default_state_.batch(bp, codes, labels, nb, at + b0, out.at(b0), stream_);
    }
    scale_ = sampled ? static_cast<double>(batches) / static_cast<double>(sampled) : 1.0;
  }

  // Download the predictions (or the votes per class), wait, and turn the recorded events into
  // phases of `timer` (per-batch phases were timed on every kPhaseSample-th batch: scaled by scale_).
  void finish(PhaseTimer& timer, std::int32_t* predictions, std::uint32_t* votes, std::size_t n) {
    DevicePhases& dp = timer.enabled() ? dp_ : dp_off_;
    const double scale = scale_;
    {
      auto ph = dp.scope("transfers_out");
      if (votes != nullptr) tally_.download_async(votes, n * static_cast<std::size_t>(s_->classes), stream_);
      else out_.download_async(predictions, n, stream_);
    }
    stream_.synchronize();
    if (!timer.enabled()) return;
    PhaseTimer raw;
    dp.flush(raw);
    static const char* kNames[k::kPhCount] = {"traversal", "counters", "adwin", "split"};
    for (const auto& ph : raw.phases()) {
      if (ph.name == "persistent") {
        const auto cyc = default_state_.cycles();
        double share[k::kPhCount] = {0, 0, 0, 0};
        for (int t = 0; t < L_.trees; ++t) {
          double tot = 0;
          for (int i = 0; i < k::kPhCount; ++i) tot += static_cast<double>(cyc[t * k::kPhCount + i]);
          for (int i = 0; i < k::kPhCount; ++i)
            share[i] += tot > 0 ? static_cast<double>(cyc[t * k::kPhCount + i]) / tot / L_.trees : 0.0;
        }
        for (int i = 0; i < k::kPhCount; ++i) timer.add(kNames[i], ph.seconds * share[i], PhaseClock::device);
        continue;
      }
      const bool per_batch = ph.name != "transfers" && ph.name != "transfers_out";
      timer.add(ph.name == "transfers_out" ? "transfers" : ph.name, per_batch ? ph.seconds * scale : ph.seconds,
                PhaseClock::device);
    }
  }

  static constexpr std::size_t kPhaseSample = 8;
  Stream stream_;  // declared before the buffers: their frees are ordered on it
  DevicePhases dp_{stream_};
  DevicePhases dp_off_{stream_, false};
  const vfdt::EncodedStream* s_ = nullptr;
  std::uint64_t first_ = 0;  // the stream index of s_'s instance 0 (continue_with)
  std::uint64_t next_ = 0;   // where the last processed range ended, in the whole stream
  std::vector<int> attr_values_;
  vfdt::ForestParams p_;
  vfdt::ForestLayout L_;
  bool faithful_ = false;
  FaithfulState faithful_state_;
  DefaultState default_state_;
  DeviceBuffer<std::uint8_t> codes_, labels_;
  PinnedBuffer<std::uint8_t> h_codes_, h_labels_;  // the encoded stream, staged in prepare()
  DeviceBuffer<std::int32_t> out_;
  DeviceBuffer<std::uint32_t> tally_;  // votes per (instance, class): process_votes()
  double scale_ = 1.0;                 // run()'s per-batch phase scale, for finish()
};

}  // namespace

std::unique_ptr<vfdt::ForestBackend> make_vfdt_forest() { return std::make_unique<CudaForest>(); }

}  // namespace gpudm::backend::cuda
