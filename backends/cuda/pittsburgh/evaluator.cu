// CUDA Pittsburgh evaluator: owns one DeviceState per slice of the split (the rule engine's
// per-device dataset copy and layout, backends/cuda/rules/device_data.cuh), splits the population
// over the devices (one host thread per slice, common/device_split.hpp), chooses the faithful or
// the fast path, stages the population and gathers the integer results. Kernels are launched
// through launch.cuh (shapes from policy.cuh); the kernels themselves are in kernels.cuh, the
// fast path's on the rule engine's device functions and its ranked fp16 layout.
#include "backends/pittsburgh.hpp"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <exception>
#include <mutex>
#include <utility>
#include <functional>
#include <vector>

#include "algorithms/core/machine.hpp"
#include "algorithms/core/stopwatch.hpp"
#include "backends/cuda/common/buffer.cuh"
#include "backends/cuda/common/dataset.cuh"
#include "backends/cuda/common/device.cuh"
#include "backends/cuda/common/device_split.hpp"
#include "backends/cuda/common/error.cuh"
#include "backends/cuda/common/event_timer.cuh"
#include "backends/cuda/common/stream.cuh"
#include "backends/cuda/pittsburgh/launch.cuh"
#include "backends/cuda/pittsburgh/policy.cuh"
#include "backends/cuda/rules/device.cuh"
#include "backends/cuda/rules/device_data.cuh"
#include "backends/cuda/rules/launch.cuh"
#include "backends/cuda/rules/policy.cuh"

namespace gpudm::backend::cuda {

namespace {

using pittsburgh::FeatureLayout;
using pittsburgh::FlatPopulation;
using pittsburgh::KernelPath;
namespace rk = rules_kernels;

static_assert(sizeof(rules::ConfusionMatrix) == 4 * sizeof(std::uint32_t), "confusion matrices travel as 4 words");

// Everything one GPU (one slice of the split) holds: the rule kernels' copy of the dataset
// (device_data.cuh: columns, ranked codes; its stream outlives the buffers below) and the
// evaluation's buffers.
struct DeviceState {
  std::unique_ptr<rk::RuleDeviceData> dev;
  DeviceBuffer<std::uint32_t> class_rows;  // rows of every class (finalize)
  DeviceBuffer<std::uint32_t> in_blob, out_blob, counts, words16;  // population in; confusion | fitness | correct out
  PinnedBuffer<std::uint32_t> h_in, h_out;
  DeviceBuffer<std::uint8_t> result, classified;  // faithful path
  DevicePhases phases{nullptr};
};

class CudaRuleSetEvaluator final : public pittsburgh::RuleSetEvaluator {
 public:
  std::string name() const override { return "cuda"; }
  Capabilities capabilities() const override {
    Capabilities c;
    c.placement = Placement::device;
    c.devices = machine::gpu_count();
    c.deterministic_over =
        "device count, path (faithful | fast), feature layout (f32 | f16x2) and launch shape (integer counts)";
    return c;
  }

  void configure(const pittsburgh::EvaluatorOptions& o) override {
    const std::vector<int> ids = resolve_devices(o.devices, o.device_ids, device_count(), "pittsburgh/cuda");
    const bool changed = ids != devices_ || o.features != options_.features;
    options_ = o;
    devices_ = ids;
    if (changed && data_) prepare(*data_);
  }

