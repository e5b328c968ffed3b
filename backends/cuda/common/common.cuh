#pragma once
// Everything a CUDA backend needs from common/, in one include.
#include "backends/cuda/common/buffer.cuh"
#include "backends/cuda/common/dataset.cuh"
#include "backends/cuda/common/device.cuh"
#include "backends/cuda/common/error.cuh"
#include "backends/cuda/common/event_timer.cuh"
#include "backends/cuda/common/stream.cuh"
#include "backends/cuda/common/temp_storage.cuh"
