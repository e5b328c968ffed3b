// CUDA Pittsburgh evaluator: owns one DeviceState per GPU (stream before buffers), splits the
// population over the devices (one host thread per device), launches the faithful or the fast
// path, and gathers the integer results. See kernels.cuh for the kernels.
#include "backends/cuda/pittsburgh/evaluator.hpp"

#include <algorithm>
#include <exception>
#include <mutex>
#include <thread>
#include <vector>

#include "algorithms/core/stopwatch.hpp"
#include "backends/cuda/common/buffer.cuh"
#include "backends/cuda/common/dataset.cuh"
#include "backends/cuda/common/device.cuh"
#include "backends/cuda/common/error.cuh"
#include "backends/cuda/common/event_timer.cuh"
#include "backends/cuda/common/nvml.hpp"
#include "backends/cuda/common/stream.cuh"
#include "backends/cuda/pittsburgh/kernels.cuh"

namespace gpudm::backend::cuda {

namespace {

using pittsburgh::FlatPopulation;

// Individuals [a, b) of `f` with offsets rebased to the slice.
FlatPopulation slice(const FlatPopulation& f, std::size_t a, std::size_t b) {
  FlatPopulation s;
  const std::uint32_t ra = f.individual_rule_begin[a], rb = f.individual_rule_begin[b];
  const std::uint32_t wa = f.individual_word_begin[a], wb = f.individual_word_begin[b];
  s.words.assign(f.words.begin() + wa, f.words.begin() + wb);
  for (std::uint32_t r = ra; r < rb; ++r) s.rule_word_begin.push_back(f.rule_word_begin[r] - wa);
  s.rule_consequent.assign(f.rule_consequent.begin() + ra, f.rule_consequent.begin() + rb);
  s.rule_primitives.assign(f.rule_primitives.begin() + ra, f.rule_primitives.begin() + rb);
  for (std::size_t i = a; i <= b; ++i) {
    s.individual_rule_begin.push_back(f.individual_rule_begin[i] - ra);
    s.individual_word_begin.push_back(f.individual_word_begin[i] - wa);
  }
  s.default_class.assign(f.default_class.begin() + a, f.default_class.begin() + b);
  for (std::size_t i = a; i < b; ++i) {
    s.max_rules = std::max(s.max_rules, static_cast<int>(f.rules_of(i)));
    s.max_individual_words = std::max(
        s.max_individual_words, static_cast<int>(f.individual_word_begin[i + 1] - f.individual_word_begin[i]));
  }
  for (auto p : s.rule_primitives) s.primitives += p;
  s.max_depth = f.max_depth;
  return s;
}

template <class T>
void upload_vec(DeviceBuffer<T>& d, const std::vector<T>& h, cudaStream_t s) {
  d.resize(std::max<std::size_t>(1, h.size()));
  d.upload_async(h.data(), h.size(), s);
}

struct FastConfig {
  int block = 256, r = 4;
  std::size_t tile_bytes = 0, smem = 0;
  unsigned grid_x = 1, grid_y = 1;
};

// Everything one GPU holds. The stream is declared before the buffers (destroyed after them).
struct DeviceState {
  int device = 0;
  Stream stream;
  DeviceDataset data;
  DeviceBuffer<std::uint32_t> words, rule_word_begin, ind_rule_begin, ind_word_begin, group_begin, counts, correct;
  DeviceBuffer<std::int32_t> consequent, default_class;
  DeviceBuffer<std::uint8_t> result, classified;  // faithful path
  DeviceBuffer<rules::ConfusionMatrix> confusion;
  DeviceBuffer<float> fitness;
  DevicePhases phases{nullptr};
  explicit DeviceState(int dev) : device(dev) {}
};

class CudaRuleSetEvaluator final : public pittsburgh::RuleSetEvaluator {
 public:
  std::string backend() const override { return "cuda"; }

