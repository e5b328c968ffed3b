// CUDA TreeInterpreter: owns the stream and the device buffers; prepare() uploads the dataset
// once, evaluate() encodes the population for the chosen interpreter, uploads it, runs one
// batched launch over the whole population and downloads the coverage bits.
#include <memory>
#include <string>

#include "backends/subtree.hpp"
#include "algorithms/subtree/encoding.hpp"
#include "backends/cuda/common/common.cuh"
#include "backends/cuda/subtree/launch.cuh"
#include "backends/cuda/subtree/policy.cuh"

namespace gpudm::backend::cuda {

namespace {

namespace k = subtree_kernels;
namespace st = ::gpudm::subtree;

class CudaTreeInterpreter final : public st::TreeInterpreter {
 public:
  CudaTreeInterpreter() : device_(require_device()) {}

  std::string name() const override { return "cuda"; }
  Capabilities capabilities() const override {
    Capabilities c;
    c.placement = Placement::device;
    c.devices = 1;
    c.deterministic_over = "launch shape";
    return c;
  }

  void prepare(const Dataset& data) override {
    set_device(device_);
    data_ = upload_dataset(data, stream_);
    has_nan_ = st::features_have_nan(data);
    prepared_ = true;
  }

  void evaluate(const st::Population& pop, st::Coverage& out, PhaseTimer& host) override {
    if (!prepared_) throw Error("subtree/cuda: evaluate() before prepare()");
    set_device(device_);
    DevicePhases phases(stream_, host.enabled());
    const DatasetView view = data_.view();
    const std::size_t wpt = (view.rows + 31) / 32;
    const std::size_t cov_words = static_cast<std::size_t>(pop.trees) * wpt;
    out.reset(pop.trees, view.rows);
    d_cov_.resize(cov_words);

    const st::Strategy s = st::resolve_strategy(options_.strategy, Placement::device);
    st::TokenStreams tokens;
    std::vector<st::Node> levels;
    st::BitTrees bits;
    {
      auto scope = host.scope("encode");
      switch (s) {
        case st::Strategy::postfix: tokens = st::encode_postfix(pop); break;
        case st::Strategy::mixed: tokens = st::encode_mixed(pop); break;
        case st::Strategy::subtree: levels = st::encode_levels(pop); break;
        case st::Strategy::best: bits = st::encode_bits(pop); break;
        case st::Strategy::automatic: break;  // resolved above
      }
    }
    {
      auto p = phases.scope("upload");
      switch (s) {
        case st::Strategy::postfix:
        case st::Strategy::mixed:
          upload(d_tokens_, tokens.tokens);
          upload(d_offsets_, tokens.offsets);
          break;
        case st::Strategy::subtree: upload(d_levels_, levels); break;
        case st::Strategy::best:
          upload(d_leaves_, bits.leaves);
          upload(d_masks_, bits.and_masks);
          upload(d_neg_, bits.neg_masks);
          break;
        case st::Strategy::automatic: break;
      }
    }
    {
      auto p = phases.scope("interpret");
      switch (s) {
        case st::Strategy::postfix:
          k::launch_postfix(view, d_tokens_.data(), d_offsets_.data(), pop.trees, d_cov_.data(), wpt, stream_);
          break;
        case st::Strategy::mixed:
          k::launch_mixed(view, d_tokens_.data(), d_offsets_.data(), pop.trees, d_cov_.data(), wpt, stream_);
          break;
        case st::Strategy::subtree:
          k::launch_subtree(view, d_levels_.data(), pop.depth, pop.trees, d_cov_.data(), wpt, device_props(device_), stream_);
          break;
        case st::Strategy::best:
          best_ = k::plan_best(view, pop.depth, pop.trees, has_nan_, device_props(device_));
          k::launch_best(view, d_leaves_.data(), d_masks_.data(), d_neg_.data(), pop.depth, pop.trees, d_cov_.data(), wpt,
                         best_, stream_);
          break;
        case st::Strategy::automatic: break;
      }
    }
    {
      auto p = phases.scope("download");
      d_cov_.download_async(out.bits.data(), cov_words, stream_);
    }
    stream_.synchronize();
    phases.flush(host);
    last_ = s;
  }

  nlohmann::ordered_json describe() const override {
    nlohmann::ordered_json j;
    j["interpreter"] = st::to_string(last_);
    j["device"] = device_props(device_).name;
    if (last_ == st::Strategy::best) {
      j["rows_per_thread"] = best_.rows_per_thread;
      j["staged_in_shared_memory"] = best_.staged;
      j["trees_per_block"] = best_.trees_per_block;
      j["grid"] = {best_.tiles, best_.groups};
      j["block"] = k::BestPolicy::kBlock;
      j["shared_bytes"] = best_.shared_bytes;
      j["nan_checks"] = best_.nan_checks;
    } else if (last_ == st::Strategy::subtree) {
      j["block"] = {k::SubtreePolicy::kInstances, k::SubtreePolicy::kMaxSlotThreads};
    } else {
      j["block"] = k::StackPolicy::kBlock;
    }
    return j;
  }

 private:
  template <class T>
  void upload(DeviceBuffer<T>& d, const std::vector<T>& h) {
    d.resize(h.size());
    d.upload_async(h.data(), h.size(), stream_);
  }

  int device_;
  Stream stream_;  // declared before the buffers: they are freed first
  DeviceDataset data_;
  DeviceBuffer<std::uint32_t> d_tokens_, d_offsets_, d_cov_;
  DeviceBuffer<st::Node> d_levels_;
  DeviceBuffer<st::BitLeaf> d_leaves_;
  DeviceBuffer<std::uint64_t> d_masks_, d_neg_;
  k::BestLaunch best_;
  st::Strategy last_ = st::Strategy::best;
  bool prepared_ = false;
  bool has_nan_ = true;
};

}  // namespace

std::unique_ptr<st::TreeInterpreter> make_subtree_interpreter() { return std::make_unique<CudaTreeInterpreter>(); }

}  // namespace gpudm::backend::cuda
