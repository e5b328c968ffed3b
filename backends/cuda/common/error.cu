#include "backends/cuda/common/error.cuh"

#include <cublas_v2.h>
#include <cusolverDn.h>

#include <cstdio>

namespace gpudm::backend::cuda {

namespace {
// Paths are printed relative to the repository so messages are the same on every machine.
const char* short_path(const char* file) {
  const std::string f(file);
  for (const char* key : {"/backends/", "/algorithms/", "/tests/", "/experiments/"}) {
    const auto pos = f.rfind(key);
    if (pos != std::string::npos) return file + pos + 1;
  }
  return file;
}
}  // namespace

std::string format_cuda_error(cudaError_t e, const char* call, const char* file, int line) {
  return std::string(short_path(file)) + ":" + std::to_string(line) + ": " + call + " failed: " +
         cudaGetErrorName(e) + " (" + cudaGetErrorString(e) + ")";
}

void throw_cuda_error(cudaError_t e, const char* call, const char* file, int line) {
  // Reset the (non-sticky) last error so the next check does not report this one again.
  cudaGetLastError();
  const std::string msg = format_cuda_error(e, call, file, line);
  if (e == cudaErrorMemoryAllocation) throw OutOfDeviceMemory("out of device memory: " + msg);
  if (e == cudaErrorNoDevice || e == cudaErrorInsufficientDriver)
    throw ::gpudm::Unavailable("no usable CUDA device: " + msg);
  throw ::gpudm::Error(msg);
}

void log_cuda_error(cudaError_t e, const char* call, const char* file, int line) noexcept {
  try {
    std::fprintf(stderr, "gpudm: %s\n", format_cuda_error(e, call, file, line).c_str());
  } catch (...) {
    std::fprintf(stderr, "gpudm: CUDA error %d at %s:%d\n", static_cast<int>(e), file, line);
  }
}

const char* cublas_status_name(int s) noexcept {
  switch (static_cast<cublasStatus_t>(s)) {
    case CUBLAS_STATUS_SUCCESS: return "CUBLAS_STATUS_SUCCESS";
    case CUBLAS_STATUS_NOT_INITIALIZED: return "CUBLAS_STATUS_NOT_INITIALIZED";
    case CUBLAS_STATUS_ALLOC_FAILED: return "CUBLAS_STATUS_ALLOC_FAILED";
    case CUBLAS_STATUS_INVALID_VALUE: return "CUBLAS_STATUS_INVALID_VALUE";
    case CUBLAS_STATUS_ARCH_MISMATCH: return "CUBLAS_STATUS_ARCH_MISMATCH";
    case CUBLAS_STATUS_MAPPING_ERROR: return "CUBLAS_STATUS_MAPPING_ERROR";
    case CUBLAS_STATUS_EXECUTION_FAILED: return "CUBLAS_STATUS_EXECUTION_FAILED";
    case CUBLAS_STATUS_INTERNAL_ERROR: return "CUBLAS_STATUS_INTERNAL_ERROR";
    case CUBLAS_STATUS_NOT_SUPPORTED: return "CUBLAS_STATUS_NOT_SUPPORTED";
    case CUBLAS_STATUS_LICENSE_ERROR: return "CUBLAS_STATUS_LICENSE_ERROR";
  }
  return "CUBLAS_STATUS_<unknown>";
}

const char* cusolver_status_name(int s) noexcept {
  switch (static_cast<cusolverStatus_t>(s)) {
    case CUSOLVER_STATUS_SUCCESS: return "CUSOLVER_STATUS_SUCCESS";
    case CUSOLVER_STATUS_NOT_INITIALIZED: return "CUSOLVER_STATUS_NOT_INITIALIZED";
    case CUSOLVER_STATUS_ALLOC_FAILED: return "CUSOLVER_STATUS_ALLOC_FAILED";
    case CUSOLVER_STATUS_INVALID_VALUE: return "CUSOLVER_STATUS_INVALID_VALUE";
    case CUSOLVER_STATUS_ARCH_MISMATCH: return "CUSOLVER_STATUS_ARCH_MISMATCH";
    case CUSOLVER_STATUS_MAPPING_ERROR: return "CUSOLVER_STATUS_MAPPING_ERROR";
    case CUSOLVER_STATUS_EXECUTION_FAILED: return "CUSOLVER_STATUS_EXECUTION_FAILED";
    case CUSOLVER_STATUS_INTERNAL_ERROR: return "CUSOLVER_STATUS_INTERNAL_ERROR";
    case CUSOLVER_STATUS_MATRIX_TYPE_NOT_SUPPORTED: return "CUSOLVER_STATUS_MATRIX_TYPE_NOT_SUPPORTED";
    case CUSOLVER_STATUS_NOT_SUPPORTED: return "CUSOLVER_STATUS_NOT_SUPPORTED";
    case CUSOLVER_STATUS_ZERO_PIVOT: return "CUSOLVER_STATUS_ZERO_PIVOT";
    case CUSOLVER_STATUS_INVALID_LICENSE: return "CUSOLVER_STATUS_INVALID_LICENSE";
    default: break;
  }
  return "CUSOLVER_STATUS_<other>";
}

void throw_cublas_error(int status, const char* call, const char* file, int line) {
  const std::string msg = std::string(short_path(file)) + ":" + std::to_string(line) + ": " + call +
                          " failed: " + cublas_status_name(status);
  if (status == CUBLAS_STATUS_ALLOC_FAILED) throw OutOfDeviceMemory("out of device memory: " + msg);
  throw ::gpudm::Error(msg);
}

void throw_cusolver_error(int status, const char* call, const char* file, int line) {
  const std::string msg = std::string(short_path(file)) + ":" + std::to_string(line) + ": " + call +
                          " failed: " + cusolver_status_name(status);
  if (status == CUSOLVER_STATUS_ALLOC_FAILED) throw OutOfDeviceMemory("out of device memory: " + msg);
  throw ::gpudm::Error(msg);
}

}  // namespace gpudm::backend::cuda
