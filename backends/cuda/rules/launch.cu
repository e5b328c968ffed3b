#include "backends/cuda/rules/launch.cuh"

#include <algorithm>
#include "backends/cuda/common/device.cuh"
#include "backends/cuda/common/error.cuh"
#include "backends/cuda/rules/kernels.cuh"

namespace gpudm::backend::cuda::rules_kernels {

using ::gpudm::Error;
using ::gpudm::rules::RulePopulation;

// ---- faithful path ----

std::vector<Chunk> constant_chunks(const RulePopulation& pop) {
  std::vector<Chunk> out;
  const std::size_t n = pop.size();
  std::size_t start = 0;
  while (start < n) {
    std::size_t end = start;
    // offsets (rules + 1) + words of [start, end + 1) must fit
    while (end < n && (end + 2 - start) + (pop.rule_begin[end + 1] - pop.rule_begin[start]) <= FaithfulPolicy::kConstantWords)
      ++end;
    if (end == start)
      throw Error("rules/cuda faithful path: rule " + std::to_string(start) + " has " + std::to_string(pop.rule_words(start)) +
                  " words, more than constant memory holds");
    out.push_back(Chunk{static_cast<std::uint32_t>(start), static_cast<std::uint32_t>(end - start)});
    start = end;
  }
  return out;
}

std::size_t results_stride(const DatasetView& d) { return (d.rows + 31) / 32 * 32; }

void launch_match(const DatasetView& d, const RulePopulation& pop, const Chunk& c, std::vector<std::uint32_t>& staging,
                  std::uint8_t* result, cudaStream_t stream) {
  if (c.count == 0 || d.rows == 0) return;
  const std::uint32_t w0 = pop.rule_begin[c.first], w1 = pop.rule_begin[c.first + c.count];
  staging.resize(c.count + 1 + (w1 - w0));
  for (std::uint32_t i = 0; i <= c.count; ++i) staging[i] = (c.count + 1) + (pop.rule_begin[c.first + i] - w0);
  std::copy(pop.words.begin() + w0, pop.words.begin() + w1, staging.begin() + c.count + 1);
  // Pageable source: the copy is staged by the driver before the call returns, so `staging`
  // may be reused by the next chunk.
  GPUDM_CUDA_CHECK(cudaMemcpyToSymbolAsync(c_population, staging.data(), staging.size() * sizeof(std::uint32_t), 0,
                                           cudaMemcpyHostToDevice, stream));
  const unsigned gy = std::min<unsigned>(grid_for(d.rows, FaithfulPolicy::kMatchThreads), FaithfulPolicy::kMaxGridY);
  match_kernel<<<dim3(c.count, gy), FaithfulPolicy::kMatchThreads, 0, stream>>>(d, c.first, result, results_stride(d));
  GPUDM_CUDA_CHECK_LAUNCH();
}

void launch_reduce(const std::uint8_t* result, std::size_t stride, std::size_t rows, std::size_t rules, int classes,
                   std::uint32_t* counts, const DeviceProps& props, cudaStream_t stream) {
  if (rules == 0) return;
  const std::size_t smem = static_cast<std::size_t>(classes) * FaithfulPolicy::kReduceThreads * sizeof(std::uint32_t);
  if (smem > props.smem_per_block_optin)
    throw Error("rules/cuda faithful path: " + std::to_string(classes) + " classes need " + std::to_string(smem) +
                " bytes of shared memory in the reduction kernel; the device allows " +
                std::to_string(props.smem_per_block_optin));
  if (smem > props.smem_per_block)
    allow_dynamic_smem(reduce_kernel, smem);
  reduce_kernel<<<static_cast<unsigned>(rules), FaithfulPolicy::kReduceThreads, smem, stream>>>(result, stride, rows, classes,
                                                                                                  counts);
  GPUDM_CUDA_CHECK_LAUNCH();
}

void launch_pack_coverage(const std::uint8_t* result, std::size_t stride, std::size_t rows, std::size_t rules,
                          std::size_t words_per_rule, std::uint32_t* coverage, cudaStream_t stream) {
  const std::size_t n = rules * words_per_rule;
  if (n == 0) return;
  pack_coverage_kernel<<<grid_for(n, FaithfulPolicy::kPackThreads, 1u << 20), FaithfulPolicy::kPackThreads, 0, stream>>>(
      result, stride, rows, rules, words_per_rule, coverage);
  GPUDM_CUDA_CHECK_LAUNCH();
}

// ---- fast path ----

FastPlan plan_fast(const DeviceProps& p, const DatasetView& d, bool packed, int classes, const RulePopulation& pop,
                   int rows_per_thread) {
  FastPlan plan;
  plan.packed = packed;
  const std::size_t cols = d.cols;
  const auto tile = [&](int b, int r) { return cols * static_cast<std::size_t>(b) * static_cast<std::size_t>(r) * 4; };
  if (rows_per_thread != 0) {
    if (rows_per_thread != 1 && rows_per_thread != 2 && rows_per_thread != 4)
      throw Error("rules/cuda: rows_per_thread must be 0 (auto), 1, 2 or 4, got " + std::to_string(rows_per_thread));
    plan.rows_per_thread = rows_per_thread;
    plan.block = tile(256, rows_per_thread) <= FastPolicy::kTileBytesTarget ? 256 : 128;
  } else {
    // R = 4 where a 256-thread tile holds it (<= 12 columns), else R = 2 where a 128-thread tile
    // does (<= 48 columns), else 1; then 256 threads if that tile fits. Two rows per thread at 128
    // threads beat one at 256: on the H100 (gp_engine) KDDcup and Connect-4 (41-42
    // columns) ran 11 % faster at 128 x 2 than at 256 x 1.
    const std::size_t budget = FastPolicy::kTileBytesTarget;
    plan.rows_per_thread = tile(256, 4) <= budget ? 4 : tile(128, 2) <= budget ? 2 : 1;
    plan.block = tile(256, plan.rows_per_thread) <= budget ? 256 : 128;
  }
  plan.tile_bytes = tile(plan.block, plan.rows_per_thread);
  const std::size_t T = static_cast<std::size_t>(plan.block) * plan.rows_per_thread;
  const std::size_t col_words = d.padded_rows / (packed ? 2 : 1);
  const std::size_t tiles = (col_words + T - 1) / T;
  if (tiles > 0xFFFFFFFFull) {
    plan.reason = "too many rows for the fast path's tile index";
    return plan;
  }
  plan.tiles = static_cast<std::uint32_t>(tiles);

  // Groups of consecutive rules within the word and counter budgets, small enough to give every
  // SM work when the data has few tiles.
  const std::size_t n = pop.size();
  const std::size_t want_blocks = static_cast<std::size_t>(std::max(1, p.sm_count)) * FastPolicy::kWantBlocksPerSm;
  const std::size_t want_groups = std::clamp<std::size_t>((want_blocks + tiles - 1) / std::max<std::size_t>(1, tiles), 1, std::max<std::size_t>(1, n));
  const std::size_t per_group = (n + want_groups - 1) / want_groups;
  const std::size_t max_rules_by_counters = std::max<std::size_t>(1, FastPolicy::kCountersBudget / std::max(1, classes));
  plan.groups.assign(1, 0);
  std::size_t max_counters = 0;
  std::size_t start = 0;
  while (start < n) {
    std::size_t end = start + 1;
    while (end < n && end - start < per_group && end - start < max_rules_by_counters &&
           pop.rule_begin[end + 1] - pop.rule_begin[start] <= static_cast<std::uint32_t>(FastPolicy::kWordsBudget))
      ++end;
    plan.groups.push_back(static_cast<std::uint32_t>(end));
    plan.max_group_words = std::max<std::uint32_t>(plan.max_group_words, pop.rule_begin[end] - pop.rule_begin[start]);
    max_counters = std::max(max_counters, (end - start) * static_cast<std::size_t>(classes));
    start = end;
  }
  plan.smem = plan.tile_bytes + (static_cast<std::size_t>(plan.max_group_words) + max_counters) * sizeof(std::uint32_t);
  if (plan.smem > p.smem_per_block_optin) {
    plan.reason = "a tile of " + std::to_string(cols) + " columns needs " + std::to_string(plan.smem) +
                  " bytes of shared memory, the device allows " + std::to_string(p.smem_per_block_optin);
    return plan;
  }
  plan.ok = true;
  return plan;
}

namespace {

template <int B, int R, class Rows>
void launch_t(const DatasetView& d, int classes, FastPlan& plan, const FastBuffers& b, const DeviceProps& p,
              cudaStream_t stream) {
  auto k = fused_kernel<B, R, Rows>;
  allow_dynamic_smem(k, plan.smem);
  int per_sm = 0;
  GPUDM_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, k, B, plan.smem));
  per_sm = std::clamp(per_sm, 1, FastPolicy::kBlocksPerSmCap);
  const unsigned gy = static_cast<unsigned>(plan.groups.size() - 1);
  // Persistent blocks along x: enough to fill the device once across all groups.
  const std::size_t resident = static_cast<std::size_t>(per_sm) * static_cast<std::size_t>(std::max(1, p.sm_count));
  const std::size_t gx = std::max<std::size_t>(1, (resident + gy - 1) / gy);
  plan.grid_x = static_cast<unsigned>(std::min<std::size_t>(plan.tiles, gx));
  FastArgs a;
  a.data = d;
  a.features16 = b.features16;
  a.words = b.words;
  a.rule_begin = b.rule_begin;
  a.group_begin = b.group_begin;
  a.tiles = plan.tiles;
  a.max_group_words = plan.max_group_words;
  a.classes = classes;
  a.counts = b.counts;
  a.coverage = b.coverage;
  a.words_per_rule = b.words_per_rule;
  k<<<dim3(plan.grid_x, gy), B, plan.smem, stream>>>(a);
  GPUDM_CUDA_CHECK_LAUNCH();
}

