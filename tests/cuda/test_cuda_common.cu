// backends/cuda/common on a real device (label gpu): skipped with the reason where there is none.
#include <gtest/gtest.h>

#include <cstdint>
#include <numeric>
#include <thread>
#include <vector>

#include "algorithms/core/dataset.hpp"
#include "algorithms/core/phase_timer.hpp"
#include "backends/cuda/common/common.cuh"
#include "algorithms/core/machine.hpp"

namespace cu = gpudm::backend::cuda;

namespace {

#define REQUIRE_GPU()                                                                          \
  do {                                                                                         \
    if (gpudm::machine::gpu_count() == 0)                                                 \
      GTEST_SKIP() << "no CUDA device: " << gpudm::machine::gpu_unavailable_reason();            \
  } while (0)

__global__ void add_one(float* x, std::size_t n) {
  for (std::size_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += std::size_t(gridDim.x) * blockDim.x)
    x[i] += 1.0f;
}

__global__ void spin(long long cycles) {
  const long long t0 = clock64();
  while (clock64() - t0 < cycles) {
  }
}

// Writes every int of its dynamic shared memory (n of them) and one sum per block: a launch with n
// * 4 bytes that the function's attribute does not allow fails (cudaErrorInvalidValue).
__global__ void fill_smem(int n, int* out) {
  extern __shared__ int s[];
  for (int i = threadIdx.x; i < n; i += blockDim.x) s[i] = i;
  __syncthreads();
  if (threadIdx.x == 0) out[blockIdx.x] = s[0] + s[n - 1];
}

// Sums column `col` and counts labels per class: checks the view's layout on the device.
__global__ void column_sum(cu::DatasetView v, std::size_t col, float* sum, int* counts) {
  for (std::size_t r = blockIdx.x * blockDim.x + threadIdx.x; r < v.rows; r += std::size_t(gridDim.x) * blockDim.x) {
    if (!v.is_missing(r, col)) atomicAdd(sum, v.at(r, col));
    atomicAdd(&counts[v.labels[r]], 1);
  }
}

}  // namespace

TEST(CudaCommon, RequireDeviceAndProps) {
  if (gpudm::machine::gpu_count() == 0) {
    EXPECT_THROW(cu::require_device(), gpudm::Unavailable);
    GTEST_SKIP() << "no CUDA device: " << gpudm::machine::gpu_unavailable_reason();
  }
  const int d = cu::require_device();
  const cu::DeviceProps& p = cu::device_props(d);
  EXPECT_GT(p.sm_count, 0);
  EXPECT_GT(p.l2_bytes, 0u);
  EXPECT_GE(p.smem_per_block_optin, p.smem_per_block);
  EXPECT_EQ(p.warp_size, 32);
  EXPECT_GT(p.peak_dram_bytes_per_s(), 1e9);
  EXPECT_EQ(&cu::device_props(d), &p);  // cached
  EXPECT_THROW(cu::set_device(1000), gpudm::Error);
  EXPECT_FALSE(gpudm::machine::gpu_pci_bus_id(d).empty());
}

TEST(CudaCommon, DeviceBufferRoundTripSyncAndAsync) {
  REQUIRE_GPU();
  cu::Stream stream;
  std::vector<float> h(10000);
  std::iota(h.begin(), h.end(), 0.0f);
  cu::DeviceBuffer<float> d(h.size(), stream);
  EXPECT_EQ(d.size(), h.size());
  EXPECT_EQ(d.bytes(), h.size() * sizeof(float));
  cu::PinnedBuffer<float> pinned(h.size());
  std::copy(h.begin(), h.end(), pinned.begin());
  d.upload_async(pinned.data(), pinned.size(), stream);
  add_one<<<cu::grid_for(h.size(), 256, 64), 256, 0, stream>>>(d.data(), d.size());
  GPUDM_CUDA_CHECK_LAUNCH();
  d.download_async(pinned.data(), pinned.size(), stream);
  stream.synchronize();
  for (std::size_t i = 0; i < h.size(); ++i) ASSERT_EQ(pinned[i], h[i] + 1.0f) << i;

  cu::DeviceBuffer<float> s(h);  // synchronous path
  EXPECT_EQ(s.to_host(), h);
  s.memset(0);
  EXPECT_EQ(s.to_host(), std::vector<float>(h.size(), 0.0f));
  EXPECT_THROW(s.upload(h.data(), h.size(), 1), gpudm::Error);  // out of range

  // Move-only: the moved-from buffer is empty and does not double free.
  cu::DeviceBuffer<float> m = std::move(s);
  EXPECT_EQ(m.size(), h.size());
  EXPECT_EQ(s.size(), 0u);
  EXPECT_EQ(s.data(), nullptr);
  m.resize(10);
  EXPECT_EQ(m.size(), 10u);
  EXPECT_EQ(m.capacity(), h.size());
}

