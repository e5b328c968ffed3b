// CUDA rule engine. prepare() decides the layout once (f32, or the ranked fp16 codes of
// algorithms/rules/ranked.hpp when every column has few enough distinct values) and uploads the
// dataset to every device of the split (device_data.cuh). evaluate() validates the population,
// chooses the path (faithful: match + reduction, individuals in constant memory; fast: the fused
// kernel) for the whole population, and runs it: on one device directly, or cut into contiguous
// slices of about equal words, one per device entry, each on its own host thread
// (common/device_split.hpp), every slice writing its own rules' counts and coverage. A slice
// uploads its rules as one pinned blob and downloads its counts (and coverage) as one copy.
// Path fallbacks are reported in describe(). The coverage goes from the pinned download buffer into
// the caller's RuleCounts; on one device that host copy is split over persistent host threads
// (the copy_threads option, default up to 8): Tan copies 12 MB a call on KDDcup, ~3 s a run on one
// thread (docs/perf-notes-gp.md).
#include <algorithm>
#include <cstring>
#include <memory>
#include <thread>
#include <string>
#include <vector>

#include "algorithms/core/host_workers.hpp"
#include "algorithms/core/stopwatch.hpp"
#include "algorithms/rules/ranked.hpp"
#include "backends/cuda/common/common.cuh"
#include "backends/cuda/common/device_split.hpp"
#include "backends/cuda/rules/device.cuh"
#include "backends/cuda/rules/device_data.cuh"
#include "backends/cuda/rules/launch.cuh"
#include "backends/cuda/rules/policy.cuh"
#include "backends/rules.hpp"

namespace gpudm::backend::cuda {

namespace {

namespace k = rules_kernels;
namespace rl = ::gpudm::rules;

// What one slice of the split owns on its device (the dataset copy first: its stream outlives
// the buffers).
struct Slice {
  std::unique_ptr<k::RuleDeviceData> dev;
  DevicePhases phases{nullptr};
  DeviceBuffer<std::uint32_t> in, out, words16;
  DeviceBuffer<std::uint8_t> result;
  PinnedBuffer<std::uint32_t> h_in, h_out;
  std::vector<std::uint32_t> staging;
  rl::RulePopulation part;  // the slice's rules (several slices only)
  k::FastPlan plan;
};

class CudaRuleEvaluator final : public rl::RuleEvaluator {
 public:
  CudaRuleEvaluator() { require_device(); }

  std::string name() const override { return "cuda"; }
  Capabilities capabilities() const override {
    Capabilities c;
    c.placement = Placement::device;
    c.devices = device_count();
    c.deterministic_over = "path, feature layout, launch shape and device split (integer counts)";
    return c;
  }

  void configure(const rl::EngineOptions& o) override {
    const std::vector<int> ids = resolve_devices(o.devices, o.device_ids, device_count(), "rules/cuda");
    const bool reprepare = o.features != options_.features || ids != devices_;
    if (o.copy_threads != options_.copy_threads) {  // (the copy's workers start again at their next use)
      copy_workers_.reset();
      copy_threads_ = 0;
    }
    options_ = o;
    devices_ = ids;
    if (reprepare && host_ != nullptr) prepare(*host_);
  }

  void prepare(const Dataset& data) override {
    host_ = nullptr;  // set only when everything below succeeded
    slices_.clear();
    GPUDM_REQUIRE(data.task() == Task::classification,
                  "rules/cuda: dataset '" + data.name() + "' is not a classification dataset");
    GPUDM_REQUIRE(data.rows() < (1ull << 32), "rules/cuda: more than 2^32 rows");
    GPUDM_REQUIRE(data.num_classes() <= 255,
                  "rules/cuda: " + std::to_string(data.num_classes()) + " classes; the results array stores a class per byte (at most 255)");
    class_rows_ = rl::class_rows(data);
    schema_ = rl::Schema::of(data);
    const k::RankedLayout layout = k::choose_layout(data, options_.features, "rules/cuda");
    f16_ok_ = layout.packed;
    f16_reason_ = layout.reason;
    if (devices_.empty()) devices_ = resolve_devices(1, {}, device_count(), "rules/cuda");
    for (int d : devices_) {
      auto s = std::make_unique<Slice>();
      s->dev = k::RuleDeviceData::upload(d, data, layout);
      s->phases = DevicePhases(s->dev->stream);
      slices_.push_back(std::move(s));
    }
    host_ = &data;
  }

