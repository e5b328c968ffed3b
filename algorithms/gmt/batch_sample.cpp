#include "algorithms/gmt/batch_sample.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdint>
#include <cstring>
#include <filesystem>

#include "algorithms/core/dataset.hpp"
#include "algorithms/core/error.hpp"

namespace gpudm {
namespace gmt {

namespace {
constexpr char kMagic[8] = {'G', 'M', 'T', 'B', 'A', 'T', 'C', 'H'};
constexpr std::uint32_t kVersion = 1;
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

void write_tree(std::ofstream& o, const FlatTree& t) {
  put(o, static_cast<std::int32_t>(t.levels));
  put(o, static_cast<std::int32_t>(t.cols));
  put(o, static_cast<std::uint64_t>(t.salt));
  std::uint32_t present = 0;
  for (std::int32_t a : t.attr) present += a != kAbsentNode ? 1u : 0u;
  put(o, present);
  for (int i = 0; i < t.n_nodes(); ++i) {
    const auto ii = static_cast<std::size_t>(i);
    if (t.attr[ii] == kAbsentNode) continue;
    put(o, static_cast<std::uint32_t>(i));
    put(o, t.attr[ii]);
    put(o, t.threshold[ii]);
  }
  put(o, static_cast<std::uint32_t>(t.n_leaves()));
  const auto cols = static_cast<std::size_t>(t.cols);
  for (int l = 0; l < t.n_leaves(); ++l) {
    const auto li = static_cast<std::size_t>(l);
    put(o, static_cast<std::uint32_t>(t.leaf_node[li]));
    put(o, static_cast<std::uint8_t>(t.refit[li] ? 1 : 0));
    std::vector<std::uint32_t> attrs;
    for (std::size_t c = 0; c < cols; ++c)
      if (t.mask[li * cols + c]) attrs.push_back(static_cast<std::uint32_t>(c));
    put(o, static_cast<std::uint32_t>(attrs.size()));
    for (std::uint32_t a : attrs) put(o, a);
    if (!t.refit[li]) {
      put(o, t.coef[li * (cols + 1)]);
      for (std::uint32_t a : attrs) put(o, t.coef[li * (cols + 1) + 1 + a]);
    }
  }
}

// The evaluators walk a flat tree without bounds checks (children of node i at 2i+1 and 2i+2,
// x[attr], leaf_slot of the node reached), so a tree read from a file must have the shape
// flatten() gives: a root; an internal node's test attribute in [0, cols) and both children
// present within the array; every leaf with its leaf record; nothing present below a leaf.
void check_shape(const FlatTree& t, const std::string& path) {
  const auto corrupt = [&](const std::string& what) {
    return Error("gmt: batch sample '" + path + "' is corrupt (" + what + ")");
  };
  const std::size_t nn = t.attr.size();
  if (t.attr[0] == kAbsentNode) throw corrupt("a tree without a root");
  for (std::size_t i = 0; i < nn; ++i) {
    const std::int32_t a = t.attr[i];
    const bool reachable = i == 0 || t.attr[(i - 1) / 2] >= 0;
    if (a == kAbsentNode) {
      if (reachable) throw corrupt("node " + std::to_string(i) + " is a missing child");
    } else if (!reachable) {
      throw corrupt("node " + std::to_string(i) + " lies below a leaf");
    } else if (a == kLeafNode) {
      if (t.leaf_slot[i] < 0) throw corrupt("leaf node " + std::to_string(i) + " has no leaf record");
    } else if (a < 0 || a >= t.cols || 2 * i + 2 >= nn) {
      throw corrupt("node " + std::to_string(i) + " tests attribute " + std::to_string(a) + " of " + std::to_string(t.cols) +
                    (2 * i + 2 >= nn ? " on the last level" : ""));
    }
  }
}

FlatTree read_tree(Reader& r, std::uint64_t cols_expected) {
  FlatTree t;
  t.levels = r.get<std::int32_t>();
  t.cols = r.get<std::int32_t>();
  t.salt = r.get<std::uint64_t>();
  if (t.levels < 1 || t.levels > 24 || static_cast<std::uint64_t>(t.cols) != cols_expected)
    throw Error("gmt: batch sample '" + r.path() + "' is corrupt (a tree of " + std::to_string(t.levels) + " levels, " +
                std::to_string(t.cols) + " attributes)");
  const std::size_t nn = (std::size_t{1} << t.levels) - 1;
  const auto cols = static_cast<std::size_t>(t.cols);
  r.hold(sizeof(FlatTree) + nn * (sizeof(std::int32_t) * 2 + sizeof(float)));
  t.attr.assign(nn, kAbsentNode);
  t.threshold.assign(nn, 0.0f);
  t.leaf_slot.assign(nn, -1);
  const auto present = r.get<std::uint32_t>();
  for (std::uint32_t k = 0; k < present; ++k) {
    const auto i = r.get<std::uint32_t>();
    const auto a = r.get<std::int32_t>();
    const auto th = r.get<float>();
    if (i >= nn) throw Error("gmt: batch sample '" + r.path() + "' is corrupt (node " + std::to_string(i) + ")");
    t.attr[i] = a;
    t.threshold[i] = th;
  }
  const auto leaves = r.get<std::uint32_t>();
  for (std::uint32_t l = 0; l < leaves; ++l) {
    const auto node = r.get<std::uint32_t>();
    const auto refit = r.get<std::uint8_t>();
    const auto na = r.get<std::uint32_t>();
    if (node >= nn || t.attr[node] != kLeafNode || t.leaf_slot[node] >= 0 || na > cols)
      throw Error("gmt: batch sample '" + r.path() + "' is corrupt (leaf " + std::to_string(l) + ")");
    r.hold(cols * (1 + sizeof(double)) + sizeof(double) + 16);
    t.leaf_slot[node] = static_cast<std::int32_t>(l);
    t.leaf_node.push_back(static_cast<std::int32_t>(node));
    t.refit.push_back(refit);
    const std::size_t m0 = t.mask.size(), c0 = t.coef.size();
    t.mask.resize(m0 + cols, 0);
    t.coef.resize(c0 + cols + 1, 0.0);
    std::vector<std::uint32_t> attrs(na);
    for (auto& a : attrs) {
      a = r.get<std::uint32_t>();
      if (a >= cols) throw Error("gmt: batch sample '" + r.path() + "' is corrupt (attribute " + std::to_string(a) + ")");
      t.mask[m0 + a] = 1;
    }
    if (!refit) {
      t.coef[c0] = r.get<double>();
      for (std::uint32_t a : attrs) t.coef[c0 + 1 + a] = r.get<double>();
    }
  }
  check_shape(t, r.path());
  return t;
}
}  // namespace

std::int64_t BatchSample::trees() const {
  std::int64_t n = 0;
  for (const auto& b : batches) n += static_cast<std::int64_t>(b.size());
  return n;
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

void BatchSampleWriter::add(int generation, const std::vector<const FlatTree*>& batch) {
  put(out_, kBatchRecord);
  put(out_, static_cast<std::int32_t>(generation));
  put(out_, static_cast<std::uint32_t>(batch.size()));
  for (const FlatTree* t : batch) write_tree(out_, *t);
  ++batches_;
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
  if (version != kVersion) throw Error("gmt: batch sample '" + path + "' has version " + std::to_string(version));
  s.dataset = r.get_string();
  s.rows = r.get<std::uint64_t>();
  s.cols = r.get<std::uint64_t>();
  s.seed = r.get<std::uint64_t>();
  while (!r.at_end()) {
    const auto type = r.get<std::uint32_t>();
    if (type == kBatchRecord) {
      s.generation.push_back(r.get<std::int32_t>());
      const auto n = r.get<std::uint32_t>();
      std::vector<FlatTree> b;
      b.reserve(std::min<std::uint32_t>(n, 1024));  // n is read from the file: trees are counted as they come
      for (std::uint32_t k = 0; k < n; ++k) b.push_back(read_tree(r, s.cols));
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
  const std::pair<std::string, std::string> subs[] = {
      {"{experiment}", experiment}, {"{dataset}", dataset}, {"{seed}", std::to_string(seed)}};
  for (const auto& [key, value] : subs)
    for (std::size_t at = pattern.find(key); at != std::string::npos; at = pattern.find(key, at + value.size()))
      pattern.replace(at, key.size(), value);
  return pattern;
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
