#include "backends/cuda/pittsburgh/launch.cuh"

#include <algorithm>
#include <string>

#include "backends/cuda/common/device.cuh"
#include "backends/cuda/common/error.cuh"
#include "backends/cuda/pittsburgh/kernels.cuh"
#include "backends/cuda/pittsburgh/policy.cuh"

namespace gpudm::backend::cuda::pitt {

namespace {

// Row blocks of the faithful coverage and classification grids (grid.y).
unsigned row_blocks(std::size_t rows) {
  using P = FaithfulPolicy;
  return std::min<unsigned>(grid_for(rows, P::kCoverageThreads), P::kMaxGridY);
}

template <int B, int R, class Rows>
void launch_fused_shape(const FastLaunch& c, const FastArgs& a, const DeviceProps& p, cudaStream_t s) {
  auto k = fused_kernel<B, R, Rows>;
  if (c.shared_bytes > p.smem_per_block_optin)
    throw Error("pittsburgh/cuda fast path: needs " + std::to_string(c.shared_bytes) +
                " bytes of shared memory, device has " + std::to_string(p.smem_per_block_optin));
  allow_dynamic_smem(k, c.shared_bytes);
  int per_sm = 0;
  GPUDM_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, k, B, c.shared_bytes));
  per_sm = std::clamp(per_sm, 1, FastPolicy::kBlocksPerSmCap);
  // Persistent blocks along x: enough to fill the device once across all groups.
  const std::size_t resident = static_cast<std::size_t>(per_sm) * p.sm_count;
  const std::size_t gx = std::max<std::size_t>(1, (resident + c.groups - 1) / c.groups);
  dim3 grid(static_cast<unsigned>(std::min<std::size_t>(c.tiles, gx)), c.groups);
  k<<<grid, B, c.shared_bytes, s>>>(a);
  GPUDM_CUDA_CHECK_LAUNCH();
}

template <class Rows>
void launch_fused_rows(const FastLaunch& c, const FastArgs& a, const DeviceProps& p, cudaStream_t s) {
  constexpr int kB = FastPolicy::kBlock, kW = FastPolicy::kWideBlock;
  if (c.block == kB && c.rows_per_thread == 4) launch_fused_shape<kB, 4, Rows>(c, a, p, s);
  else if (c.block == kB && c.rows_per_thread == 2) launch_fused_shape<kB, 2, Rows>(c, a, p, s);
  else if (c.block == kB) launch_fused_shape<kB, 1, Rows>(c, a, p, s);
  else launch_fused_shape<kW, 1, Rows>(c, a, p, s);
}

}  // namespace

// ---- faithful path ----

std::size_t faithful_stride(std::size_t rows) {
  using P = FaithfulPolicy;
  return (rows + P::kCoverageThreads - 1) / P::kCoverageThreads * P::kCoverageThreads;
}

void launch_coverage(const PopView& pop, const DatasetView& data, std::size_t rules, std::uint8_t* result,
                     std::size_t stride, cudaStream_t stream) {
  if (rules == 0 || data.rows == 0) return;
  const dim3 grid(pop.individuals, row_blocks(data.rows), pop.max_rules);
  coverage_kernel<<<grid, FaithfulPolicy::kCoverageThreads, 0, stream>>>(pop, data, result, stride);
  GPUDM_CUDA_CHECK_LAUNCH();
}

void launch_rule_fitness(const PopView& pop, std::size_t rules, const std::uint8_t* result, std::size_t stride,
                         std::size_t rows, rules::ConfusionMatrix* confusion, float* fitness, cudaStream_t stream) {
  if (rules == 0) return;
  const dim3 grid(pop.individuals, pop.max_rules);
  rule_fitness_kernel<<<grid, FaithfulPolicy::kRuleFitnessThreads, 0, stream>>>(pop, result, stride, rows, confusion,
                                                                                fitness);
  GPUDM_CUDA_CHECK_LAUNCH();
}

void launch_classification(const PopView& pop, const DatasetView& data, const std::uint8_t* result, std::size_t stride,
                           std::uint8_t* classified, cudaStream_t stream) {
  if (data.rows == 0) return;
  const dim3 grid(pop.individuals, row_blocks(data.rows));
  classification_kernel<<<grid, FaithfulPolicy::kClassificationThreads, 0, stream>>>(pop, data, result, stride,
                                                                                     classified);
  GPUDM_CUDA_CHECK_LAUNCH();
}

