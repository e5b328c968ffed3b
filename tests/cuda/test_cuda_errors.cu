// The error macros need no device: they are exercised with literal error codes.
#include <gtest/gtest.h>

#include <string>

#include "backends/cuda/common/error.cuh"

namespace cu = gpudm::backend::cuda;

namespace {
cudaError_t fail_with(cudaError_t e) { return e; }
}  // namespace

TEST(CudaErrors, CheckThrowsWithFileLineCallAndName) {
  try {
    GPUDM_CUDA_CHECK(fail_with(cudaErrorInvalidValue));
    FAIL() << "GPUDM_CUDA_CHECK did not throw";
  } catch (const gpudm::Unavailable&) {
    FAIL() << "invalid value must not be reported as unavailable";
  } catch (const gpudm::Error& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("tests/cuda/test_cuda_errors.cu:"), std::string::npos) << m;
    EXPECT_NE(m.find("fail_with(cudaErrorInvalidValue)"), std::string::npos) << m;
    EXPECT_NE(m.find("cudaErrorInvalidValue"), std::string::npos) << m;
    EXPECT_NE(m.find("failed"), std::string::npos) << m;
  }
}

TEST(CudaErrors, SuccessDoesNotThrow) { EXPECT_NO_THROW(GPUDM_CUDA_CHECK(fail_with(cudaSuccess))); }

TEST(CudaErrors, OutOfMemoryIsUnavailable) {
  try {
    GPUDM_CUDA_CHECK(fail_with(cudaErrorMemoryAllocation));
    FAIL() << "did not throw";
  } catch (const cu::OutOfDeviceMemory& e) {
    EXPECT_NE(std::string(e.what()).find("out of device memory"), std::string::npos) << e.what();
    // The runner catches Unavailable and records the run as skipped.
    EXPECT_NE(dynamic_cast<const gpudm::Unavailable*>(&e), nullptr);
  }
}

TEST(CudaErrors, NothrowVariantOnlyLogs) {
  testing::internal::CaptureStderr();
  EXPECT_NO_THROW(GPUDM_CUDA_CHECK_NOTHROW(fail_with(cudaErrorInvalidValue)));
  const std::string err = testing::internal::GetCapturedStderr();
  EXPECT_NE(err.find("cudaErrorInvalidValue"), std::string::npos) << err;
}

TEST(CudaErrors, CublasAndCusolverStatusNames) {
  try {
    GPUDM_CUBLAS_CHECK(7 /* CUBLAS_STATUS_INVALID_VALUE */);
    FAIL() << "did not throw";
  } catch (const gpudm::Error& e) {
    EXPECT_NE(std::string(e.what()).find("CUBLAS_STATUS_INVALID_VALUE"), std::string::npos) << e.what();
  }
  EXPECT_THROW(GPUDM_CUBLAS_CHECK(3 /* ALLOC_FAILED */), cu::OutOfDeviceMemory);
  try {
    GPUDM_CUSOLVER_CHECK(3 /* CUSOLVER_STATUS_INVALID_VALUE */);
    FAIL() << "did not throw";
  } catch (const gpudm::Error& e) {
    EXPECT_NE(std::string(e.what()).find("CUSOLVER_STATUS_INVALID_VALUE"), std::string::npos) << e.what();
  }
  EXPECT_NO_THROW(GPUDM_CUBLAS_CHECK(0));
  EXPECT_NO_THROW(GPUDM_CUSOLVER_CHECK(0));
}
