#include "algorithms/gmt/batch_sample.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdint>
#include <cstring>
#include <filesystem>

#include "algorithms/core/dataset.hpp"
#include "algorithms/core/replay_estimate.hpp"
#include "algorithms/core/error.hpp"

namespace gpudm {
namespace gmt {

namespace {
constexpr char kMagic[8] = {'G', 'M', 'T', 'B', 'A', 'T', 'C', 'H'};
constexpr std::uint32_t kVersion = 2;
constexpr std::uint32_t kBatchRecord = 1, kSummaryRecord = 2;

template <class T>
void put(std::ofstream& o, const T& v) {
  o.write(reinterpret_cast<const char*>(&v), sizeof(T));
}
void put_string(std::ofstream& o, const std::string& s) {
  put(o, static_cast<std::uint32_t>(s.size()));
  o.write(s.data(), static_cast<std::streamsize>(s.size()));
}

class Reader {
 public:
  Reader(const std::string& path, std::size_t max_bytes) : path_(path), in_(path, std::ios::binary), limit_(max_bytes) {
    if (!in_) throw Error("gmt: cannot open batch sample '" + path + "'");
  }
  template <class T>
  T get() {
    T v{};
    if (!in_.read(reinterpret_cast<char*>(&v), sizeof(T))) throw Error("gmt: batch sample '" + path_ + "' is truncated");
    return v;
  }
  std::string get_string() {
    const auto n = get<std::uint32_t>();
    if (n > (1u << 20)) throw Error("gmt: batch sample '" + path_ + "' is corrupt (string of " + std::to_string(n) + " bytes)");
    std::string s(n, '\0');
    if (n && !in_.read(&s[0], n)) throw Error("gmt: batch sample '" + path_ + "' is truncated");
    return s;
  }
  bool at_end() { return in_.peek() == std::char_traits<char>::eof(); }
  const std::string& path() const { return path_; }
  // Counts the host memory the trees read so far take: a few bytes of file can declare a tree of
  // 2^24 nodes, so a sample that would not fit is an error before it is allocated (not the OOM
  // killer). The limit: max_bytes, else (from 256 MiB on) the host memory available.
  void hold(std::size_t bytes) {
    held_ += bytes;
    if (limit_ == 0) {
      if (held_ < (std::size_t{256} << 20)) return;
      limit_ = Dataset::available_host_memory();
      if (limit_ == 0) limit_ = SIZE_MAX;  // unknown
    }
    if (held_ > limit_)
      throw Error("gmt: batch sample '" + path_ + "' needs more than " + std::to_string(held_ >> 20) +
                  " MiB of host memory for its trees, more than the " + std::to_string(limit_ >> 20) + " MiB available");
  }