  void configure(const pittsburgh::EvaluatorOptions& o) override {
    if (o.path != "faithful" && o.path != "fast")
      throw Error("pittsburgh/cuda: path '" + o.path + "' is unknown (use \"faithful\" or \"fast\")");
    if (o.devices < 1) throw Error("pittsburgh/cuda: devices must be >= 1");
    const int have = device_count();
    if (o.devices > have)
      throw Unavailable("pittsburgh/cuda: " + std::to_string(o.devices) + " devices requested, " +
                        std::to_string(have) + " present");
    const bool changed = o.devices != options_.devices;
    options_ = o;
    if (changed && data_) prepare(*data_);
  }

  void prepare(const Dataset& data) override {
    GPUDM_REQUIRE(data.task() == Task::classification,
                  "pittsburgh: dataset '" + data.name() + "' is not a classification dataset");
    GPUDM_REQUIRE(data.rows() < (1ull << 32), "pittsburgh/cuda: more than 2^32 rows");
    data_ = &data;
    schema_ = rules::Schema::of(data);
    states_.clear();
    const int n = std::max(1, options_.devices);
    for (int d = 0; d < n; ++d) {
      set_device(d);
      auto st = std::make_unique<DeviceState>(d);
      st->phases = DevicePhases(st->stream.get());
      st->data = upload_dataset(data, st->stream.get());
      states_.push_back(std::move(st));
    }
  }

  void evaluate(const pittsburgh::Population& pop, pittsburgh::EvaluationResult& res) override {
    GPUDM_REQUIRE(data_ != nullptr, "pittsburgh/cuda: evaluate() before prepare()");
    Stopwatch enc;
    const FlatPopulation f = pittsburgh::flatten(pop, schema_);
    const std::size_t rows = data_->rows();
    res.reset(f, rows);
    bool fast = options_.path == "fast";
    fallback_reason_.clear();
    if (fast && f.max_depth > pitt::FastPolicy::kMaxStackBits) {  // documented fallback
      fast = false;
      fallback_reason_ = "a rule's stack depth " + std::to_string(f.max_depth) + " exceeds the fast path's " +
                         std::to_string(pitt::FastPolicy::kMaxStackBits) + "-bit stack";
    }
    if (fast && f.max_individual_words > max_fast_words()) {
      fast = false;
      fallback_reason_ = "an individual has " + std::to_string(f.max_individual_words) +
                         " words, above the fast path's shared-memory staging limit";
    }
    res.phases.add("encode", enc.seconds());
    used_path_ = fast ? "fast" : "faithful";
    if (f.individuals() == 0) {
      res.finish();
      return;
    }
    // Split individuals evenly by primitives (work) over the devices.
    const std::size_t nd = std::min<std::size_t>(states_.size(), f.individuals());
    std::vector<std::size_t> cut(nd + 1, f.individuals());
    cut[0] = 0;
    {
      std::vector<std::uint64_t> work(f.individuals() + 1, 0);
      for (std::size_t i = 0; i < f.individuals(); ++i) {
        std::uint64_t w = 1;
        for (std::uint32_t r = f.individual_rule_begin[i]; r < f.individual_rule_begin[i + 1]; ++r)
          w += f.rule_primitives[r];
        work[i + 1] = work[i] + w;
      }
      for (std::size_t d = 1; d < nd; ++d) {
        const std::uint64_t target = work.back() * d / nd;
        std::size_t i = static_cast<std::size_t>(std::lower_bound(work.begin(), work.end(), target) - work.begin());
        cut[d] = std::clamp<std::size_t>(i, cut[d - 1] + 1, f.individuals() - (nd - d));
      }
    }
    std::vector<PhaseTimer> timers(nd);
    std::vector<std::exception_ptr> errors(nd);
    auto work = [&](std::size_t d) {
      try {
        set_device(states_[d]->device);
        run_device(*states_[d], slice(f, cut[d], cut[d + 1]), fast, res, f.individual_rule_begin[cut[d]],
                   cut[d], timers[d]);
      } catch (...) {
        errors[d] = std::current_exception();
      }
    };
    if (nd == 1) {
      work(0);
    } else {
      std::vector<std::thread> threads;
      for (std::size_t d = 0; d < nd; ++d) threads.emplace_back(work, d);
      for (auto& t : threads) t.join();
    }
    for (auto& e : errors)
      if (e) std::rethrow_exception(e);
    // The critical path: per phase, the slowest device.
    for (const auto& p : timers[0].phases()) {
      double s = 0;
      for (const auto& t : timers) s = std::max(s, t.seconds(p.name));
      res.phases.add(p.name, s, p.clock);
    }
    for (std::size_t i = 0; i < f.individuals(); ++i)
      res.accuracy[i] = rows ? static_cast<double>(res.correct[i]) / static_cast<double>(rows) : 0.0;
  }