void launch_ruleset_fitness(const PopView& pop, const std::uint8_t* classified, std::size_t stride, std::size_t rows,
                            std::uint32_t* correct, cudaStream_t stream) {
  ruleset_fitness_kernel<<<pop.individuals, FaithfulPolicy::kRuleSetFitnessThreads, 0, stream>>>(classified, stride,
                                                                                                 rows, correct);
  GPUDM_CUDA_CHECK_LAUNCH();
}

// ---- fast path ----

int max_fast_words() { return FastPolicy::kWordsBudget * 4; }

FastLaunch plan_fast(const DeviceProps& p, std::size_t cols, std::size_t rows, bool packed,
                     const pittsburgh::FlatPopulation& s) {
  using P = FastPolicy;
  FastLaunch c;
  const std::size_t target = P::kTileBytesTarget;
  c.block = P::kBlock;
  if (cols * P::kBlock * 4 * 4 <= target) c.rows_per_thread = 4;
  else if (cols * P::kBlock * 2 * 4 <= target) c.rows_per_thread = 2;
  else if (cols * P::kBlock * 4 <= target) c.rows_per_thread = 1;
  else {
    c.block = P::kWideBlock;
    c.rows_per_thread = 1;
  }
  c.rows_per_word = packed ? 2 : 1;
  const std::size_t T = static_cast<std::size_t>(c.block) * c.rows_per_thread;
  c.tile_bytes = cols * T * sizeof(float);
  const std::size_t TR = T * static_cast<std::size_t>(c.rows_per_word);  // rows per tile
  const auto tiles = static_cast<std::uint32_t>((rows + TR - 1) / TR);
  // Groups of whole individuals within the word budget, and small enough to give every SM
  // work when the data has few tiles.
  const std::size_t n = s.individuals();
  const std::size_t want_blocks = static_cast<std::size_t>(p.sm_count) * P::kBlocksPerSmWanted;
  const std::size_t want_groups = std::clamp<std::size_t>((want_blocks + tiles - 1) / tiles, 1, n);
  const std::size_t per_group = (n + want_groups - 1) / want_groups;
  c.group_begin.assign(1, 0);
  std::size_t start = 0;
  while (start < n) {
    std::size_t end = start + 1;
    while (end < n && end - start < per_group &&
           s.individual_word_begin[end + 1] - s.individual_word_begin[start] <=
               static_cast<std::uint32_t>(P::kWordsBudget))
      ++end;
    c.group_begin.push_back(static_cast<std::uint32_t>(end));
    c.max_group_words = std::max(c.max_group_words, s.individual_word_begin[end] - s.individual_word_begin[start]);
    c.max_group_counters =
        std::max(c.max_group_counters, 2 * (s.individual_rule_begin[end] - s.individual_rule_begin[start]) +
                                           static_cast<std::uint32_t>(end - start));
    start = end;
  }
  c.shared_bytes =
      c.tile_bytes + (static_cast<std::size_t>(c.max_group_words) + c.max_group_counters) * sizeof(std::uint32_t);
  c.groups = static_cast<unsigned>(c.group_begin.size() - 1);
  c.tiles = tiles;
  return c;
}

void launch_fused(const FastLaunch& plan, const FastArgs& args, bool packed, const DeviceProps& props,
                  cudaStream_t stream) {
  if (packed) launch_fused_rows<rules_kernels::F16x2Rows>(plan, args, props, stream);
  else launch_fused_rows<rules_kernels::F32Rows>(plan, args, props, stream);
}

void launch_finalize(const std::uint32_t* counts, const std::int32_t* consequent, const std::uint32_t* class_rows,
                     std::size_t rules, std::size_t rows, rules::ConfusionMatrix* confusion, float* fitness,
                     cudaStream_t stream) {
  if (rules == 0) return;
  constexpr unsigned kT = FastPolicy::kThreadsPerRuleUpdate;
  finalize_kernel<<<grid_for(rules, kT), kT, 0, stream>>>(counts, consequent, class_rows, static_cast<std::uint32_t>(rules),
                                                          static_cast<std::uint32_t>(rows), confusion, fitness);
  GPUDM_CUDA_CHECK_LAUNCH();
}

}  // namespace gpudm::backend::cuda::pitt