TEST(CudaCommon, HugeAllocationIsOutOfDeviceMemory) {
  REQUIRE_GPU();
  EXPECT_THROW(cu::DeviceBuffer<char>(std::size_t(1) << 50), gpudm::Unavailable);
  // The failed allocation must not poison later calls.
  cu::DeviceBuffer<int> ok(16);
  ok.memset(0);
  EXPECT_EQ(ok.to_host()[3], 0);
}

TEST(CudaCommon, LaunchCheckReportsBadConfiguration) {
  REQUIRE_GPU();
  add_one<<<1, 4096>>>(nullptr, 0);  // more threads per block than any GPU allows
  EXPECT_THROW(GPUDM_CUDA_CHECK_LAUNCH(), gpudm::Error);
  EXPECT_NO_THROW(GPUDM_CUDA_CHECK(cudaGetLastError()));  // the error was consumed
}

// allow_dynamic_smem only raises a kernel's dynamic shared-memory attribute: after a larger size
// was allowed, allowing a smaller one (what a second host thread's launch of the same kernel does
// with cudaFuncSetAttribute: Pittsburgh's two-device split under compute-sanitizer) must not lower
// it; and two host threads launching the same kernel with different sizes never fail.
TEST(CudaCommon, DynamicSharedMemoryAttributeOnlyGrows) {
  REQUIRE_GPU();
  const auto& p = cu::device_props();
  const std::size_t small = 64 * 1024, big = p.smem_per_block_optin / 1024 * 1024;
  if (big <= small) GTEST_SKIP() << "the device allows only " << p.smem_per_block_optin << " bytes a block";
  cu::DeviceBuffer<int> out(2);
  cu::allow_dynamic_smem(fill_smem, big);
  cu::allow_dynamic_smem(fill_smem, small);
  fill_smem<<<1, 256, big>>>(static_cast<int>(big / sizeof(int)), out.data());
  EXPECT_NO_THROW(GPUDM_CUDA_CHECK_LAUNCH());
  GPUDM_CUDA_CHECK(cudaDeviceSynchronize());
  EXPECT_EQ(out.to_host()[0], static_cast<int>(big / sizeof(int)) - 1);
  std::vector<std::thread> threads;
  std::vector<int> failures(2, 0);
  const int dev = cu::current_device();
  for (int t = 0; t < 2; ++t)
    threads.emplace_back([&, t] {
      cu::set_device(dev);
      const std::size_t bytes = t == 0 ? big : small;
      cu::Stream stream;
      cu::DeviceBuffer<int> o(1, stream);
      for (int i = 0; i < 50; ++i) {
        cu::allow_dynamic_smem(fill_smem, bytes);
        fill_smem<<<1, 128, bytes, stream>>>(static_cast<int>(bytes / sizeof(int)), o.data());
        if (cudaGetLastError() != cudaSuccess) ++failures[t];
      }
      stream.synchronize();
    });
  for (auto& th : threads) th.join();
  EXPECT_EQ(failures, std::vector<int>(2, 0));
}