template <class Rows>
void launch_rows(const DatasetView& d, int classes, FastPlan& plan, const FastBuffers& b, const DeviceProps& p,
                 cudaStream_t s) {
  const int r = plan.rows_per_thread;
  if (plan.block == 256) {
    if (r == 4) return launch_t<256, 4, Rows>(d, classes, plan, b, p, s);
    if (r == 2) return launch_t<256, 2, Rows>(d, classes, plan, b, p, s);
    return launch_t<256, 1, Rows>(d, classes, plan, b, p, s);
  }
  if (r == 4) return launch_t<128, 4, Rows>(d, classes, plan, b, p, s);
  if (r == 2) return launch_t<128, 2, Rows>(d, classes, plan, b, p, s);
  return launch_t<128, 1, Rows>(d, classes, plan, b, p, s);
}

}  // namespace

void launch_fused(const DatasetView& d, int classes, FastPlan& plan, const FastBuffers& b, const DeviceProps& props,
                  cudaStream_t stream) {
  if (plan.tiles == 0 || plan.groups.size() < 2) return;
  if (plan.packed) launch_rows<F16x2Rows>(d, classes, plan, b, props, stream);
  else launch_rows<F32Rows>(d, classes, plan, b, props, stream);
}

void launch_rewrite_ranked(const std::uint32_t* in, const std::uint32_t* rule_begin, std::uint32_t rules,
                           const float* values, const std::uint32_t* begin, std::uint32_t* out, cudaStream_t stream) {
  if (rules == 0) return;
  rewrite_ranked_kernel<<<grid_for(rules, kRewriteWarps), kRewriteWarps * 32, 0, stream>>>(in, rule_begin, rules, values,
                                                                                          begin, out);
  GPUDM_CUDA_CHECK_LAUNCH();
}

}  // namespace gpudm::backend::cuda::rules_kernels
