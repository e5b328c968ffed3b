#pragma once
// Checked CUDA calls. Every CUDA runtime / cuBLAS / cuSOLVER call goes through one of these
// macros; a failure throws gpudm::Error naming the file, the line, the call's text and the
// error's name, so a user sees "backends/cuda/x.cu:42: cudaMemcpy(...) failed: cudaErrorInvalidValue
// (invalid argument)". Out-of-memory throws gpudm::Unavailable so the runner records the run as
// skipped ("out of device memory") instead of failing the whole sweep.
//
//   GPUDM_CUDA_CHECK(call)          throw on failure
//   GPUDM_CUDA_CHECK_NOTHROW(call)  log to stderr on failure (destructors)
//   GPUDM_CUDA_CHECK_LAUNCH()       after every <<<...>>>: cudaGetLastError, and with
//                                   GPUDM_CUDA_DEBUG_SYNC also cudaDeviceSynchronize
//   GPUDM_CUBLAS_CHECK(call), GPUDM_CUSOLVER_CHECK(call)
//
// This header includes only cuda_runtime_api.h; the cuBLAS/cuSOLVER status names are resolved in
// error.cu so that users of GPUDM_CUDA_CHECK do not pay for the library headers.
#include <cuda_runtime_api.h>

#include <string>

#include "algorithms/core/error.hpp"

namespace gpudm::backend::cuda {

// Thrown for cudaErrorMemoryAllocation (and CUBLAS/CUSOLVER alloc failures).
class OutOfDeviceMemory : public ::gpudm::Unavailable {
 public:
  explicit OutOfDeviceMemory(const std::string& m) : ::gpudm::Unavailable(m) {}
};

// "file:line: call failed: name (description)"; used by the macros, callable directly.
std::string format_cuda_error(cudaError_t e, const char* call, const char* file, int line);
[[noreturn]] void throw_cuda_error(cudaError_t e, const char* call, const char* file, int line);
void log_cuda_error(cudaError_t e, const char* call, const char* file, int line) noexcept;

// Status names of the math libraries ("CUBLAS_STATUS_ALLOC_FAILED", ...).
const char* cublas_status_name(int status) noexcept;
const char* cusolver_status_name(int status) noexcept;
[[noreturn]] void throw_cublas_error(int status, const char* call, const char* file, int line);
[[noreturn]] void throw_cusolver_error(int status, const char* call, const char* file, int line);

}  // namespace gpudm::backend::cuda

#define GPUDM_CUDA_CHECK(call)                                                                  \
  do {                                                                                          \
    const cudaError_t gpudm_cuda_err_ = (call);                                                 \
    if (gpudm_cuda_err_ != cudaSuccess)                                                         \
      ::gpudm::backend::cuda::throw_cuda_error(gpudm_cuda_err_, #call, __FILE__, __LINE__);     \
  } while (0)

#define GPUDM_CUDA_CHECK_NOTHROW(call)                                                          \
  do {                                                                                          \
    const cudaError_t gpudm_cuda_err_ = (call);                                                 \
    if (gpudm_cuda_err_ != cudaSuccess)                                                         \
      ::gpudm::backend::cuda::log_cuda_error(gpudm_cuda_err_, #call, __FILE__, __LINE__);       \
  } while (0)

#if defined(GPUDM_CUDA_DEBUG_SYNC)
#define GPUDM_CUDA_CHECK_LAUNCH()                                                               \
  do {                                                                                          \
    GPUDM_CUDA_CHECK(cudaGetLastError());                                                       \
    GPUDM_CUDA_CHECK(cudaDeviceSynchronize());                                                  \
  } while (0)
#else
#define GPUDM_CUDA_CHECK_LAUNCH() GPUDM_CUDA_CHECK(cudaGetLastError())
#endif

#define GPUDM_CUBLAS_CHECK(call)                                                                \
  do {                                                                                          \
    const int gpudm_cublas_st_ = static_cast<int>(call);                                        \
    if (gpudm_cublas_st_ != 0)                                                                  \
      ::gpudm::backend::cuda::throw_cublas_error(gpudm_cublas_st_, #call, __FILE__, __LINE__);  \
  } while (0)

#define GPUDM_CUSOLVER_CHECK(call)                                                              \
  do {                                                                                          \
    const int gpudm_cusolver_st_ = static_cast<int>(call);                                      \
    if (gpudm_cusolver_st_ != 0)                                                                \
      ::gpudm::backend::cuda::throw_cusolver_error(gpudm_cusolver_st_, #call, __FILE__, __LINE__); \
  } while (0)
