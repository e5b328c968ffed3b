#include "algorithms/gp_rules/pop_sample.hpp"

#include <cstring>
#include <fstream>
#include <sstream>

#include "algorithms/core/error.hpp"
#include "algorithms/core/files.hpp"

namespace gpudm::gp_rules {

namespace {

constexpr char kMagic[8] = {'G', 'P', 'R', 'U', 'L', 'P', 'O', 'P'};
constexpr std::uint32_t kVersion = 3;  // v3: counts_hash over the counts only (v2 hashed the coverage bits too)

std::uint64_t fnv(const void* p, std::size_t n, std::uint64_t h) {
  const auto* b = static_cast<const unsigned char*>(p);
  for (std::size_t i = 0; i < n; ++i) {
    h ^= b[i];
    h *= 0x100000001b3ull;
  }
  return h;
}

class Out {
 public:
  explicit Out(std::ostream& f) : f_(f) {}
  template <class T>
  void put(const T& v) { f_.write(reinterpret_cast<const char*>(&v), sizeof v); }
  void str(const std::string& s) {
    put(static_cast<std::uint64_t>(s.size()));
    f_.write(s.data(), static_cast<std::streamsize>(s.size()));
  }
  template <class T>
  void vec(const std::vector<T>& v) {
    put(static_cast<std::uint64_t>(v.size()));
    f_.write(reinterpret_cast<const char*>(v.data()), static_cast<std::streamsize>(v.size() * sizeof(T)));
  }

 private:
  std::ostream& f_;
};

class In {
 public:
  In(const std::string& path, std::vector<char> bytes) : path_(path), b_(std::move(bytes)) {}
  template <class T>
  T get(const char* what) {
    need(sizeof(T), what);
    T v;
    std::memcpy(&v, b_.data() + at_, sizeof v);
    at_ += sizeof v;
    return v;
  }
  std::string str(const char* what) {
    const auto n = get<std::uint64_t>(what);
    need(n, what);
    std::string s(b_.data() + at_, static_cast<std::size_t>(n));
    at_ += static_cast<std::size_t>(n);
    return s;
  }
  template <class T>
  std::vector<T> vec(const char* what) {
    const auto n = get<std::uint64_t>(what);
    GPUDM_REQUIRE(n <= (b_.size() - at_) / sizeof(T), path_ + ": truncated or corrupt population sample (" + what + ")");
    std::vector<T> v(static_cast<std::size_t>(n));
    if (n) std::memcpy(v.data(), b_.data() + at_, static_cast<std::size_t>(n) * sizeof(T));
    at_ += static_cast<std::size_t>(n) * sizeof(T);
    return v;
  }
  bool done() const { return at_ == b_.size(); }

