// generate(): the catalog's generator names -> the generator functions, with parameter checking.
#include <algorithm>
#include <set>

#include "algorithms/core/error.hpp"
#include "datasets/generator_util.hpp"
#include "datasets/generators.hpp"

namespace gpudm::datasets {
using detail::indexed;
using detail::nominal_attribute;
using detail::numeric_attribute;
namespace {

// Typed access to a generator's parameters; remembers which keys were read so unknown keys
// (typos in a config's dataset options) are reported instead of silently ignored.
class Params {
 public:
  Params(const nlohmann::json& j, std::string who) : j_(j), who_(std::move(who)) {
    if (!j_.is_object()) throw Error(who_ + ": parameters must be a JSON object");
  }
  template <typename T>
  T get(const std::string& key, T def) {
    used_.insert(key);
    if (!j_.contains(key) || j_.at(key).is_null()) return def;
    try {
      return j_.at(key).get<T>();
    } catch (const nlohmann::json::exception&) {
      throw Error(who_ + ": parameter '" + key + "' has the wrong type (" + j_.at(key).dump() + ")");
    }
  }
  std::size_t rows(std::size_t def) {
    const auto v = get<long long>("rows", static_cast<long long>(def));
    if (v <= 0) throw Error(who_ + ": rows must be positive (got " + std::to_string(v) + ")");
    return static_cast<std::size_t>(v);
  }
  std::uint64_t seed(std::uint64_t def = 1) {
    const auto v = get<long long>("seed", static_cast<long long>(def));
    return static_cast<std::uint64_t>(v);
  }
  void finish() const {
    for (auto it = j_.begin(); it != j_.end(); ++it)
      if (!used_.count(it.key())) {
        std::string known;
        for (const auto& k : used_) known += (known.empty() ? "" : ", ") + k;
        throw Error(who_ + ": unknown parameter '" + it.key() + "' (known: " + known + ")");
      }
  }

