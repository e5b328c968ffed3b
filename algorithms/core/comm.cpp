#include "algorithms/core/comm.hpp"

#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <stdexcept>
#include <string>
#include <thread>
#include <type_traits>

#include "algorithms/core/error.hpp"

#if GPUDM_HAVE_MPI
#include <mpi.h>
#endif

namespace gpudm {

namespace {

std::string host_name() {
  char buf[256] = {0};
  if (::gethostname(buf, sizeof buf - 1) != 0) return "unknown";
  return buf;
}

class SingleProcess final : public Comm {
 public:
  int rank() const override { return 0; }
  int size() const override { return 1; }
  std::string kind() const override { return "single process"; }
  std::string host() const override { return host_name(); }
  void sum(std::uint64_t*, std::size_t, const char*) override {}
  void sum(std::uint32_t*, std::size_t, const char*) override {}
  void sum(double*, std::size_t, const char*) override {}
  std::vector<std::uint32_t> gather_all(const std::vector<std::uint32_t>& mine, const char*) override { return mine; }
  std::vector<std::string> gather_all(const std::string& mine, const char*) override { return {mine}; }
  double max(double v, const char*) override { return v; }
  void barrier(const char*) override {}
  [[noreturn]] void abort(const std::string& message, int code) override {
    std::fprintf(stderr, "gpudm: rank 0: %s\n", message.c_str());
    std::fflush(stderr);
    std::_Exit(code);
  }
};

#if GPUDM_HAVE_MPI
// Collectives: non-blocking, polled against the deadline (Open MPI has no collective timeout).
class MpiWorld final : public Comm {
 public:
  MpiWorld() {
    MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
    MPI_Comm_size(MPI_COMM_WORLD, &size_);
  }
  int rank() const override { return rank_; }
  int size() const override { return size_; }
  std::string kind() const override { return "mpi"; }
  std::string host() const override { return host_name(); }
  void sum(std::uint64_t* v, std::size_t n, const char* what) override { integer_sum(v, n, MPI_UINT64_T, what); }
  void sum(std::uint32_t* v, std::size_t n, const char* what) override { integer_sum(v, n, MPI_UINT32_T, what); }
  void sum(double* v, std::size_t n, const char* what) override { sum_in_rank_order(v, n, MPI_DOUBLE, what); }
  std::vector<std::uint32_t> gather_all(const std::vector<std::uint32_t>& mine, const char* what) override {
    const std::vector<int> counts = lengths(static_cast<long long>(mine.size()), what);
    long long total = 0;
    const std::vector<int> displs = offsets(counts, total, what);
    std::vector<std::uint32_t> out(static_cast<std::size_t>(total));
    MPI_Request req;
    MPI_Iallgatherv(mine.data(), static_cast<int>(mine.size()), MPI_UINT32_T, out.data(), counts.data(), displs.data(), MPI_UINT32_T,
                    MPI_COMM_WORLD, &req);
    wait(req, what, out.size() * sizeof(std::uint32_t));
    return out;
  }
  std::vector<std::string> gather_all(const std::string& mine, const char* what) override {
    const std::vector<int> counts = lengths(static_cast<long long>(mine.size()), what);
    long long total = 0;
    const std::vector<int> displs = offsets(counts, total, what);
    std::string all(static_cast<std::size_t>(total), '\0');
    MPI_Request req;
    MPI_Iallgatherv(mine.data(), static_cast<int>(mine.size()), MPI_CHAR, all.data(), counts.data(), displs.data(), MPI_CHAR,
                    MPI_COMM_WORLD, &req);
    wait(req, what, all.size());
    std::vector<std::string> out;
    for (std::size_t r = 0; r < counts.size(); ++r) out.push_back(all.substr(static_cast<std::size_t>(displs[r]), static_cast<std::size_t>(counts[r])));
    return out;
  }
  double max(double v, const char* what) override {
    double out = v;
    MPI_Request req;
    MPI_Iallreduce(&v, &out, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD, &req);
    wait(req, what);
    return out;
  }
  void barrier(const char* what) override {
    MPI_Request req;
    MPI_Ibarrier(MPI_COMM_WORLD, &req);
    wait(req, what);
  }
  [[noreturn]] void abort(const std::string& message, int code) override {
    std::fprintf(stderr, "gpudm: rank %d: %s\n", rank_, message.c_str());
    std::fflush(stderr);
    MPI_Abort(MPI_COMM_WORLD, code);
    std::_Exit(code);
  }