 private:
  void need(std::uint64_t n, const char* what) const {
    GPUDM_REQUIRE(n <= b_.size() - at_, path_ + ": truncated or corrupt population sample (" + what + ")");
  }
  std::string path_;
  std::vector<char> b_;
  std::size_t at_ = 0;
};

}  // namespace

std::uint64_t counts_hash(const rules::RuleCounts& c) {
  // The counts only, not the coverage bits: hashing those (rules x rows / 8 bytes, 12 MB a call on
  // KDDcup) on every engine call cost ~18 ms a call inside the recording GPU run's timed region
  // (Tan: ~36 s of a 47 s run); the coverage's equality across backends is the equivalence tests'.
  std::uint64_t h = 0xcbf29ce484222325ull;
  h = fnv(c.covered.data(), c.covered.size() * sizeof(std::uint32_t), h);
  h = fnv(c.class_rows.data(), c.class_rows.size() * sizeof(std::uint64_t), h);
  h = fnv(&c.gpops, sizeof c.gpops, h);
  return h;
}

void PopulationRecorder::on_call(const rules::RulePopulation& pop, rules::Want want, const rules::RuleCounts& counts) {
  const std::uint64_t call = gpops_.size();
  gpops_.push_back(static_cast<double>(counts.gpops));
  // Assigned into place: the held call's vectors keep their capacity from call to call.
  SampledCall& c = call % static_cast<std::uint64_t>(every_) == 0 ? sampled_.emplace_back() : last_;
  c.call = call;
  c.want = want;
  c.pop = pop;
  c.counts_hash = counts_hash(counts);
  last_held_ = &c == &last_;
}

PopulationSample PopulationRecorder::finish() const {
  PopulationSample s;
  s.calls = sampled_;
  if (last_held_) s.calls.push_back(last_);
  s.gpops = gpops_;
  return s;
}

void write_population_sample(const std::string& path, const PopulationSample& s) {
  std::ostringstream f(std::ios::binary);
  Out o(f);
  f.write(kMagic, sizeof kMagic);
  o.put(kVersion);
  o.str(s.dataset);
  o.str(s.algorithm);
  o.put(s.rows);
  o.put(s.classes);
  o.put(s.seed);
  o.put(s.population);
  o.put(s.generations);
  o.put(static_cast<std::uint64_t>(s.calls.size()));
  for (const SampledCall& c : s.calls) {
    o.put(c.call);
    o.put(static_cast<std::uint32_t>(c.want == rules::Want::counts ? 0 : 1));
    o.vec(c.pop.words);
    o.vec(c.pop.rule_begin);
    o.put(c.counts_hash);
  }
  o.str(s.backend);
  o.vec(s.gpops);
  o.put(s.run_seconds);
  o.put(s.engine_seconds);
  o.str(s.checksum);
  write_file_atomic(path, f.str());
}

PopulationSample read_population_sample(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  GPUDM_REQUIRE(f.good(), path + ": cannot read the population sample");
  std::vector<char> bytes((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  GPUDM_REQUIRE(bytes.size() >= sizeof kMagic && std::memcmp(bytes.data(), kMagic, sizeof kMagic) == 0,
                path + ": not a gp_rules population sample");
  In in(path, std::vector<char>(bytes.begin() + sizeof kMagic, bytes.end()));
  const auto version = in.get<std::uint32_t>("version");
  GPUDM_REQUIRE(version == kVersion, path + ": population sample version " + std::to_string(version) + ", this build reads " +
                                         std::to_string(kVersion));
  PopulationSample s;
  s.dataset = in.str("dataset");
  s.algorithm = in.str("algorithm");
  s.rows = in.get<std::uint64_t>("rows");
  s.classes = in.get<std::uint64_t>("classes");
  s.seed = in.get<std::uint64_t>("seed");
  s.population = in.get<std::int64_t>("population");
  s.generations = in.get<std::int64_t>("generations");
  const auto n = in.get<std::uint64_t>("calls");
  for (std::uint64_t i = 0; i < n; ++i) {
    SampledCall c;
    c.call = in.get<std::uint64_t>("call");
    const auto w = in.get<std::uint32_t>("want");
    GPUDM_REQUIRE(w <= 1, path + ": corrupt population sample (want " + std::to_string(w) + ")");
    c.want = w == 0 ? rules::Want::counts : rules::Want::counts_and_coverage;
    c.pop.words = in.vec<std::uint32_t>("words");
    c.pop.rule_begin = in.vec<std::uint32_t>("rule offsets");
    GPUDM_REQUIRE(!c.pop.rule_begin.empty() && c.pop.rule_begin.front() == 0 && c.pop.rule_begin.back() == c.pop.words.size(),
                  path + ": corrupt population sample (rule offsets of call " + std::to_string(c.call) + ")");
    for (std::size_t r = 0; r + 1 < c.pop.rule_begin.size(); ++r)
      GPUDM_REQUIRE(c.pop.rule_begin[r] <= c.pop.rule_begin[r + 1],
                    path + ": corrupt population sample (rule offsets of call " + std::to_string(c.call) + ")");
    c.counts_hash = in.get<std::uint64_t>("counts hash");
    s.calls.push_back(std::move(c));
  }
  s.backend = in.str("backend");
  s.gpops = in.vec<double>("GPops per call");
  s.run_seconds = in.get<double>("run seconds");
  s.engine_seconds = in.get<double>("engine seconds");
  s.checksum = in.str("checksum");
  GPUDM_REQUIRE(in.done(), path + ": trailing bytes after the population sample");
  for (const SampledCall& c : s.calls)
    GPUDM_REQUIRE(c.call < s.gpops.size(), path + ": corrupt population sample (call " + std::to_string(c.call) + " of " +
                                               std::to_string(s.gpops.size()) + ")");
  return s;
}

}  // namespace gpudm::gp_rules