 private:
  const nlohmann::json& j_;
  std::string who_;
  std::set<std::string> used_;
};

Dataset named(Dataset d, const std::string& name) {
  d.set_name(name);
  return d;
}

// REC's two continuous similarity scores, encoded by quartile as the VFDT paper describes
// ("computing their quartiles and encoding each value by its quartile range"); the exact code is
// not given, so we use 3 thermometer bits per score (x > q1, x > q2, x > q3; U[0,1) quartiles).
Dataset binarise_rec(const Dataset& s) {
  std::vector<Attribute> attrs;
  for (int c = 0; c < 2; ++c)
    for (int q = 1; q <= 3; ++q)
      attrs.push_back(nominal_attribute(indexed("c", c + 1) + indexed("_gt_q", q), {"0", "1"}));
  for (std::size_t c = 2; c < s.cols(); ++c) attrs.push_back(s.attribute(c));
  Dataset d(s.name(), s.task(), s.rows(), std::move(attrs), s.class_names());
  for (std::size_t c = 0; c < 2; ++c)
    for (int q = 1; q <= 3; ++q) {
      float* dst = d.column(c * 3 + static_cast<std::size_t>(q - 1));
      const float* src = s.column(c);
      const float cut = 0.25f * static_cast<float>(q);
      for (std::size_t r = 0; r < s.rows(); ++r) dst[r] = src[r] > cut ? 1.0f : 0.0f;
    }
  for (std::size_t c = 2; c < s.cols(); ++c) std::copy(s.column(c), s.column(c) + s.rows(), d.column(c + 4));
  for (std::size_t r = 0; r < s.rows(); ++r) d.set_label(r, s.label(r));
  d.source = s.source;
  d.path = s.path;
  d.seed = s.seed;
  d.surrogate = true;
  return d;
}

}  // namespace

std::vector<std::string> generator_names() {
  return {"2dplanes", "fried", "mv", "armchair", "moa_random_tree", "vfml_random_tree",
          "poker", "surrogate", "covertype", "rec"};
}

Dataset generate(const std::string& g, const nlohmann::json& params, const std::string& name) {
  Params p(params, "dataset '" + name + "': generator '" + g + "'");
  if (g == "2dplanes") {
    const auto rows = p.rows(40768);
    const auto seed = p.seed();
    const auto sd = p.get<double>("noise_sd", 1.0);
    p.finish();
    return named(make_2dplanes(rows, seed, sd), name);
  }
  if (g == "fried") {
    const auto rows = p.rows(40768);
    const auto seed = p.seed();
    const auto sd = p.get<double>("noise_sd", 1.0);
    p.finish();
    return named(make_fried(rows, seed, sd), name);
  }
  if (g == "mv") {
    const auto rows = p.rows(40768);
    const auto seed = p.seed();
    p.finish();
    return named(make_mv(rows, seed), name);
  }
  if (g == "armchair") {
    const auto rows = p.rows(1000000);
    const auto seed = p.seed();
    const int extra = p.get<int>("noise_attributes", 0);
    const double sd = p.get<double>("noise_sd", kArmchairNoiseSd);
    p.finish();
    if (extra < 0) throw Error("dataset '" + name + "': noise_attributes must be >= 0");
    if (!(sd >= 0)) throw Error("dataset '" + name + "': noise_sd must be >= 0");
    return named(make_armchair(rows, seed, extra, sd), name);
  }
  if (g == "moa_random_tree") {
    MoaRandomTreeParams m;
    const auto rows = p.rows(1000000);
    m.instance_seed = static_cast<std::int32_t>(p.seed(1));
    m.tree_seed = p.get<std::int32_t>("tree_seed", m.tree_seed);
    m.num_classes = p.get<int>("num_classes", m.num_classes);
    m.num_nominals = p.get<int>("num_nominals", m.num_nominals);
    m.num_numerics = p.get<int>("num_numerics", m.num_numerics);
    m.num_vals_per_nominal = p.get<int>("num_vals_per_nominal", m.num_vals_per_nominal);
    m.max_tree_depth = p.get<int>("max_tree_depth", m.max_tree_depth);
    m.first_leaf_level = p.get<int>("first_leaf_level", m.first_leaf_level);
    m.leaf_fraction = p.get<double>("leaf_fraction", m.leaf_fraction);
    p.finish();
    return named(make_moa_random_tree(rows, m), name);
  }
  if (g == "vfml_random_tree") {
    VfmlTreeParams v;
    const auto rows = p.rows(1000000);
    const auto seed = p.seed();
    v.discrete = p.get<int>("discrete", v.discrete);
    v.classes = p.get<int>("classes", v.classes);
    v.max_level = p.get<int>("max_level", v.max_level);
    v.first_prune_level = p.get<int>("first_prune_level", v.first_prune_level);
    v.prune_percent = p.get<int>("prune_percent", v.prune_percent);
    v.concept_seed = p.get<std::uint32_t>("concept_seed", v.concept_seed);
    const double noise = p.get<double>("noise", 0.2);
    v.class_noise = p.get<double>("class_noise", noise);
    v.attribute_noise = p.get<double>("attribute_noise", noise);
    p.finish();
    return named(make_vfml_random_tree(rows, seed, v), name);
  }
  if (g == "poker") {
    const auto rows = p.rows(1025010);
    const auto seed = p.seed();
    p.finish();
    return named(make_poker(rows, seed), name);
  }
  SurrogateParams s;
  if (g == "surrogate") {
    s.rows = p.rows(10000);
    s.seed = p.seed();
    const int cols = p.get<int>("cols", 10);
    s.binary = p.get<int>("binary", 0);
    s.continuous = cols - s.binary;
    s.classes = p.get<int>("classes", 2);
    if (p.get<bool>("regression", false)) s.classes = 0;
    s.depth = p.get<int>("depth", s.depth);
    s.label_noise = p.get<double>("label_noise", s.label_noise);
    s.target_noise_sd = p.get<double>("target_noise_sd", s.target_noise_sd);
    s.drift_points = p.get<std::vector<double>>("drift_points", {});
    s.drift_span = p.get<double>("drift_span", 0.0);
    s.drift_width = p.get<double>("drift_width", 0.0);
    s.class_prior = p.get<std::vector<double>>("class_prior", {});
    p.finish();
    if (cols < 1 || s.continuous < 0)
      throw Error("dataset '" + name + "': cols must be >= 1 and >= binary (cols " + std::to_string(cols) +
                  ", binary " + std::to_string(s.binary) + ")");
    return make_surrogate(name, s);
  }
  if (g == "covertype") {
    // Forest Covertype: 10 quantitative + 44 binary (4 wilderness, 40 soil) attributes, 7 classes
    // with UCI's class frequencies; binary=true gives the VFDT paper's 45 binary attributes.
    s.rows = p.rows(581012);
    s.seed = p.seed();
    const bool binary = p.get<bool>("binary", false);
    s.continuous = binary ? 0 : 10;
    s.binary = binary ? 45 : 44;
    s.classes = 7;
    s.class_prior = {211840, 283301, 35754, 2747, 9493, 17367, 20510};
    s.depth = p.get<int>("depth", 8);
    s.label_noise = p.get<double>("label_noise", 0.1);
    s.drift_points = p.get<std::vector<double>>("drift_points", {1.0 / 3.0, 2.0 / 3.0});
    s.drift_span = p.get<double>("drift_span", 581012.0);
    s.drift_width = p.get<double>("drift_width", 0.02 * s.drift_span);
    p.finish();
    return make_surrogate(name, s);
  }
  if (g == "rec") {
    // Record Linkage Comparison Patterns: 2 continuous similarity scores + 7 binary agreement
    // flags, 2 classes with UCI's match rate; binary=true quartile-encodes the scores.
    s.rows = p.rows(5749132);
    s.seed = p.seed();
    const bool binary = p.get<bool>("binary", false);
    s.continuous = 2;
    s.binary = 7;
    s.classes = 2;
    s.class_prior = {5728201, 20931};
    s.depth = p.get<int>("depth", 6);
    s.label_noise = p.get<double>("label_noise", 0.004);
    s.drift_points = p.get<std::vector<double>>("drift_points", {0.5});
    s.drift_span = p.get<double>("drift_span", 5749132.0);
    s.drift_width = p.get<double>("drift_width", 0.05 * s.drift_span);
    p.finish();
    Dataset d = make_surrogate(name, s);
    return binary ? binarise_rec(d) : d;
  }
  std::string known;
  for (const auto& n : generator_names()) known += (known.empty() ? "" : ", ") + n;
  throw Error("dataset '" + name + "': unknown generator '" + g + "' (known: " + known + ")");
}

}  // namespace gpudm::datasets