  void evaluate(const rl::RulePopulation& pop, rl::RuleCounts& out, PhaseTimer& timer, rl::Want want) override {
    GPUDM_REQUIRE(host_ != nullptr, "rules/cuda: evaluate() before prepare()");
    const bool coverage = want == rl::Want::counts_and_coverage;
    const std::size_t rows = host_->rows();
    const int classes = static_cast<int>(class_rows_.size());
    const std::size_t nr = pop.size();
    const std::size_t n = std::max<std::size_t>(1, std::min(slices_.size(), nr));
    std::vector<std::size_t> cut{0, nr};
    {
      auto s = timer.scope("encode");
      const rl::PopulationInfo info = rl::check_population(pop, schema_);
      out.reset(nr, rows, class_rows_, coverage);
      out.gpops = info.primitives * rows;
      if (n > 1) {  // contiguous slices of about equal words
        std::vector<std::uint64_t> work(nr + 1, 0);
        for (std::size_t r = 0; r < nr; ++r) work[r + 1] = work[r] + pop.rule_words(r);
        cut = balanced_cuts(work, n);
        for (std::size_t d = 0; d < n; ++d) {
          Slice& sl = *slices_[d];
          sl.part.clear();
          for (std::size_t r = cut[d]; r < cut[d + 1]; ++r) sl.part.add(pop.rule(r), pop.rule_words(r));
        }
      }
      choose_path(info, classes, pop, n);
    }
    used_slices_ = n;
    if (nr == 0 || rows == 0) {
      if (coverage) std::fill(out.coverage.begin(), out.coverage.end(), 0u);
      return;
    }
    if (n == 1) {
      set_device(slices_[0]->dev->device);
      return run_slice(*slices_[0], pop, 0, out, coverage, timer);
    }
    // Slices on distinct devices run concurrently, one host thread each. Slices that share a
    // device (device_ids [0, 0]: the split's code path tested on one GPU) run one after the
    // other on this thread: the individuals' constant-memory symbol and the fused kernel's
    // dynamic shared-memory attribute are per device, so two host threads driving one device
    // would overwrite each other's (found on the H100: wrong counts and invalid launches).
    const auto slice_job = [&](std::size_t d, PhaseTimer& t) {
      Slice& sl = *slices_[d];
      set_device(sl.dev->device);
      run_slice(sl, sl.part, cut[d], out, coverage, t);
    };
    if (shared_device()) {
      for (std::size_t d = 0; d < n; ++d) slice_job(d, timer);  // serial: phase times add up
      return;
    }
    runner_.run(n, slice_job, timer);
  }

  nlohmann::ordered_json describe() const override {
    nlohmann::ordered_json j;
    const int dev0 = slices_.empty() ? (devices_.empty() ? 0 : devices_[0]) : slices_[0]->dev->device;
    j["device"] = device_props(dev0).name;
    j["devices"] = std::max<std::size_t>(1, devices_.size());
    j["device_ids"] = devices_.empty() ? std::vector<int>{dev0} : devices_;
    if (used_slices_ > 1) j["slices_used"] = used_slices_;
    if (copy_threads_ > 0) j["coverage_copy_threads"] = copy_threads_;
    j["path_requested"] = rl::to_string(options_.path);
    j["path_used"] = used_.empty() ? rl::to_string(options_.path) : used_;
    if (!fallback_.empty()) j["fallback_reason"] = fallback_;
    if (used_ == "fast" && !slices_.empty()) {
      const k::FastPlan& plan = slices_[0]->plan;  // slice 0's launch (every slice has the same tile shape)
      j["features"] = plan.packed ? "f16x2 (ranked codes)" : "f32";
      if (!plan.packed && !packed_reason_.empty()) j["features_reason"] = packed_reason_;
      j["block"] = plan.block;
      j["rows_per_thread"] = plan.rows_per_thread;
      j["tile_rows"] = static_cast<std::size_t>(plan.block) * plan.rows_per_thread * (plan.packed ? 2 : 1);
      j["tiles"] = plan.tiles;
      j["groups"] = plan.groups.empty() ? 0 : plan.groups.size() - 1;
      j["grid_x"] = plan.grid_x;
      j["shared_bytes"] = plan.smem;
    } else if (used_ == "faithful") {
      j["match_block"] = k::FaithfulPolicy::kMatchThreads;
      j["reduce_block"] = k::FaithfulPolicy::kReduceThreads;
      j["individuals_in"] = "constant memory";
    }
    return j;
  }

