#pragma once
// Launchers of the streaming forest's kernels: block and grid from the policies (policy.cuh),
// launch on the evaluator's stream, check the launch. Views hold device pointers (args.cuh).
#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

#include "algorithms/vfdt/forest.hpp"
#include "backends/cuda/vfdt/args.cuh"

namespace gpudm::backend::cuda::vfdt_kernels {

// Throws when the configured params or the stream are outside what the kernels support: more
// classes than the vote histogram holds (Unavailable), batch_order "stream" off the persistent
// engine, with naive-Bayes leaves or above its batch limit, the faithful path's attribute limit.
void check_supported(const vfdt::ForestParams& p, const vfdt::EncodedStream& s);

// ---- path default
void launch_init(const ForestView& f, cudaStream_t stream);
// Per-batch engine: traversal, counters, ADWIN (prefix kernel), split; codes/labels at the batch.
void launch_predict(const ForestView& f, const std::uint8_t* codes, int nb, cudaStream_t stream);
void launch_learn(const ForestView& f, const std::uint8_t* codes, const std::uint8_t* labels, int nb,
                  std::uint64_t first_instance, cudaStream_t stream);
void launch_adwin_prefix(const ForestView& f, const std::uint8_t* labels, int nb, std::uint32_t pos0, cudaStream_t stream);
void launch_split(const ForestView& f, cudaStream_t stream);
// Persistent engine: one block per tree over [pos0, pos0 + n); codes/labels at pos0.
void launch_persistent(const ForestView& f, const std::uint8_t* codes, const std::uint8_t* labels, std::size_t n,
                       std::uint32_t pos0, unsigned long long* cycles, cudaStream_t stream);

// ---- both paths
// Majority over the trees' votes of n instances.
void launch_vote(const VoteView& v, std::size_t n, std::int32_t* out, cudaStream_t stream);
// The trees' votes per class of n instances (out[j * classes + c]).
void launch_tally(const VoteView& v, std::size_t n, std::uint32_t* out, cudaStream_t stream);
// One ADWIN per tree over a batch's errors: kernel warp or simple (prefix: launch_adwin_prefix).
void launch_adwin(const AdwinView& a, vfdt::AdwinKernel kernel, const std::uint8_t* labels, int nb, cudaStream_t stream);

// ---- path faithful
void launch_faithful_init(const FaithfulView& v, cudaStream_t stream);
void launch_faithful_traverse(const FaithfulView& v, const std::uint8_t* codes, int nb, std::uint64_t first_instance,
                              cudaStream_t stream);
void launch_faithful_count(const FaithfulView& v, const std::uint8_t* codes, const std::uint8_t* labels, int nb,
                           cudaStream_t stream);
void launch_faithful_gain(const FaithfulView& v, cudaStream_t stream);
void launch_faithful_apply(const FaithfulView& v, cudaStream_t stream);

}  // namespace gpudm::backend::cuda::vfdt_kernels
