#pragma once
// Kernel argument structs (args.cuh in every CUDA family): what the rule engine's fused kernel
// (kernels.cuh) takes by value, device pointers into one device's dataset copy and population.
// Filled by launch.cu from launch.cuh's FastBuffers.
#include <cstddef>
#include <cstdint>

#include "backends/cuda/common/dataset.cuh"

namespace gpudm::backend::cuda::rules_kernels {

// The fused kernel's arguments.
struct FastArgs {
  DatasetView data;
  const std::uint32_t* features16 = nullptr;  // f16x2 (ranked codes): padded_rows / 2 words per column
  const std::uint32_t* words = nullptr;       // the population's words (f16x2: rewritten)
  const std::uint32_t* rule_begin = nullptr;  // rules + 1
  const std::uint32_t* group_begin = nullptr; // groups + 1, rule indexes
  std::uint32_t tiles = 0;
  std::uint32_t max_group_words = 0;
  int classes = 0;
  std::uint32_t* counts = nullptr;    // rules x classes, zeroed before the launch
  std::uint32_t* coverage = nullptr;  // rules x words_per_rule, or null
  std::size_t words_per_rule = 0;
};

}  // namespace gpudm::backend::cuda::rules_kernels
