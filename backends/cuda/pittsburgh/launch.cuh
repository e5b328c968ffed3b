#pragma once
// Launchers of the Pittsburgh kernels: pick grid and block from the policies (policy.cuh), launch
// on a stream, check the launch. Pointers are device pointers; a launcher with nothing to do
// (no rules, no rows) launches nothing.
#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <vector>

#include "algorithms/pittsburgh/population.hpp"
#include "algorithms/rules/confusion.hpp"
#include "backends/cuda/common/dataset.cuh"
#include "backends/cuda/common/device.cuh"
#include "backends/cuda/pittsburgh/args.cuh"

namespace gpudm::backend::cuda::pitt {

// ---- faithful path: the paper's four kernels ----
// Row stride of the coverage codes and the classified flags (rows rounded up to whole blocks).
std::size_t faithful_stride(std::size_t rows);
// result: individuals x max_rules x stride codes; classified: individuals x stride flags.
void launch_coverage(const PopView& pop, const DatasetView& data, std::size_t rules, std::uint8_t* result,
                     std::size_t stride, cudaStream_t stream);
void launch_rule_fitness(const PopView& pop, std::size_t rules, const std::uint8_t* result, std::size_t stride,
                         std::size_t rows, rules::ConfusionMatrix* confusion, float* fitness, cudaStream_t stream);
void launch_classification(const PopView& pop, const DatasetView& data, const std::uint8_t* result, std::size_t stride,
                           std::uint8_t* classified, cudaStream_t stream);
void launch_ruleset_fitness(const PopView& pop, const std::uint8_t* classified, std::size_t stride, std::size_t rows,
                            std::uint32_t* correct, cudaStream_t stream);

// ---- fast path: one fused kernel ----
// The fused kernel's launch shape for one population slice on one device.
struct FastLaunch {
  int block = 256;
  int rows_per_thread = 4;  // R
  int rows_per_word = 1;    // 2 for the f16x2 layout
  std::size_t tile_bytes = 0, shared_bytes = 0;
  unsigned tiles = 1;   // tiles of block x R slots over the rows (the persistent blocks stride over them)
  unsigned groups = 1;  // grid.y: groups of whole individuals staged in shared memory
  std::vector<std::uint32_t> group_begin;  // groups + 1 individual indexes (uploaded with the population)
  std::uint32_t max_group_words = 0;
  std::uint32_t max_group_counters = 0;  // 2 * rules + individuals, largest group
};
// Largest individual (words) the fast path stages in shared memory: a single larger individual
// gets a larger group than the policy's budget.
int max_fast_words();
FastLaunch plan_fast(const DeviceProps& props, std::size_t cols, std::size_t rows, bool packed,
                     const pittsburgh::FlatPopulation& slice);
// args.tiles, max_group_words and max_group_counters must come from `plan`.
void launch_fused(const FastLaunch& plan, const FastArgs& args, bool packed, const DeviceProps& props,
                  cudaStream_t stream);
// Per rule from the fused kernel's counts (tp, covered), the rules' consequents and the rows of
// every class: the confusion matrix and the fitness.
void launch_finalize(const std::uint32_t* counts, const std::int32_t* consequent, const std::uint32_t* class_rows,
                     std::size_t rules, std::size_t rows, rules::ConfusionMatrix* confusion, float* fitness,
                     cudaStream_t stream);

}  // namespace gpudm::backend::cuda::pitt
