// CUDA rule engine: owns the stream and the device buffers (stream declared first). prepare()
// uploads the dataset once (and its f16x2 layout of ranked codes, algorithms/rules/ranked.hpp,
// when every column has few enough distinct values); evaluate()
// validates and flattens the population, uploads it as one pinned blob, runs the faithful
// (match + reduction, individuals in constant memory) or the fast (fused) path, and downloads
// the counts (and coverage) as one copy. Path fallbacks are reported in describe().
#include <algorithm>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "algorithms/core/stopwatch.hpp"
#include "backends/cuda/common/common.cuh"
#include "backends/cuda/rules/device.cuh"
#include "backends/cuda/rules/launch.cuh"
#include "backends/cuda/rules/policy.cuh"
#include "algorithms/rules/ranked.hpp"
#include "backends/rules.hpp"

namespace gpudm::backend::cuda {

namespace {

namespace k = rules_kernels;
namespace rl = ::gpudm::rules;

class CudaRuleEvaluator final : public rl::RuleEvaluator {
 public:
  CudaRuleEvaluator() : device_(require_device()) {}

  std::string name() const override { return "cuda"; }
  Capabilities capabilities() const override {
    Capabilities c;
    c.placement = Placement::device;
    c.devices = 1;
    c.deterministic_over = "path, feature layout and launch shape (integer counts)";
    return c;
  }

  void configure(const rl::EngineOptions& o) override {
    const bool relayout = o.features != options_.features;
    options_ = o;
    if (relayout && host_ != nullptr) prepare(*host_);
  }

  void prepare(const Dataset& data) override {
    host_ = nullptr;  // set only when everything below succeeded
    GPUDM_REQUIRE(data.task() == Task::classification,
                  "rules/cuda: dataset '" + data.name() + "' is not a classification dataset");
    GPUDM_REQUIRE(data.rows() < (1ull << 32), "rules/cuda: more than 2^32 rows");
    GPUDM_REQUIRE(data.num_classes() <= 255,
                  "rules/cuda: " + std::to_string(data.num_classes()) + " classes; the results array stores a class per byte (at most 255)");
    class_rows_ = rl::class_rows(data);
    schema_ = rl::Schema::of(data);
    set_device(device_);
    data_ = upload_dataset(data, stream_);
    f16_reason_.clear();
    rl::RankedColumns ranked;
    if (options_.features == rl::Features::f32) f16_reason_ = "features \"f32\" requested";
    else ranked = rl::rank_columns(data);
    f16_ok_ = !ranked.codes.empty();
    if (!f16_ok_ && f16_reason_.empty()) f16_reason_ = ranked.reason.empty() ? "empty dataset" : ranked.reason;
    if (!f16_ok_ && options_.features == rl::Features::f16x2)
      throw Error("rules/cuda: features \"f16x2\" requested for dataset '" + data.name() + "', but " + f16_reason_);
    features16_ = DeviceBuffer<std::uint32_t>();
    rank_values_ = DeviceBuffer<float>();
    rank_begin_ = DeviceBuffer<std::uint32_t>();
    if (f16_ok_) {
      features16_.resize(ranked.codes.size() / 2);
      features16_.upload(reinterpret_cast<const std::uint32_t*>(ranked.codes.data()), ranked.codes.size() / 2);
      rank_values_.resize(std::max<std::size_t>(1, ranked.values.size()));
      if (!ranked.values.empty()) rank_values_.upload(ranked.values);
      rank_begin_.resize(ranked.begin.size());
      rank_begin_.upload(ranked.begin);
    }
    stream_.synchronize();
    host_ = &data;
  }

