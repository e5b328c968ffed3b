// main() of the mpi tests: MPI started when launched by mpiexec (MpiSession), gtest's report from
// rank 0 only, and the run fails on every rank when a test failed on any rank.
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "algorithms/core/comm.hpp"

int main(int argc, char** argv) {
  gpudm::MpiSession mpi(&argc, &argv);
  ::testing::InitGoogleTest(&argc, argv);
  // Only rank 0 prints gtest's report (every rank runs and asserts; a failing rank fails the run).
  if (gpudm::world().rank() != 0) {
    auto& listeners = ::testing::UnitTest::GetInstance()->listeners();
    delete listeners.Release(listeners.default_result_printer());
  }
  int rc = RUN_ALL_TESTS();
  // Every rank's verdict: the run fails on every rank if one failed.
  std::vector<std::uint64_t> failed{rc != 0 ? 1ull : 0ull};
  gpudm::world().sum(failed.data(), 1, "test verdicts");
  return failed[0] ? 1 : 0;
}