  nlohmann::ordered_json info() const override {
    nlohmann::ordered_json j;
    j["path_requested"] = options_.path;
    j["path_used"] = used_path_;
    if (!fallback_reason_.empty()) j["fallback_reason"] = fallback_reason_;
    j["devices"] = states_.size();
    if (used_path_ == "fast" && !last_fast_.empty()) j["fast_launch"] = last_fast_;
    return j;
  }

  void energy_begin() override {
    meters_.clear();
    for (const auto& st : states_) {
      meters_.push_back(std::make_unique<nvml::EnergyMeter>(st->device));
      meters_.back()->start();
    }
  }
  nlohmann::ordered_json energy_end() override {
    nlohmann::ordered_json j;
    double joules = 0, secs = 0;
    nlohmann::ordered_json per = nlohmann::ordered_json::array();
    for (auto& m : meters_) {
      const nvml::EnergyReading r = m->stop();
      if (!r.available) return {{"available", false}, {"reason", "NVML: " + r.reason}};
      joules += r.joules;
      secs = std::max(secs, r.seconds);
      per.push_back(r.to_json());
    }
    if (meters_.empty()) return {{"available", false}, {"reason", "energy_begin() not called"}};
    j["available"] = true;
    j["method"] = "nvml";
    j["seconds"] = secs;
    j["joules"] = joules;
    j["mean_watts"] = secs > 0 ? joules / secs : 0.0;
    j["devices"] = per;
    meters_.clear();
    return j;
  }

 private:
  int max_fast_words() const {
    return pitt::FastPolicy::kWordsBudget * 4;  // a single larger individual gets a larger group
  }

  static FastConfig fast_config(const DeviceProps& p, std::size_t cols, std::size_t rows, const FlatPopulation& s,
                                std::vector<std::uint32_t>& groups, std::uint32_t& max_words,
                                std::uint32_t& max_counters) {
    FastConfig c;
    const std::size_t target = pitt::FastPolicy::kTileBytesTarget;
    if (cols * 256 * 4 * 4 <= target) c.r = 4;
    else if (cols * 256 * 2 * 4 <= target) c.r = 2;
    else if (cols * 256 * 4 <= target) c.r = 1;
    else {
      c.block = 128;
      c.r = 1;
    }
    const std::size_t T = static_cast<std::size_t>(c.block) * c.r;
    c.tile_bytes = cols * T * sizeof(float);
    const std::uint32_t tiles = static_cast<std::uint32_t>((rows + T - 1) / T);
    // Groups of whole individuals within the word budget, and small enough to give every SM
    // work when the data has few tiles.
    const std::size_t n = s.individuals();
    const std::size_t want_blocks = static_cast<std::size_t>(p.sm_count) * 4;
    const std::size_t want_groups = std::clamp<std::size_t>((want_blocks + tiles - 1) / tiles, 1, n);
    const std::size_t per_group = (n + want_groups - 1) / want_groups;
    groups.assign(1, 0);
    max_words = 0;
    max_counters = 0;
    std::size_t start = 0;
    while (start < n) {
      std::size_t end = start + 1;
      while (end < n && end - start < per_group &&
             s.individual_word_begin[end + 1] - s.individual_word_begin[start] <=
                 static_cast<std::uint32_t>(pitt::FastPolicy::kWordsBudget))
        ++end;
      groups.push_back(static_cast<std::uint32_t>(end));
      max_words = std::max(max_words, s.individual_word_begin[end] - s.individual_word_begin[start]);
      max_counters = std::max(max_counters, 3 * (s.individual_rule_begin[end] - s.individual_rule_begin[start]) +
                                                static_cast<std::uint32_t>(end - start));
      start = end;
    }
    c.smem = c.tile_bytes + (static_cast<std::size_t>(max_words) + max_counters) * sizeof(std::uint32_t);
    c.grid_y = static_cast<unsigned>(groups.size() - 1);
    c.grid_x = tiles;
    return c;
  }