  void evaluate(const rl::RulePopulation& pop, rl::RuleCounts& out, PhaseTimer& timer, rl::Want want) override {
    GPUDM_REQUIRE(host_ != nullptr, "rules/cuda: evaluate() before prepare()");
    set_device(device_);
    const bool coverage = want == rl::Want::counts_and_coverage;
    const DatasetView dv = data_.view();
    const DeviceProps& props = device_props(device_);
    const int classes = static_cast<int>(class_rows_.size());
    rl::PopulationInfo info;
    {
      auto s = timer.scope("encode");
      info = rl::check_population(pop, schema_);
      out.reset(pop.size(), dv.rows, class_rows_, coverage);
      out.gpops = info.primitives * dv.rows;
      choose_path(info, classes, pop, props, dv);
    }
    const std::size_t nr = pop.size();
    if (nr == 0 || dv.rows == 0) {
      if (coverage) std::fill(out.coverage.begin(), out.coverage.end(), 0u);
      return;
    }
    DevicePhases& phases = phases_;  // pooled events: a steady-state loop creates none
    const std::size_t count_words = nr * static_cast<std::size_t>(classes);
    const std::size_t cov_words = coverage ? nr * out.words_per_rule : 0;
    // In: words | rule_begin | groups (fast). Out: counts | coverage.
    const std::size_t nw = pop.words.size(), nb = pop.rule_begin.size();
    const std::size_t ng = fast_ ? plan_.groups.size() : 0;
    {
      auto p = phases.scope("upload");
      const std::size_t total = nw + nb + ng;
      if (h_in_.size() < total) h_in_ = PinnedBuffer<std::uint32_t>(total + total / 2);
      std::memcpy(h_in_.data(), pop.words.data(), nw * sizeof(std::uint32_t));
      std::memcpy(h_in_.data() + nw, pop.rule_begin.data(), nb * sizeof(std::uint32_t));
      if (ng) std::memcpy(h_in_.data() + nw + nb, plan_.groups.data(), ng * sizeof(std::uint32_t));
      in_.resize(total);
      in_.upload_async(h_in_.data(), total, stream_);
    }
    out_.resize(count_words + cov_words);
    std::uint32_t* d_counts = out_.data();
    std::uint32_t* d_cov = coverage ? out_.data() + count_words : nullptr;
    const std::uint32_t* d_words = in_.data();
    const std::uint32_t* d_begin = in_.data() + nw;
    if (fast_) {
      if (plan_.packed) {
        auto p = phases.scope("rewrite_ranked");
        words16_.resize(nw);
        k::launch_rewrite_ranked(d_words, d_begin, static_cast<std::uint32_t>(nr), rank_values_.data(), rank_begin_.data(),
                                 words16_.data(), stream_);
        d_words = words16_.data();
      }
      auto p = phases.scope("match_count");
      GPUDM_CUDA_CHECK(cudaMemsetAsync(d_counts, 0, count_words * sizeof(std::uint32_t), stream_));
      k::FastBuffers b;
      b.features16 = plan_.packed ? features16_.data() : nullptr;
      b.words = d_words;
      b.rule_begin = d_begin;
      b.group_begin = in_.data() + nw + nb;
      b.counts = d_counts;
      b.coverage = d_cov;
      b.words_per_rule = out.words_per_rule;
      k::launch_fused(dv, classes, plan_, b, props, stream_);
    } else {
      const std::size_t stride = k::results_stride(dv);
      result_.resize(stride * nr);
      {
        auto p = phases.scope("match");
        for (const k::Chunk& c : k::constant_chunks(pop)) k::launch_match(dv, pop, c, staging_, result_.data(), stream_);
      }
      {
        auto p = phases.scope("reduction");
        k::launch_reduce(result_.data(), stride, dv.rows, nr, classes, d_counts, props, stream_);
      }
      if (coverage) {
        auto p = phases.scope("coverage");
        k::launch_pack_coverage(result_.data(), stride, dv.rows, nr, out.words_per_rule, d_cov, stream_);
      }
    }
    {
      auto p = phases.scope("download");
      const std::size_t total = count_words + cov_words;
      if (h_out_.size() < total) h_out_ = PinnedBuffer<std::uint32_t>(total + total / 2);
      out_.download_async(h_out_.data(), total, stream_);
    }
    {
      auto s = timer.scope("host_wait");
      stream_.synchronize();
    }
    std::memcpy(out.covered.data(), h_out_.data(), count_words * sizeof(std::uint32_t));
    if (coverage) std::memcpy(out.coverage.data(), h_out_.data() + count_words, cov_words * sizeof(std::uint32_t));
    if (timer.enabled()) phases.flush(timer);
    else phases.discard();
  }