TEST(CudaCommon, EventTimerAndDevicePhases) {
  REQUIRE_GPU();
  cu::Stream stream;
  const auto& p = cu::device_props();
  const long long cycles = static_cast<long long>(p.sm_clock_khz) * 20;  // ~20 ms at the base clock
  cu::EventTimer t;
  t.start(stream);
  spin<<<1, 1, 0, stream>>>(cycles);
  GPUDM_CUDA_CHECK_LAUNCH();
  t.stop(stream);
  const double s = t.seconds();
  EXPECT_GT(s, 0.005);
  EXPECT_LT(s, 1.0);

  gpudm::PhaseTimer timer;
  cu::DevicePhases phases(stream);
  for (int rep = 0; rep < 3; ++rep) {
    {
      auto a = phases.scope("short");
      spin<<<1, 1, 0, stream>>>(cycles / 10);
    }
    {
      auto b = phases.scope("long");
      spin<<<1, 1, 0, stream>>>(cycles);
    }
  }
  phases.flush(timer);
  ASSERT_EQ(timer.phases().size(), 2u);
  EXPECT_EQ(timer.phases()[0].clock, gpudm::PhaseClock::device);
  EXPECT_EQ(timer.phases()[0].calls, 3);
  EXPECT_GT(timer.seconds("long"), 3 * timer.seconds("short"));
  cu::record_device_phase(timer, "long", t);
  EXPECT_EQ(timer.phases()[1].calls, 4);
  EXPECT_THROW(timer.add("long", 1.0, gpudm::PhaseClock::host), gpudm::Error);
}

TEST(CudaCommon, TempStorageTwoPhase) {
  REQUIRE_GPU();
  cu::Stream stream;
  cu::TempStorage temp(stream);
  int calls = 0;
  cu::cub_two_phase(temp, [&](void* p, std::size_t& bytes) {
    ++calls;
    if (!p) bytes = 1000;
    else EXPECT_EQ(bytes, 1000u);
    return cudaSuccess;
  });
  EXPECT_EQ(calls, 2);
  EXPECT_GE(temp.capacity(), 1000u);
  void* first = temp.data();
  temp.reserve(500);
  EXPECT_EQ(temp.data(), first);  // no reallocation when it fits
}

TEST(CudaCommon, UploadDatasetKeepsColumnMajorPaddedLayout) {
  REQUIRE_GPU();
  std::vector<gpudm::Attribute> attrs(3);
  for (int c = 0; c < 3; ++c) attrs[c].name = "a" + std::to_string(c);
  gpudm::Dataset d("t", gpudm::Task::classification, 1000, attrs, {"x", "y", "z"});
  double expect = 0;
  for (std::size_t r = 0; r < d.rows(); ++r) {
    for (std::size_t c = 0; c < 3; ++c) d.at(r, c) = static_cast<float>(r % 7) + c;
    expect += static_cast<float>(r % 7) + 2;
    d.set_label(r, static_cast<int>(r % 3));
  }
  d.set_missing(5, 2);
  expect -= static_cast<float>(5 % 7) + 2;
  cu::Stream stream;
  cu::DeviceDataset dd = cu::upload_dataset(d, stream);
  const cu::DatasetView v = dd.view();
  EXPECT_EQ(v.rows, 1000u);
  EXPECT_EQ(v.padded_rows, 1024u);
  EXPECT_EQ(v.cols, 3u);
  EXPECT_EQ(v.num_classes, 3);
  EXPECT_NE(v.missing, nullptr);
  EXPECT_EQ(v.targets, nullptr);
  cu::DeviceBuffer<float> sum(1);
  cu::DeviceBuffer<int> counts(3);
  sum.memset(0);
  counts.memset(0);
  column_sum<<<8, 128, 0, stream>>>(v, 2, sum.data(), counts.data());
  GPUDM_CUDA_CHECK_LAUNCH();
  stream.synchronize();
  EXPECT_NEAR(sum.to_host()[0], expect, 1e-3 * expect);
  const auto c = counts.to_host();
  EXPECT_EQ(c[0] + c[1] + c[2], 1000);
  EXPECT_EQ(c[0], 334);
}