  template <int B, int R>
  static void launch_fused(const FastConfig& c, const pitt::FastArgs& a, cudaStream_t s, const DeviceProps& p) {
    auto k = pitt::fused_kernel<B, R>;
    if (c.smem > p.smem_per_block_optin)
      throw Error("pittsburgh/cuda fast path: needs " + std::to_string(c.smem) + " bytes of shared memory, device has " +
                  std::to_string(p.smem_per_block_optin));
    GPUDM_CUDA_CHECK(cudaFuncSetAttribute(k, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(c.smem)));
    int per_sm = 0;
    GPUDM_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, k, B, c.smem));
    per_sm = std::clamp(per_sm, 1, pitt::FastPolicy::kBlocksPerSmCap);
    // Persistent blocks along x: enough to fill the device once across all groups.
    const std::size_t resident = static_cast<std::size_t>(per_sm) * p.sm_count;
    const std::size_t gx = std::max<std::size_t>(1, (resident + c.grid_y - 1) / c.grid_y);
    dim3 grid(static_cast<unsigned>(std::min<std::size_t>(c.grid_x, gx)), c.grid_y);
    k<<<grid, B, c.smem, s>>>(a);
    GPUDM_CUDA_CHECK_LAUNCH();
  }

  void run_device(DeviceState& st, const FlatPopulation& s, bool fast, pittsburgh::EvaluationResult& res,
                  std::uint32_t rule_offset, std::size_t ind_offset, PhaseTimer& timer) {
    cudaStream_t strm = st.stream.get();
    const DatasetView dv = st.data.view();
    const std::size_t rows = dv.rows;
    const std::size_t nrules = s.rules(), ninds = s.individuals();
    const DeviceProps& props = device_props(st.device);
    std::vector<std::uint32_t> groups;
    FastConfig fc;
    std::uint32_t max_words = 0, max_counters = 0;
    if (fast) {
      fc = fast_config(props, dv.cols, rows, s, groups, max_words, max_counters);
      std::lock_guard<std::mutex> lock(info_mutex_);
      if (st.device == states_.front()->device)
        last_fast_ = {{"block", fc.block}, {"rows_per_thread", fc.r}, {"tile_rows", fc.block * fc.r},
                      {"tile_bytes", fc.tile_bytes}, {"groups", fc.grid_y}, {"tiles", fc.grid_x},
                      {"shared_bytes", fc.smem}};
    }

    {
      auto ph = st.phases.scope("transfers");
      upload_vec(st.words, s.words, strm);
      upload_vec(st.rule_word_begin, s.rule_word_begin, strm);
      upload_vec(st.consequent, s.rule_consequent, strm);
      upload_vec(st.ind_rule_begin, s.individual_rule_begin, strm);
      upload_vec(st.ind_word_begin, s.individual_word_begin, strm);
      upload_vec(st.default_class, s.default_class, strm);
      if (fast) upload_vec(st.group_begin, groups, strm);
    }
    st.confusion.resize(std::max<std::size_t>(1, nrules));
    st.fitness.resize(std::max<std::size_t>(1, nrules));
    st.correct.resize(std::max<std::size_t>(1, ninds));
    pitt::PopView pv;
    pv.words = st.words.data();
    pv.rule_word_begin = st.rule_word_begin.data();
    pv.rule_consequent = st.consequent.data();
    pv.ind_rule_begin = st.ind_rule_begin.data();
    pv.ind_word_begin = st.ind_word_begin.data();
    pv.default_class = st.default_class.data();
    pv.individuals = static_cast<std::uint32_t>(ninds);
    pv.max_rules = static_cast<std::uint32_t>(std::max(1, s.max_rules));

    if (fast) {
      st.counts.resize(std::max<std::size_t>(1, 3 * nrules));
      {
        auto ph = st.phases.scope("coverage_fused");
        st.counts.memset_async(0, strm);
        st.correct.memset_async(0, strm);
        pitt::FastArgs a;
        a.pop = pv;
        a.data = dv;
        a.group_begin = st.group_begin.data();
        a.max_group_words = max_words;
        a.max_group_counters = max_counters;
        a.tiles = fc.grid_x;
        a.rule_counts = st.counts.data();
        a.correct = st.correct.data();
        if (fc.block == 256 && fc.r == 4) launch_fused<256, 4>(fc, a, strm, props);
        else if (fc.block == 256 && fc.r == 2) launch_fused<256, 2>(fc, a, strm, props);
        else if (fc.block == 256) launch_fused<256, 1>(fc, a, strm, props);
        else launch_fused<128, 1>(fc, a, strm, props);
      }
      {
        auto ph = st.phases.scope("ruleset_fitness");
        if (nrules) {
          pitt::finalize_kernel<<<grid_for(nrules, 128), 128, 0, strm>>>(
              st.counts.data(), static_cast<std::uint32_t>(nrules), static_cast<std::uint32_t>(rows),
              st.confusion.data(), st.fitness.data());
          GPUDM_CUDA_CHECK_LAUNCH();
        }
      }
    } else {
      using P = pitt::FaithfulPolicy;
      const std::size_t stride = (rows + P::kCoverageThreads - 1) / P::kCoverageThreads * P::kCoverageThreads;
      st.result.resize(std::max<std::size_t>(1, ninds * pv.max_rules * stride));
      st.classified.resize(std::max<std::size_t>(1, ninds * stride));
      const unsigned ry = std::min<unsigned>(grid_for(rows, P::kCoverageThreads), P::kMaxGridY);
      {
        auto ph = st.phases.scope("coverage");
        if (nrules && rows) {
          pitt::coverage_kernel<<<dim3(static_cast<unsigned>(ninds), ry, pv.max_rules), P::kCoverageThreads, 0, strm>>>(
              pv, dv, st.result.data(), stride);
          GPUDM_CUDA_CHECK_LAUNCH();
        }
      }
      {
        auto ph = st.phases.scope("rule_fitness");
        if (nrules) {
          pitt::rule_fitness_kernel<<<dim3(static_cast<unsigned>(ninds), pv.max_rules), P::kRuleFitnessThreads, 0, strm>>>(
              pv, st.result.data(), stride, rows, st.confusion.data(), st.fitness.data());
          GPUDM_CUDA_CHECK_LAUNCH();
        }
      }
      {
        auto ph = st.phases.scope("classification");
        if (rows) {
          pitt::classification_kernel<<<dim3(static_cast<unsigned>(ninds), ry), P::kClassificationThreads, 0, strm>>>(
              pv, dv, st.result.data(), stride, st.classified.data());
          GPUDM_CUDA_CHECK_LAUNCH();
        }
      }
      {
        auto ph = st.phases.scope("ruleset_fitness");
        pitt::ruleset_fitness_kernel<<<static_cast<unsigned>(ninds), P::kRuleSetFitnessThreads, 0, strm>>>(
            st.classified.data(), stride, rows, st.correct.data());
        GPUDM_CUDA_CHECK_LAUNCH();
      }
    }
    {
      auto ph = st.phases.scope("transfers");
      st.confusion.download_async(res.rule_confusion.data() + rule_offset, nrules, strm);
      st.fitness.download_async(res.rule_fitness.data() + rule_offset, nrules, strm);
      st.correct.download_async(res.correct.data() + ind_offset, ninds, strm);
    }
    st.stream.synchronize();
    st.phases.flush(timer);
  }

  const Dataset* data_ = nullptr;
  rules::Schema schema_;
  std::vector<std::unique_ptr<DeviceState>> states_;
  std::vector<std::unique_ptr<nvml::EnergyMeter>> meters_;
  std::string used_path_, fallback_reason_;
  nlohmann::ordered_json last_fast_;
  std::mutex info_mutex_;
};

}  // namespace

std::unique_ptr<pittsburgh::RuleSetEvaluator> make_pittsburgh_evaluator() {
  return std::make_unique<CudaRuleSetEvaluator>();
}

}  // namespace gpudm::backend::cuda