  nlohmann::ordered_json describe() const override {
    nlohmann::ordered_json j;
    j["device"] = device_props(device_).name;
    j["path_requested"] = rl::to_string(options_.path);
    j["path_used"] = used_.empty() ? rl::to_string(options_.path) : used_;
    if (!fallback_.empty()) j["fallback_reason"] = fallback_;
    if (used_ == "fast") {
      j["features"] = plan_.packed ? "f16x2 (ranked codes)" : "f32";
      if (!plan_.packed && !packed_reason_.empty()) j["features_reason"] = packed_reason_;
      j["block"] = plan_.block;
      j["rows_per_thread"] = plan_.rows_per_thread;
      j["tile_rows"] = static_cast<std::size_t>(plan_.block) * plan_.rows_per_thread * (plan_.packed ? 2 : 1);
      j["tiles"] = plan_.tiles;
      j["groups"] = plan_.groups.empty() ? 0 : plan_.groups.size() - 1;
      j["grid_x"] = plan_.grid_x;
      j["shared_bytes"] = plan_.smem;
    } else if (used_ == "faithful") {
      j["match_block"] = k::FaithfulPolicy::kMatchThreads;
      j["reduce_block"] = k::FaithfulPolicy::kReduceThreads;
      j["individuals_in"] = "constant memory";
    }
    return j;
  }

 private:
  // Fast or faithful, f32 or f16x2, and why (the documented fallbacks).
  void choose_path(const rl::PopulationInfo& info, int classes, const rl::RulePopulation& pop, const DeviceProps& props,
                   const DatasetView& dv) {
    fallback_.clear();
    packed_reason_.clear();
    fast_ = options_.path == rl::Path::fast;
    if (fast_ && classes > k::FastPolicy::kMaxClasses) {
      fast_ = false;
      fallback_ = std::to_string(classes) + " classes exceed the fast path's one class per lane (" +
                  std::to_string(k::FastPolicy::kMaxClasses) + ")";
    }
    if (fast_ && info.max_depth > k::FastPolicy::kMaxStackBits) {
      fast_ = false;
      fallback_ = "a rule's stack depth " + std::to_string(info.max_depth) + " exceeds the fast path's " +
                  std::to_string(k::FastPolicy::kMaxStackBits) + "-bit stack";
    }
    bool packed = fast_ && f16_ok_;
    packed_reason_ = fast_ ? f16_reason_ : "";
    if (packed && info.max_depth > k::kMaxPackedDepth) {
      packed = false;
      packed_reason_ = "a rule's stack depth " + std::to_string(info.max_depth) + " exceeds the f16x2 layout's " +
                       std::to_string(k::kMaxPackedDepth);
    }
    if (fast_) {
      plan_ = k::plan_fast(props, dv, packed, classes, pop, options_.rows_per_thread);
      if (!plan_.ok) {
        fast_ = false;
        fallback_ = plan_.reason;
      }
    }
    used_ = fast_ ? "fast" : "faithful";
  }

  int device_;
  Stream stream_;  // declared before the buffers: they are freed first
  DevicePhases phases_{stream_};
  DeviceDataset data_;
  DeviceBuffer<std::uint32_t> features16_, in_, out_, words16_, rank_begin_;
  DeviceBuffer<float> rank_values_;
  DeviceBuffer<std::uint8_t> result_;
  PinnedBuffer<std::uint32_t> h_in_, h_out_;
  std::vector<std::uint32_t> staging_;
  const Dataset* host_ = nullptr;
  rl::Schema schema_;
  std::vector<std::uint64_t> class_rows_;
  bool f16_ok_ = false, fast_ = true;
  std::string f16_reason_, packed_reason_, fallback_, used_;
  k::FastPlan plan_;
};

}  // namespace

std::unique_ptr<rl::RuleEvaluator> make_rule_evaluator() { return std::make_unique<CudaRuleEvaluator>(); }

}  // namespace gpudm::backend::cuda