  void prepare(const Dataset& data) override {
    GPUDM_REQUIRE(data.task() == Task::classification,
                  "pittsburgh: dataset '" + data.name() + "' is not a classification dataset");
    GPUDM_REQUIRE(data.rows() < (1ull << 32), "pittsburgh/cuda: more than 2^32 rows");
    // Set only when everything below succeeded: a failed prepare() (f16x2 refused, out of device
    // memory) leaves an evaluator that says "evaluate() before prepare()" instead of half a state.
    data_ = nullptr;
    states_.clear();
    schema_ = rules::Schema::of(data);
    classes_ = data.num_classes();
    const rk::RankedLayout layout = rk::choose_layout(data, options_.features, "pittsburgh/cuda");
    f16_ok_ = layout.packed;
    f16_reason_ = layout.reason;
    std::vector<std::uint32_t> class_rows;
    for (std::uint64_t n : rules::class_rows(data)) class_rows.push_back(static_cast<std::uint32_t>(n));
    if (devices_.empty()) devices_ = resolve_devices(1, {}, device_count(), "pittsburgh/cuda");
    for (int d : devices_) {
      auto st = std::make_unique<DeviceState>();
      st->dev = rk::RuleDeviceData::upload(d, data, layout);  // makes d current
      st->phases = DevicePhases(st->dev->stream);
      st->class_rows.resize(std::max<std::size_t>(1, class_rows.size()));
      if (!class_rows.empty()) st->class_rows.upload(class_rows);
      states_.push_back(std::move(st));
    }
    data_ = &data;
  }

  void evaluate(const pittsburgh::Population& pop, pittsburgh::EvaluationResult& res, PhaseTimer& timer) override {
    GPUDM_REQUIRE(data_ != nullptr, "pittsburgh/cuda: evaluate() before prepare()");
    const std::size_t nd = std::min<std::size_t>(states_.size(), pop.size());
    if (nd > 1) return evaluate_split(pop, res, nd, timer);
    Stopwatch enc;
    const FlatPopulation f = pittsburgh::flatten(pop, schema_);
    res.reset(f, data_->rows());
    const PathChoice c = choose_path(f.max_depth, f.max_individual_words);
    timer.add("encode", enc.seconds());
    record_choice(c);
    if (f.individuals() == 0) {
      res.finish();
      return;
    }
    set_device(states_[0]->dev->device);
    run_device(*states_[0], f, c.fast, c.packed, res, 0, 0, timer);
    fill_accuracy(res);
  }

  nlohmann::ordered_json describe() const override {
    nlohmann::ordered_json j;
    j["path_requested"] = pittsburgh::to_string(options_.path);
    j["path_used"] = evaluated_ ? pittsburgh::to_string(used_path_) : "";
    if (!fallback_reason_.empty()) j["fallback_reason"] = fallback_reason_;
    j["devices"] = states_.size();
    j["device_ids"] = devices_;
    const bool fast = evaluated_ && used_path_ == KernelPath::fast;
    if (fast) {
      j["features"] = pittsburgh::to_string(used_packed_ ? FeatureLayout::f16x2 : FeatureLayout::f32);
      if (!used_packed_ && !packed_reason_.empty()) j["features_reason"] = packed_reason_;
    }
    if (fast && !last_fast_.empty()) j["fast_launch"] = last_fast_;
    return j;
  }

 private:
  // Fast or faithful path, f32 or f16x2 features, from the population's deepest stack and largest
  // individual (the documented fallbacks), and why.
  struct PathChoice {
    bool fast = false, packed = false;
    std::string fallback_reason, packed_reason;
  };
  PathChoice choose_path(int max_depth, int max_individual_words) const {
    PathChoice c;
    c.fast = options_.path == KernelPath::fast;
    if (c.fast && data_->rows() == 0) {  // no tile to launch over; the faithful path's guards handle it
      c.fast = false;
      c.fallback_reason = "the dataset has no rows";
    }
    if (c.fast && classes_ > rk::FastPolicy::kMaxClasses) {
      c.fast = false;
      c.fallback_reason = std::to_string(classes_) + " classes exceed the fast path's one class per lane (" +
                          std::to_string(rk::FastPolicy::kMaxClasses) + ")";
    }
    if (c.fast && max_depth > pitt::FastPolicy::kMaxStackBits) {
      c.fast = false;
      c.fallback_reason = "a rule's stack depth " + std::to_string(max_depth) + " exceeds the fast path's " +
                          std::to_string(pitt::FastPolicy::kMaxStackBits) + "-bit stack";
    }
    if (c.fast && max_individual_words > pitt::max_fast_words()) {
      c.fast = false;
      c.fallback_reason = "an individual has " + std::to_string(max_individual_words) +
                          " words, above the fast path's shared-memory staging limit";
    }
    // The f16x2 layout (two rows per word as ranked codes) when the data allow it and the stacks
    // fit 16 bits (thresholds are rewritten to codes on the device).
    c.packed = c.fast && f16_ok_;
    c.packed_reason = c.fast ? f16_reason_ : "";
    if (c.packed && max_depth > rk::kMaxPackedDepth) {
      c.packed = false;
      c.packed_reason = "a rule's stack depth " + std::to_string(max_depth) + " exceeds the f16x2 layout's " +
                        std::to_string(rk::kMaxPackedDepth);
    }
    return c;
  }
  void record_choice(const PathChoice& c) {
    evaluated_ = true;
    used_path_ = c.fast ? KernelPath::fast : KernelPath::faithful;
    used_packed_ = c.packed;
    fallback_reason_ = c.fallback_reason;
    packed_reason_ = c.packed_reason;
  }
  void fill_accuracy(pittsburgh::EvaluationResult& res) const {
    const std::size_t rows = data_->rows();
    for (std::size_t i = 0; i < res.correct.size(); ++i)
      res.accuracy[i] = rows ? static_cast<double>(res.correct[i]) / static_cast<double>(rows) : 0.0;
  }