 private:
  std::string path_;
  std::ifstream in_;
  std::size_t held_ = 0, limit_ = 0;
};

void write_tree(std::ofstream& o, const Tree& t, std::uint64_t salt) {
  put(o, salt);
  put(o, static_cast<std::uint32_t>(t.size()));
  for (const TreeNode& n : t.nodes()) {
    put(o, n.attr);
    put(o, n.threshold);
    put(o, n.left);
    put(o, n.m_off);
    put(o, n.m_len);
    put(o, n.c_off);
    put(o, n.dirty);
    put(o, n.has_coef);
    put(o, n.stats.count);
    put(o, n.stats.sse);
  }
  put(o, static_cast<std::uint32_t>(t.attr_pool().size()));
  for (std::int32_t a : t.attr_pool()) put(o, a);
  put(o, static_cast<std::uint32_t>(t.coef_pool().size()));
  for (double c : t.coef_pool()) put(o, c);
}

Tree read_tree(Reader& r, std::uint64_t cols, std::uint64_t* salt) {
  *salt = r.get<std::uint64_t>();
  const auto nn = r.get<std::uint32_t>();
  if (nn == 0 || nn > (1u << 24)) throw Error("gmt: batch sample '" + r.path() + "' is corrupt (a tree of " + std::to_string(nn) + " nodes)");
  r.hold(std::size_t{nn} * sizeof(TreeNode));
  std::vector<TreeNode> nodes(nn);
  for (TreeNode& n : nodes) {
    n.attr = r.get<std::int32_t>();
    n.threshold = r.get<float>();
    n.left = r.get<std::int32_t>();
    n.m_off = r.get<std::int32_t>();
    n.m_len = r.get<std::int32_t>();
    n.c_off = r.get<std::int32_t>();
    n.dirty = r.get<std::uint8_t>();
    n.has_coef = r.get<std::uint8_t>();
    n.stats.count = r.get<std::int64_t>();
    n.stats.sse = r.get<double>();
  }
  const auto na = r.get<std::uint32_t>();
  if (na > (1u << 28)) throw Error("gmt: batch sample '" + r.path() + "' is corrupt (a model pool of " + std::to_string(na) + ")");
  r.hold(std::size_t{na} * sizeof(std::int32_t));
  std::vector<std::int32_t> attrs(na);
  for (auto& a : attrs) a = r.get<std::int32_t>();
  const auto nc = r.get<std::uint32_t>();
  if (nc > (1u << 28)) throw Error("gmt: batch sample '" + r.path() + "' is corrupt (a coefficient pool of " + std::to_string(nc) + ")");
  r.hold(std::size_t{nc} * sizeof(double));
  std::vector<double> coef(nc);
  for (auto& c : coef) c = r.get<double>();
  return Tree::from_parts(std::move(nodes), std::move(attrs), std::move(coef), static_cast<int>(std::min<std::uint64_t>(cols, 1u << 30)),
                          "gmt: batch sample '" + r.path() + "' is corrupt");
}
}  // namespace

std::int64_t BatchSample::trees() const {
  std::int64_t n = 0;
  for (const auto& b : batches) n += static_cast<std::int64_t>(b.size());
  return n;
}

EvalBatch SampledBatch::batch(std::vector<Tree>& copies) const {
  copies = trees;
  EvalBatch b;
  for (Tree& t : copies) b.trees.push_back(&t);
  b.salts = salts;
  b.repair = repair;
  b.clean_sse_known = true;  // recorded from an EA run
  return b;
}

BatchSampleWriter::BatchSampleWriter(const std::string& path, const std::string& dataset, std::uint64_t rows,
                                     std::uint64_t cols, std::uint64_t seed)
    : path_(path) {
  const std::filesystem::path p(path);
  if (p.has_parent_path()) std::filesystem::create_directories(p.parent_path());
  out_.open(path + ".tmp", std::ios::binary | std::ios::trunc);
  if (!out_) throw Error("gmt: cannot write batch sample '" + path + ".tmp'");
  out_.write(kMagic, sizeof(kMagic));
  put(out_, kVersion);
  put_string(out_, dataset);
  put(out_, rows);
  put(out_, cols);
  put(out_, seed);
}

void BatchSampleWriter::put_batch(int generation, const RepairSpec& repair, std::size_t trees, const Tree* const* tree,
                                  const std::uint64_t* salts) {
  put(out_, kBatchRecord);
  put(out_, static_cast<std::int32_t>(generation));
  put(out_, static_cast<std::int32_t>(repair.min_rows));
  put(out_, static_cast<std::int32_t>(repair.mode == RepairMode::promote ? 0 : 1));
  put(out_, static_cast<std::uint32_t>(trees));
  for (std::size_t k = 0; k < trees; ++k) write_tree(out_, *tree[k], salts[k]);
  ++batches_;
}

void BatchSampleWriter::add(int generation, const EvalBatch& batch) {
  put_batch(generation, batch.repair, batch.size(), batch.trees.data(), batch.salts.data());
}

void BatchSampleWriter::add(const SampledBatch& batch) {
  std::vector<const Tree*> trees;
  trees.reserve(batch.size());
  for (const Tree& t : batch.trees) trees.push_back(&t);
  put_batch(batch.generation, batch.repair, batch.size(), trees.data(), batch.salts.data());
}

void BatchSampleWriter::finish(const RecordedRun& run) {
  put(out_, kSummaryRecord);
  put_string(out_, run.backend);
  put(out_, run.evaluations);
  put(out_, static_cast<std::int32_t>(run.iterations));
  put(out_, run.scale);
  put(out_, run.host_seconds);
  put(out_, run.run_seconds);
  put(out_, run.evaluator_seconds);
  out_.close();
  if (!out_) throw Error("gmt: writing batch sample '" + path_ + ".tmp' failed");
  std::filesystem::rename(path_ + ".tmp", path_);
}

BatchSample read_batch_sample(const std::string& path, std::size_t max_bytes) {
  Reader r(path, max_bytes);
  BatchSample s;
  char magic[sizeof(kMagic)];
  for (char& c : magic) c = r.get<char>();
  if (std::memcmp(magic, kMagic, sizeof(kMagic)) != 0) throw Error("gmt: '" + path + "' is not a GMT batch sample");
  const auto version = r.get<std::uint32_t>();
  if (version != kVersion)
    throw Error("gmt: batch sample '" + path + "' has version " + std::to_string(version) + " (this build reads version " +
                std::to_string(kVersion) + "; record it again with batch_sample_every)");
  s.dataset = r.get_string();
  s.rows = r.get<std::uint64_t>();
  s.cols = r.get<std::uint64_t>();
  s.seed = r.get<std::uint64_t>();
  while (!r.at_end()) {
    const auto type = r.get<std::uint32_t>();
    if (type == kBatchRecord) {
      SampledBatch b;
      b.generation = r.get<std::int32_t>();
      b.repair.min_rows = r.get<std::int32_t>();
      const auto mode = r.get<std::int32_t>();
      if (b.repair.min_rows < 0 || (mode != 0 && mode != 1))
        throw Error("gmt: batch sample '" + path + "' is corrupt (repair rule " + std::to_string(b.repair.min_rows) + ", " + std::to_string(mode) + ")");
      b.repair.mode = mode == 0 ? RepairMode::promote : RepairMode::collapse;
      const auto n = r.get<std::uint32_t>();
      b.trees.reserve(std::min<std::uint32_t>(n, 1024));  // n is read from the file: trees are counted as they come
      for (std::uint32_t k = 0; k < n; ++k) {
        std::uint64_t salt = 0;
        b.trees.push_back(read_tree(r, s.cols, &salt));
        b.salts.push_back(salt);
      }
      s.batches.push_back(std::move(b));
    } else if (type == kSummaryRecord) {
      s.run.backend = r.get_string();
      s.run.evaluations = r.get<std::int64_t>();
      s.run.iterations = r.get<std::int32_t>();
      s.run.scale = r.get<double>();
      s.run.host_seconds = r.get<double>();
      s.run.run_seconds = r.get<double>();
      s.run.evaluator_seconds = r.get<double>();
      const auto finite_at_least = [](double x, double lo) { return std::isfinite(x) && x >= lo; };
      if (s.run.evaluations < 1 || s.run.iterations < 0 || !finite_at_least(s.run.scale, 1e-300) ||
          !finite_at_least(s.run.host_seconds, 0) || !finite_at_least(s.run.run_seconds, 0) ||
          !finite_at_least(s.run.evaluator_seconds, 0))
        throw Error("gmt: batch sample '" + path + "' is corrupt (its summary record)");
      s.complete = true;
    } else {
      throw Error("gmt: batch sample '" + path + "' is corrupt (record type " + std::to_string(type) + ")");
    }
  }
  return s;
}

std::string expand_sample_path(std::string pattern, const std::string& experiment, const std::string& dataset,
                               std::uint64_t seed) {
  return expand_sample_pattern(std::move(pattern), experiment, dataset, seed);
}

std::vector<std::size_t> pick_batches(const BatchSample& s, std::int64_t max_trees) {
  std::vector<std::size_t> out;
  const std::size_t nb = s.batches.size();
  if (nb == 0) return out;
  const std::int64_t total = s.trees();
  // Every k-th batch, k chosen so that the picked ones hold about max_trees trees.
  std::size_t k = 1;
  if (max_trees > 0 && total > max_trees) k = static_cast<std::size_t>((total + max_trees - 1) / max_trees);
  std::int64_t taken = 0;
  for (std::size_t i = k / 2; i < nb; i += k) {
    const auto sz = static_cast<std::int64_t>(s.batches[i].size());
    if (!out.empty() && max_trees > 0 && taken + sz > max_trees) break;
    out.push_back(i);
    taken += sz;
  }
  if (out.empty()) out.push_back(0);
  return out;
}

}  // namespace gmt
}  // namespace gpudm
