#pragma once
// Launchers of the rule engine's kernels: pick block/grid from the policies, launch on a
// stream, check every launch. Pointers are device pointers.
#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "algorithms/rules/population.hpp"
#include "backends/cuda/common/dataset.cuh"
#include "backends/cuda/common/device.cuh"

namespace gpudm::backend::cuda::rules_kernels {

// ---- faithful path ----
// Rules [first, first + count) fit one constant-memory upload: the chunks of a population.
struct Chunk {
  std::uint32_t first = 0, count = 0;
};
std::vector<Chunk> constant_chunks(const ::gpudm::rules::RulePopulation& pop);
// The results array's row stride (instances, aligned to the warp: the paper's instancesAligned).
std::size_t results_stride(const DatasetView& d);
// Uploads the chunk's offsets and words to constant memory (stream-ordered) and launches the
// match kernel over it, writing rows first .. first + count of `result`.
void launch_match(const DatasetView& d, const ::gpudm::rules::RulePopulation& pop, const Chunk& c,
                  std::vector<std::uint32_t>& staging, std::uint8_t* result, cudaStream_t stream);
void launch_reduce(const std::uint8_t* result, std::size_t stride, std::size_t rows, std::size_t rules, int classes,
                   std::uint32_t* counts, const DeviceProps& props, cudaStream_t stream);
void launch_pack_coverage(const std::uint8_t* result, std::size_t stride, std::size_t rows, std::size_t rules,
                          std::size_t words_per_rule, std::uint32_t* coverage, cudaStream_t stream);

// ---- fast path ----
struct FastPlan {
  bool ok = false;
  std::string reason;      // why not, when !ok
  bool packed = false;     // f16x2 layout
  int block = 256, rows_per_thread = 4;
  std::size_t tile_bytes = 0, smem = 0;
  std::uint32_t tiles = 0;
  std::uint32_t max_group_words = 0;
  std::vector<std::uint32_t> groups;  // groups + 1 rule indexes
  unsigned grid_x = 0;                // persistent blocks (set by launch_fused)
};
// `rows_per_thread`: 0 = by the tile policy, else 1, 2 or 4.
FastPlan plan_fast(const DeviceProps& p, const DatasetView& d, bool packed, int classes,
                   const ::gpudm::rules::RulePopulation& pop, int rows_per_thread);

struct FastBuffers {
  const std::uint32_t* features16 = nullptr;
  const std::uint32_t* words = nullptr;
  const std::uint32_t* rule_begin = nullptr;
  const std::uint32_t* group_begin = nullptr;
  std::uint32_t* counts = nullptr;
  std::uint32_t* coverage = nullptr;
  std::size_t words_per_rule = 0;
};
void launch_fused(const DatasetView& d, int classes, FastPlan& plan, const FastBuffers& b, const DeviceProps& props,
                  cudaStream_t stream);
// Thresholds to ranked codes (algorithms/rules/ranked.hpp), one warp per rule.
void launch_rewrite_ranked(const std::uint32_t* in, const std::uint32_t* rule_begin, std::uint32_t rules,
                           const float* values, const std::uint32_t* begin, std::uint32_t* out, cudaStream_t stream);

}  // namespace gpudm::backend::cuda::rules_kernels