  // Several slices: the population is cut into nd slices of about equal work (words), and each
  // slice's host thread flattens and validates its own part (the encode phase runs in parallel,
  // no slice is copied), meets the others at a barrier to agree on the path, then runs its part.
  void evaluate_split(const pittsburgh::Population& pop, pittsburgh::EvaluationResult& res, std::size_t nd,
                      PhaseTimer& timer) {
    Stopwatch split;
    const std::size_t n = pop.size();
    std::vector<std::uint32_t> rule_begin(n + 1, 0);
    std::vector<std::uint64_t> work(n + 1, 0);
    for (std::size_t i = 0; i < n; ++i) {
      std::uint64_t w = 1;
      for (const auto& r : pop.individuals[i].rules) w += r.tokens.size();
      work[i + 1] = work[i] + w;
      rule_begin[i + 1] = rule_begin[i] + static_cast<std::uint32_t>(pop.individuals[i].rules.size());
    }
    const std::vector<std::size_t> cut = balanced_cuts(work, nd);
    // Sized before the slices run (they write their ranges concurrently after the barrier); an
    // invalid population therefore leaves `res` zeroed, not as it was.
    res.reset_counts(std::move(rule_begin), data_->rows());
    const double split_s = split.seconds();

    std::vector<FlatPopulation> parts(nd);
    OneShotBarrier met(nd);
    std::atomic<bool> invalid{false};
    runner_.run(
        nd,
        [&](std::size_t d, PhaseTimer& t) {
          Stopwatch enc;
          try {
            parts[d] = pittsburgh::flatten(pop, schema_, cut[d], cut[d + 1]);
          } catch (...) {
            invalid = true;
            met.arrive_and_wait();
            throw;  // SplitRunner rethrows the first by slice order = population order
          }
          const double encode_s = enc.seconds();
          met.arrive_and_wait();  // nothing that can throw between the flatten and this: every job arrives once
          if (invalid) return;
          t.add("encode", encode_s + split_s);
          int depth = 0, words = 0;
          for (const auto& p : parts) {
            depth = std::max(depth, p.max_depth);
            words = std::max(words, p.max_individual_words);
          }
          const PathChoice c = choose_path(depth, words);  // every thread computes the same choice
          if (d == 0) record_choice(c);
          set_device(states_[d]->dev->device);
          run_device(*states_[d], parts[d], c.fast, c.packed, res, res.individual_rule_begin[cut[d]], cut[d], t);
        },
        timer);  // the critical path: per phase, the slowest slice
    std::uint64_t primitives = 0;
    for (const auto& p : parts) primitives += p.primitives;
    res.gpops = primitives * res.rows;
    fill_accuracy(res);
  }