 private:
  // Fast or faithful, f32 or f16x2, for the whole population (every slice runs the same), and
  // why (the documented fallbacks). Plans every slice's fast launch.
  void choose_path(const rl::PopulationInfo& info, int classes, const rl::RulePopulation& pop, std::size_t n) {
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
    for (std::size_t d = 0; fast_ && d < n; ++d) {
      Slice& sl = *slices_[d];
      sl.plan = k::plan_fast(device_props(sl.dev->device), sl.dev->data.view(), packed, classes, n == 1 ? pop : sl.part,
                             options_.rows_per_thread);
      if (!sl.plan.ok) {
        fast_ = false;
        fallback_ = sl.plan.reason;
      }
    }
    used_ = fast_ ? "fast" : "faithful";
  }

  // Rules `p` (the population's rules first .. first + p.size()) on the slice's device: writes
  // their counts (and coverage) into `out`; device phases go to `timer`.
  void run_slice(Slice& sl, const rl::RulePopulation& p, std::size_t first, rl::RuleCounts& out, bool coverage,
                 PhaseTimer& timer) {
    const DatasetView dv = sl.dev->data.view();
    const DeviceProps& props = device_props(sl.dev->device);
    const cudaStream_t stream = sl.dev->stream;
    const int classes = out.classes;
    const std::size_t nr = p.size();
    DevicePhases& phases = sl.phases;  // pooled events: a steady-state loop creates none
    const std::size_t count_words = nr * static_cast<std::size_t>(classes);
    const std::size_t cov_words = coverage ? nr * out.words_per_rule : 0;
    // In: words | rule_begin | groups (fast). Out: counts | coverage.
    const std::size_t nw = p.words.size(), nb = p.rule_begin.size();
    const std::size_t ng = fast_ ? sl.plan.groups.size() : 0;
    {
      auto ph = phases.scope("upload");
      const std::size_t total = nw + nb + ng;
      if (sl.h_in.size() < total) sl.h_in = PinnedBuffer<std::uint32_t>(total + total / 2);
      std::memcpy(sl.h_in.data(), p.words.data(), nw * sizeof(std::uint32_t));
      std::memcpy(sl.h_in.data() + nw, p.rule_begin.data(), nb * sizeof(std::uint32_t));
      if (ng) std::memcpy(sl.h_in.data() + nw + nb, sl.plan.groups.data(), ng * sizeof(std::uint32_t));
      sl.in.resize(total);
      sl.in.upload_async(sl.h_in.data(), total, stream);
    }
    sl.out.resize(count_words + cov_words);
    std::uint32_t* d_counts = sl.out.data();
    std::uint32_t* d_cov = coverage ? sl.out.data() + count_words : nullptr;
    const std::uint32_t* d_words = sl.in.data();
    const std::uint32_t* d_begin = sl.in.data() + nw;
    if (fast_) {
      if (sl.plan.packed) {
        auto ph = phases.scope("rewrite_ranked");
        sl.words16.resize(nw);
        k::launch_rewrite_ranked(d_words, d_begin, static_cast<std::uint32_t>(nr), sl.dev->rank_values.data(),
                                 sl.dev->rank_begin.data(), sl.words16.data(), stream);
        d_words = sl.words16.data();
      }
      auto ph = phases.scope("match_count");
      GPUDM_CUDA_CHECK(cudaMemsetAsync(d_counts, 0, count_words * sizeof(std::uint32_t), stream));
      k::FastBuffers b;
      b.features16 = sl.plan.packed ? sl.dev->features16.data() : nullptr;
      b.words = d_words;
      b.rule_begin = d_begin;
      b.group_begin = sl.in.data() + nw + nb;
      b.counts = d_counts;
      b.coverage = d_cov;
      b.words_per_rule = out.words_per_rule;
      k::launch_fused(dv, classes, sl.plan, b, props, stream);
    } else {
      const std::size_t stride = k::results_stride(dv);
      sl.result.resize(stride * nr);
      {
        auto ph = phases.scope("match");
        for (const k::Chunk& c : k::constant_chunks(p)) k::launch_match(dv, p, c, sl.staging, sl.result.data(), stream);
      }
      {
        auto ph = phases.scope("reduction");
        k::launch_reduce(sl.result.data(), stride, dv.rows, nr, classes, d_counts, props, stream);
      }
      if (coverage) {
        auto ph = phases.scope("coverage");
        k::launch_pack_coverage(sl.result.data(), stride, dv.rows, nr, out.words_per_rule, d_cov, stream);
      }
    }
    {
      auto ph = phases.scope("download");
      const std::size_t total = count_words + cov_words;
      if (sl.h_out.size() < total) sl.h_out = PinnedBuffer<std::uint32_t>(total + total / 2);
      sl.out.download_async(sl.h_out.data(), total, stream);
    }
    {
      auto s = timer.scope("host_wait");
      GPUDM_CUDA_CHECK(cudaStreamSynchronize(stream));
    }
    std::memcpy(out.covered.data() + first * static_cast<std::size_t>(classes), sl.h_out.data(),
                count_words * sizeof(std::uint32_t));
    if (coverage) {
      auto s = timer.scope("coverage_copy");
      copy_coverage(out.coverage.data() + first * out.words_per_rule, sl.h_out.data() + count_words, cov_words,
                    used_slices_ == 1);
    }
    if (timer.enabled()) phases.flush(timer);
    else phases.discard();
  }

