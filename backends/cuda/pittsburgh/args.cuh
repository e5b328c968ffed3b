#pragma once
// Kernel argument structs (args.cuh in every CUDA family): what the Pittsburgh kernels take by
// value, device pointers into one device's population slice and dataset. Filled by evaluator.cu,
// passed through launch.cuh.
#include <cstdint>

#include "backends/cuda/common/dataset.cuh"

namespace gpudm::backend::cuda::pitt {

// Flattened (sub-)population on one device; offsets are local to the slice.
struct PopView {
  const std::uint32_t* words = nullptr;
  const std::uint32_t* rule_begin = nullptr;  // rules + 1: offsets of every rule's words
  const std::int32_t* rule_consequent = nullptr;
  const std::uint32_t* ind_rule_begin = nullptr;  // individuals + 1
  const std::uint32_t* ind_word_begin = nullptr;  // individuals + 1
  const std::int32_t* default_class = nullptr;
  std::uint32_t individuals = 0;
  std::uint32_t max_rules = 0;
};

// The fused kernel's arguments.
struct FastArgs {
  PopView pop;
  DatasetView data;
  const std::uint32_t* group_begin = nullptr;  // groups + 1, individual indexes
  std::uint32_t max_group_words = 0;
  std::uint32_t max_group_counters = 0;  // 2 * rules + individuals, largest group
  std::uint32_t tiles = 0;
  int classes = 0;                       // <= 32: one class per lane
  std::uint32_t* rule_counts = nullptr;  // 2 per rule: tp, covered
  std::uint32_t* correct = nullptr;      // per individual
  const std::uint32_t* features16 = nullptr;  // f16x2 layout (ranked codes): padded_rows / 2 words per column
};

}  // namespace gpudm::backend::cuda::pitt
