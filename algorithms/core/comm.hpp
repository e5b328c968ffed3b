#pragma once
// The ranks of one run: the MPI world when gpudm is built with MPI (Open MPI from
// Debian, found by find_package(MPI); optional like CUDA) and the process was started by mpirun /
// srun, otherwise a single process. Every collective here is deterministic: a floating-point sum
// is formed on every rank in rank order (rank 0's values + rank 1's + ...), so all ranks hold the
// same bits and a given rank count always gives the same answer; an integer sum is MPI's
// all-reduce (unsigned addition, modulo 2^bits, gives the same bits in any order: exact at any
// rank count and equal to the rank-order sum).
// A collective that does not complete within the timeout (a rank died or hangs) ends every rank
// with one error line naming the operation (MPI_Abort), instead of a hang.
//
// MPI-free header: only comm.cpp sees mpi.h.
#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace gpudm {

class Comm {
 public:
  virtual ~Comm() = default;
  virtual int rank() const = 0;
  virtual int size() const = 0;
  // "mpi" or "single process"
  virtual std::string kind() const = 0;
  // This rank's host name.
  virtual std::string host() const = 0;
  // Element-wise sums over the ranks, in place, the same on every rank (integers: an all-reduce;
  // doubles: every rank's values gathered, then added in rank order).
  virtual void sum(std::uint64_t* v, std::size_t n, const char* what) = 0;
  virtual void sum(std::uint32_t* v, std::size_t n, const char* what) = 0;
  virtual void sum(double* v, std::size_t n, const char* what) = 0;
  // Every rank's `mine` (lengths may differ) concatenated in rank order, on every rank.
  virtual std::vector<std::uint32_t> gather_all(const std::vector<std::uint32_t>& mine, const char* what) = 0;
  virtual std::vector<std::string> gather_all(const std::string& mine, const char* what) = 0;
  // The largest value over the ranks (e.g. the slowest rank's time).
  virtual double max(double v, const char* what) = 0;
  virtual void barrier(const char* what) = 0;
  // Ends every rank: prints "gpudm: rank R: <message>" on this rank's stderr first.
  [[noreturn]] virtual void abort(const std::string& message, int code) = 0;
};

// The process's communicator: MPI's world when MPI was started (MpiSession), else one rank.
Comm& world();

// RAII for main(): starts MPI when gpudm has MPI and this process was launched by an MPI
// launcher (OMPI_COMM_WORLD_SIZE / PMI_SIZE / PMIX_RANK in the environment), finalises it at the
// end. Without a launcher nothing is started (a plain run never needs mpirun, and Open MPI's
// singleton start refuses root). `available()`: gpudm was built with MPI.
class MpiSession {
 public:
  MpiSession(int* argc, char*** argv);
  ~MpiSession();
  MpiSession(const MpiSession&) = delete;
  MpiSession& operator=(const MpiSession&) = delete;
  static bool available();
  bool started() const { return started_; }

 private:
  bool started_ = false;
};

// Seconds a collective may take before every rank is ended (GPUDM_MPI_TIMEOUT, default 600).
double collective_timeout_seconds();

// Bytes one rank receives in an integer sum of `bytes` bytes a rank over `ranks` ranks, as the
// byte counters of the sharded evaluators count it: an all-reduce's least, 2 (N - 1) / N x bytes
// (reduce-scatter, then all-gather; Open MPI picks its algorithm and may move more). 0 at one rank.
inline std::uint64_t integer_sum_bytes(std::uint64_t bytes, int ranks) {
  return ranks > 1 ? 2 * bytes * static_cast<std::uint64_t>(ranks - 1) / static_cast<std::uint64_t>(ranks) : 0;
}
// Bytes one rank receives in a floating-point sum (every rank's values gathered): N x bytes.
inline std::uint64_t gathered_sum_bytes(std::uint64_t bytes, int ranks) { return ranks > 1 ? bytes * static_cast<std::uint64_t>(ranks) : 0; }

// The contiguous block [begin, end) of n items that rank `rank` of `size` holds: sizes differ by
// at most `align` items, every boundary but n a multiple of `align`.
std::pair<std::size_t, std::size_t> shard(std::size_t n, int rank, int size, std::size_t align = 1);

}  // namespace gpudm
