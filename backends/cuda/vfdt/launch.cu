#include "backends/cuda/vfdt/launch.cuh"

#include <string>

#include "backends/cuda/common/device.cuh"
#include "backends/cuda/common/error.cuh"
#include "backends/cuda/vfdt/faithful.cuh"
#include "backends/cuda/vfdt/kernels.cuh"
#include "backends/cuda/vfdt/persistent.cuh"

namespace gpudm::backend::cuda::vfdt_kernels {

void check_supported(const vfdt::ForestParams& p, const vfdt::EncodedStream& s) {
  if (s.classes > Policy::kMaxClasses)
    throw Unavailable("vfdt/cuda: " + std::to_string(s.classes) + " classes; the vote kernel supports at most " +
                      std::to_string(Policy::kMaxClasses));
  if (p.path == vfdt::ForestPath::faithful) {
    if (s.attributes > FaithfulPolicy::kSortCapacity)
      throw Error("vfdt/cuda faithful: at most " + std::to_string(FaithfulPolicy::kSortCapacity) + " attributes");
    return;
  }
  if (!p.stream_order()) return;
  if (p.cuda_engine() != vfdt::Engine::persistent)
    throw Error(std::string("vfdt/cuda: batch_order \"stream\" runs on the persistent engine only (engine \"") +
                vfdt::to_string(p.cuda_engine()) +
                "\" runs \"deferred\"); use engine \"persistent\" or batch_order \"deferred\"");
  if (p.naive_bayes())
    throw Error("vfdt/cuda: batch_order \"stream\" runs majority-class leaves only (its in-batch walk keeps majority "
                "votes); leaf_prediction \"nb\" runs with batch_order \"deferred\" (or \"auto\")");
  if (p.batch > 32 * Policy::kStreamWindows)
    throw Error("vfdt/cuda: batch_order \"stream\" supports batch <= " + std::to_string(32 * Policy::kStreamWindows) +
                " on the GPU, got " + std::to_string(p.batch) + "; use a smaller batch or batch_order \"deferred\"");
}

void launch_init(const ForestView& f, cudaStream_t stream) {
  k_init<<<f.trees, Policy::kSplitBlock, 0, stream>>>(f);
  GPUDM_CUDA_CHECK_LAUNCH();
}

void launch_predict(const ForestView& f, const std::uint8_t* codes, int nb, cudaStream_t stream) {
  k_predict<<<dim3(grid_for(nb, Policy::kInstanceBlock), f.trees), Policy::kInstanceBlock, 0, stream>>>(f, codes, nb);
  GPUDM_CUDA_CHECK_LAUNCH();
}

void launch_learn(const ForestView& f, const std::uint8_t* codes, const std::uint8_t* labels, int nb,
                  std::uint64_t first_instance, cudaStream_t stream) {
  k_learn<<<dim3(grid_for(nb, Policy::kInstanceBlock), f.trees), Policy::kInstanceBlock, 0, stream>>>(
      f, codes, labels, nb, first_instance);
  GPUDM_CUDA_CHECK_LAUNCH();
}

void launch_adwin_prefix(const ForestView& f, const std::uint8_t* labels, int nb, std::uint32_t pos0, cudaStream_t stream) {
  k_adwin_prefix<Policy::kAdwinBlock><<<f.trees, Policy::kAdwinBlock, 0, stream>>>(f, labels, nb, pos0);
  GPUDM_CUDA_CHECK_LAUNCH();
}

void launch_split(const ForestView& f, cudaStream_t stream) {
  k_split<<<f.trees, Policy::kSplitBlock, 0, stream>>>(f);
  GPUDM_CUDA_CHECK_LAUNCH();
}

void launch_persistent(const ForestView& f, const std::uint8_t* codes, const std::uint8_t* labels, std::size_t n,
                       std::uint32_t pos0, unsigned long long* cycles, cudaStream_t stream) {
  k_forest_persistent<Policy::kPersistentBlock><<<f.trees, Policy::kPersistentBlock, 0, stream>>>(f, codes, labels, n,
                                                                                                  pos0, cycles);
  GPUDM_CUDA_CHECK_LAUNCH();
}

void launch_vote(const VoteView& v, std::size_t n, std::int32_t* out, cudaStream_t stream) {
  k_vote<<<grid_for(n, Policy::kInstanceBlock), Policy::kInstanceBlock, 0, stream>>>(v, n, out);
  GPUDM_CUDA_CHECK_LAUNCH();
}

void launch_tally(const VoteView& v, std::size_t n, std::uint32_t* out, cudaStream_t stream) {
  k_tally<<<grid_for(n, Policy::kInstanceBlock), Policy::kInstanceBlock, 0, stream>>>(v, n, out);
  GPUDM_CUDA_CHECK_LAUNCH();
}

void launch_adwin(const AdwinView& a, vfdt::AdwinKernel kernel, const std::uint8_t* labels, int nb, cudaStream_t stream) {
  // one warp per tree
  if (kernel == vfdt::AdwinKernel::simple) k_adwin<<<a.trees, 32, 0, stream>>>(a, labels, nb);
  else k_adwin_warp<<<a.trees, 32, 0, stream>>>(a, labels, nb);
  GPUDM_CUDA_CHECK_LAUNCH();
}

void launch_faithful_init(const FaithfulView& v, cudaStream_t stream) {
  vfdt_faithful::k_init<<<v.trees, FaithfulPolicy::kGainBlock, 0, stream>>>(v);
  GPUDM_CUDA_CHECK_LAUNCH();
}

void launch_faithful_traverse(const FaithfulView& v, const std::uint8_t* codes, int nb, std::uint64_t first_instance,
                              cudaStream_t stream) {
  const dim3 grid(grid_for(nb, FaithfulPolicy::kInstanceBlock), 1, v.trees);
  vfdt_faithful::k_traverse<<<grid, FaithfulPolicy::kInstanceBlock, 0, stream>>>(v, codes, nb, first_instance);
  GPUDM_CUDA_CHECK_LAUNCH();
}

void launch_faithful_count(const FaithfulView& v, const std::uint8_t* codes, const std::uint8_t* labels, int nb,
                           cudaStream_t stream) {
  const dim3 grid(grid_for(nb, FaithfulPolicy::kInstanceBlock), 1, v.trees);
  vfdt_faithful::k_count<<<grid, FaithfulPolicy::kInstanceBlock, 0, stream>>>(v, codes, labels, nb);
  GPUDM_CUDA_CHECK_LAUNCH();
}

void launch_faithful_gain(const FaithfulView& v, cudaStream_t stream) {
  // one block per leaf counter (every one, as the paper), trees on z
  vfdt_faithful::k_gain<<<dim3(v.max_leaves, 1, v.trees), FaithfulPolicy::kGainBlock, 0, stream>>>(v);
  GPUDM_CUDA_CHECK_LAUNCH();
}

void launch_faithful_apply(const FaithfulView& v, cudaStream_t stream) {
  vfdt_faithful::k_apply<<<v.trees, FaithfulPolicy::kGainBlock, 0, stream>>>(v);
  GPUDM_CUDA_CHECK_LAUNCH();
}

}  // namespace gpudm::backend::cuda::vfdt_kernels