  // dst <- src, `words` 32-bit words: on `parallel` (one slice: no other host thread copies) and
  // above 1 MB, in one contiguous 64-byte-aligned part per copy thread.
  void copy_coverage(std::uint32_t* dst, const std::uint32_t* src, std::size_t words, bool parallel) {
    const std::size_t bytes = words * sizeof(std::uint32_t);
    if (!parallel || bytes < (1u << 20) || copy_threads() <= 1) {
      std::memcpy(dst, src, bytes);
      return;
    }
    const std::size_t parts = copy_threads();
    const std::size_t per = ((words + parts - 1) / parts + 15) / 16 * 16;  // 64-byte multiples
    parallel_for(*copy_workers_, parts, [&](std::size_t i) {
      const std::size_t b = std::min(words, i * per), e = std::min(words, b + per);
      if (e > b) std::memcpy(dst + b, src + b, (e - b) * sizeof(std::uint32_t));
    });
  }
  // The coverage copy's threads (the caller's included): the copy_threads option, else up to 8 of
  // the machine's; 1 = a plain memcpy. The workers start on first use.
  std::size_t copy_threads() {
    if (copy_threads_ == 0) {
      copy_threads_ = options_.copy_threads > 0 ? static_cast<std::size_t>(options_.copy_threads) : default_host_threads(8);
      if (copy_threads_ > 1) copy_workers_ = std::make_unique<HostWorkers>(copy_threads_ - 1);
    }
    return copy_threads_;
  }
  std::size_t copy_threads_ = 0;
  std::unique_ptr<HostWorkers> copy_workers_;

  rl::EngineOptions options_;
  std::vector<int> devices_;  // one entry per slice (may repeat a device)
  bool shared_device() const {
    for (std::size_t i = 0; i < devices_.size(); ++i)
      for (std::size_t j = i + 1; j < devices_.size(); ++j)
        if (devices_[i] == devices_[j]) return true;
    return false;
  }
  std::vector<std::unique_ptr<Slice>> slices_;
  SplitRunner runner_;
  const Dataset* host_ = nullptr;
  rl::Schema schema_;
  std::vector<std::uint64_t> class_rows_;
  bool f16_ok_ = false, fast_ = true;
  std::size_t used_slices_ = 1;
  std::string f16_reason_, packed_reason_, fallback_, used_;
};

}  // namespace

std::unique_ptr<rl::RuleEvaluator> make_rule_evaluator() { return std::make_unique<CudaRuleEvaluator>(); }

}  // namespace gpudm::backend::cuda