  void run_device(DeviceState& st, const FlatPopulation& s, bool fast, bool packed, pittsburgh::EvaluationResult& res,
                  std::uint32_t rule_offset, std::size_t ind_offset, PhaseTimer& timer) {
    // Host clock around the device work: what the wall-clock evaluation holds beyond the
    // device-timed phases (launch configuration, staging, launch latency, the wait).
    Stopwatch host_submit;
    cudaStream_t strm = st.dev->stream.get();
    const DatasetView dv = st.dev->data.view();
    const std::size_t rows = dv.rows;
    const std::size_t nrules = s.rules(), ninds = s.individuals();
    const DeviceProps& props = device_props(st.dev->device);
    pitt::FastLaunch fl;
    if (fast) {
      fl = pitt::plan_fast(props, dv.cols, rows, packed, s);
      std::lock_guard<std::mutex> lock(info_mutex_);
      if (&st == states_.front().get())
        last_fast_ = {{"block", fl.block}, {"rows_per_thread", fl.rows_per_thread},
                      {"tile_rows", fl.block * fl.rows_per_thread}, {"rows_per_word", fl.rows_per_word},
                      {"tile_bytes", fl.tile_bytes}, {"groups", fl.groups}, {"tiles", fl.tiles},
                      {"shared_bytes", fl.shared_bytes}};
    }

    // The population goes up as one pinned blob (one asynchronous copy) and the results come
    // back as one: small pageable copies cost a synchronous staging each, and two host threads
    // (two devices) serialise on them.
    const std::uint32_t* in_dev = nullptr;
    std::size_t off[8] = {};
    {
      auto ph = st.phases.scope("transfers");
      // 32-bit words, in the order of off[]: words, rule_begin, consequent, ind_rule_begin,
      // ind_word_begin, default_class, groups (fast path)
      const std::pair<const void*, std::size_t> parts[7] = {
          {s.antecedents.words.data(), s.antecedents.words.size()},
          {s.antecedents.rule_begin.data(), s.antecedents.rule_begin.size()},
          {s.rule_consequent.data(), s.rule_consequent.size()},
          {s.individual_rule_begin.data(), s.individual_rule_begin.size()},
          {s.individual_word_begin.data(), s.individual_word_begin.size()},
          {s.default_class.data(), s.default_class.size()},
          {fl.group_begin.data(), fast ? fl.group_begin.size() : 0}};
      for (int k = 0; k < 7; ++k) off[k + 1] = off[k] + parts[k].second;
      const std::size_t total = std::max<std::size_t>(1, off[7]);
      if (st.h_in.size() < total) st.h_in = PinnedBuffer<std::uint32_t>(total + total / 2);
      for (int k = 0; k < 7; ++k)
        if (parts[k].second) std::memcpy(st.h_in.data() + off[k], parts[k].first, parts[k].second * sizeof(std::uint32_t));
      st.in_blob.resize(total);
      st.in_blob.upload_async(st.h_in.data(), off[7], strm);
      in_dev = st.in_blob.data();
    }
    const std::size_t out_words = 5 * nrules + ninds;  // confusion (4 words) | fitness | correct
    st.out_blob.resize(std::max<std::size_t>(1, out_words));
    auto* confusion_dev = reinterpret_cast<rules::ConfusionMatrix*>(st.out_blob.data());
    auto* fitness_dev = reinterpret_cast<float*>(st.out_blob.data() + 4 * nrules);
    std::uint32_t* correct_dev = st.out_blob.data() + 5 * nrules;
    pitt::PopView pv;
    pv.words = in_dev + off[0];
    if (packed && nrules) {  // the thresholds as ranked codes, one warp per rule
      auto ph = st.phases.scope("rewrite_ranked");
      st.words16.resize(s.antecedents.words.size());
      rk::launch_rewrite_ranked(pv.words, in_dev + off[1], static_cast<std::uint32_t>(nrules), st.dev->rank_values.data(),
                                st.dev->rank_begin.data(), st.words16.data(), strm);
      pv.words = st.words16.data();
    }
    pv.rule_begin = in_dev + off[1];
    pv.rule_consequent = reinterpret_cast<const std::int32_t*>(in_dev + off[2]);
    pv.ind_rule_begin = in_dev + off[3];
    pv.ind_word_begin = in_dev + off[4];
    pv.default_class = reinterpret_cast<const std::int32_t*>(in_dev + off[5]);
    pv.individuals = static_cast<std::uint32_t>(ninds);
    pv.max_rules = static_cast<std::uint32_t>(std::max(1, s.max_rules));

    if (fast) {
      st.counts.resize(std::max<std::size_t>(1, 2 * nrules));
      {
        auto ph = st.phases.scope("coverage_fused");
        st.counts.memset_async(0, strm);
        if (ninds) GPUDM_CUDA_CHECK(cudaMemsetAsync(correct_dev, 0, ninds * sizeof(std::uint32_t), strm));
        pitt::FastArgs a;
        a.pop = pv;
        a.data = dv;
        a.group_begin = in_dev + off[6];
        a.max_group_words = fl.max_group_words;
        a.max_group_counters = fl.max_group_counters;
        a.tiles = fl.tiles;
        a.classes = classes_;
        a.rule_counts = st.counts.data();
        a.correct = correct_dev;
        a.features16 = packed ? st.dev->features16.data() : nullptr;
        pitt::launch_fused(fl, a, packed, props, strm);
      }
      {
        auto ph = st.phases.scope("ruleset_fitness");
        pitt::launch_finalize(st.counts.data(), pv.rule_consequent, st.class_rows.data(), nrules, rows, confusion_dev,
                              fitness_dev, strm);
      }
    } else {
      const std::size_t stride = pitt::faithful_stride(rows);
      st.result.resize(std::max<std::size_t>(1, ninds * pv.max_rules * stride));
      st.classified.resize(std::max<std::size_t>(1, ninds * stride));
      {
        auto ph = st.phases.scope("coverage");
        pitt::launch_coverage(pv, dv, nrules, st.result.data(), stride, strm);
      }
      {
        auto ph = st.phases.scope("rule_fitness");
        pitt::launch_rule_fitness(pv, nrules, st.result.data(), stride, rows, confusion_dev, fitness_dev, strm);
      }
      {
        auto ph = st.phases.scope("classification");
        pitt::launch_classification(pv, dv, st.result.data(), stride, st.classified.data(), strm);
      }
      {
        auto ph = st.phases.scope("ruleset_fitness");
        pitt::launch_ruleset_fitness(pv, st.classified.data(), stride, rows, correct_dev, strm);
      }
    }
    {
      auto ph = st.phases.scope("transfers");
      if (st.h_out.size() < out_words) st.h_out = PinnedBuffer<std::uint32_t>(out_words + out_words / 2);
      st.out_blob.download_async(st.h_out.data(), out_words, strm);
    }
    timer.add("host_submit", host_submit.seconds(), PhaseClock::host);
    Stopwatch host_wait;
    st.dev->stream.synchronize();
    timer.add("host_wait", host_wait.seconds(), PhaseClock::host);
    std::memcpy(static_cast<void*>(res.rule_confusion.data() + rule_offset), st.h_out.data(),
                nrules * sizeof(rules::ConfusionMatrix));
    std::memcpy(res.rule_fitness.data() + rule_offset, st.h_out.data() + 4 * nrules, nrules * sizeof(float));
    std::memcpy(res.correct.data() + ind_offset, st.h_out.data() + 5 * nrules, ninds * sizeof(std::uint32_t));
    st.phases.flush(timer);
  }

  const Dataset* data_ = nullptr;
  rules::Schema schema_;
  bool f16_ok_ = false, used_packed_ = false;
  std::string f16_reason_, packed_reason_;
  int classes_ = 0;
  std::vector<int> devices_;  // one entry per slice (may repeat a device)
  std::vector<std::unique_ptr<DeviceState>> states_;
  SplitRunner runner_;
  bool evaluated_ = false;  // describe() reports a path once one ran
  KernelPath used_path_ = KernelPath::fast;
  std::string fallback_reason_;
  nlohmann::ordered_json last_fast_;
  std::mutex info_mutex_;
};

}  // namespace

std::unique_ptr<pittsburgh::RuleSetEvaluator> make_pittsburgh_evaluator() {
  return std::make_unique<CudaRuleSetEvaluator>();
}

}  // namespace gpudm::backend::cuda