 private:
  // Every rank's length of a gathered block.
  std::vector<int> lengths(long long mine, const char* what) {
    if (mine > 0x7FFFFFFFLL) abort(std::string(what) + ": a block of more than 2^31 elements", 3);
    int n = static_cast<int>(mine);
    std::vector<int> all(static_cast<std::size_t>(size_), 0);
    MPI_Request req;
    MPI_Iallgather(&n, 1, MPI_INT, all.data(), 1, MPI_INT, MPI_COMM_WORLD, &req);
    wait(req, what);
    return all;
  }
  // Where each rank's block starts in the gathered whole; `total` its length.
  std::vector<int> offsets(const std::vector<int>& counts, long long& total, const char* what) {
    std::vector<int> displs(counts.size(), 0);
    total = 0;
    for (std::size_t r = 0; r < counts.size(); ++r) {
      displs[r] = static_cast<int>(total);
      total += counts[r];
    }
    if (total > 0x7FFFFFFFLL) abort(std::string(what) + ": a gathered whole of more than 2^31 elements", 3);
    return displs;
  }
  // Unsigned integers: MPI's all-reduce. Addition modulo 2^bits is associative and commutative, so
  // whatever order the library adds in, every rank gets the rank-order sum's bits; each rank
  // receives ~2 (N - 1) / N of the vector instead of the N copies a gather brings.
  template <class T>
  void integer_sum(T* v, std::size_t n, MPI_Datatype type, const char* what) {
    static_assert(std::is_unsigned_v<T>, "an all-reduce sum is order-free for unsigned integers only");
    if (n == 0) return;
    if (n > 0x7FFFFFFFu) abort(std::string(what) + ": a sum of more than 2^31 elements", 3);
    MPI_Request req;
    MPI_Iallreduce(MPI_IN_PLACE, v, static_cast<int>(n), type, MPI_SUM, MPI_COMM_WORLD, &req);
    wait(req, what, 2 * n * sizeof(T));
  }
  // Gathers every rank's vector, then sums in rank order on every rank: the same bits everywhere
  // (MPI_Allreduce's order of a floating-point sum is the library's choice).
  template <class T>
  void sum_in_rank_order(T* v, std::size_t n, MPI_Datatype type, const char* what) {
    if (n == 0) return;
    if (n > 0x7FFFFFFFu) abort(std::string(what) + ": a sum of more than 2^31 elements", 3);
    std::vector<T> all(n * static_cast<std::size_t>(size_));
    MPI_Request req;
    MPI_Iallgather(v, static_cast<int>(n), type, all.data(), static_cast<int>(n), type, MPI_COMM_WORLD, &req);
    wait(req, what, all.size() * sizeof(T));
    for (std::size_t i = 0; i < n; ++i) {
      T s = all[i];
      for (int r = 1; r < size_; ++r) s += all[static_cast<std::size_t>(r) * n + i];
      v[i] = s;
    }
  }
  // Polls a request against the deadline. MPI's non-blocking collectives (Open MPI's libnbc) move
  // only inside MPI_Test, a shared-memory fragment or a schedule round per call, so the first
  // stretch polls without sleeping (yielding the core: CI oversubscribes), for 2 ms plus 1 ms a MB
  // the rank receives (a 16 MB all-reduce polled every 50 us crawls at ~1 GB/s); then the
  // sleeps back off to ~50 us (1, 2, ... 64 us: a rank waiting on a slower rank's compute).
  void wait(MPI_Request& req, const char* what, std::size_t bytes = 0) {
    const double limit = collective_timeout_seconds();
    const double spin = 0.002 + 1e-9 * static_cast<double>(bytes);
    const auto t0 = std::chrono::steady_clock::now();
    int done = 0;
    auto pause = std::chrono::microseconds(1);
    for (;;) {
      MPI_Test(&req, &done, MPI_STATUS_IGNORE);
      if (done) return;
      const double waited = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      if (waited > limit)
        abort(std::string(what) + ": no answer from every rank within " + std::to_string(static_cast<long long>(limit)) +
                  " s (GPUDM_MPI_TIMEOUT): a rank failed or hangs; ending every rank",
              3);
      if (waited < spin) {
        std::this_thread::yield();
        continue;
      }
      std::this_thread::sleep_for(pause);
      if (pause < std::chrono::microseconds(50)) pause *= 2;  // (a short cap: thousands of small collectives per run)
    }
  }
  int rank_ = 0, size_ = 1;
};
#endif

bool g_started = false;

bool launched_by_mpi() {
  for (const char* v : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_RANK", "SLURM_STEP_NUM_TASKS"})
    if (std::getenv(v)) return true;
  return false;
}

}  // namespace

bool MpiSession::available() {
#if GPUDM_HAVE_MPI
  return true;
#else
  return false;
#endif
}

MpiSession::MpiSession(int* argc, char*** argv) {
#if GPUDM_HAVE_MPI
  int already = 0;
  MPI_Initialized(&already);
  if (!already && launched_by_mpi()) {
    // Ranks = GPUs of a host: GPUDM_GPU_PER_RANK=1 gives each rank the GPU of its local rank, set
    // before MPI starts (a CUDA-aware MPI may touch CUDA in its init); a CUDA_VISIBLE_DEVICES the
    // launcher set wins.
    const char* per_rank = std::getenv("GPUDM_GPU_PER_RANK");
    if (per_rank && std::string(per_rank) == "1" && !std::getenv("CUDA_VISIBLE_DEVICES")) {
      for (const char* v : {"OMPI_COMM_WORLD_LOCAL_RANK", "MPI_LOCALRANKID", "SLURM_LOCALID"})
        if (const char* local = std::getenv(v)) {
          ::setenv("CUDA_VISIBLE_DEVICES", local, 1);
          break;
        }
    }
    int provided = 0;
    MPI_Init_thread(argc, argv, MPI_THREAD_FUNNELED, &provided);
    started_ = g_started = true;
    // MPI is called from the main thread only (FUNNELED); a library that gives less cannot be used.
    if (provided < MPI_THREAD_FUNNELED) world().abort("this MPI library gives no MPI_THREAD_FUNNELED support", 3);
  }
#else
  (void)argc;
  (void)argv;
#endif
}

MpiSession::~MpiSession() {
#if GPUDM_HAVE_MPI
  if (started_) {
    int finalized = 0;
    MPI_Finalized(&finalized);
    if (!finalized) MPI_Finalize();
    g_started = false;
  }
#endif
}

Comm& world() {
#if GPUDM_HAVE_MPI
  if (g_started) {
    static MpiWorld w;
    return w;
  }
#endif
  static SingleProcess one;
  return one;
}

double collective_timeout_seconds() {
  if (const char* v = std::getenv("GPUDM_MPI_TIMEOUT")) {
    char* end = nullptr;
    const double s = std::strtod(v, &end);
    if (end != v && *end == '\0' && s > 0) return s;
  }
  return 600.0;
}

std::pair<std::size_t, std::size_t> shard(std::size_t n, int rank, int size, std::size_t align) {
  GPUDM_REQUIRE(size >= 1 && rank >= 0 && rank < size && align >= 1, "shard: rank " + std::to_string(rank) + " of " + std::to_string(size));
  const std::size_t units = (n + align - 1) / align;  // blocks of `align` items, the last maybe short
  const std::size_t s = static_cast<std::size_t>(size), r = static_cast<std::size_t>(rank);
  // (rounded up: with fewer units than ranks the low ranks get them, rank 0 first)
  const std::size_t u0 = (units * r + s - 1) / s, u1 = (units * (r + 1) + s - 1) / s;
  return {std::min(n, u0 * align), std::min(n, u1 * align)};
}

}  // namespace gpudm
