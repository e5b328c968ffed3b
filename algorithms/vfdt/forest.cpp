// Parameters, stream encoding, layout and snapshots of the streaming forest.
#include "algorithms/vfdt/forest.hpp"

#include <algorithm>
#include <cmath>
#include <sstream>

#include "algorithms/core/family.hpp"

namespace gpudm::vfdt {

int ForestParams::features_for(int d) const {
  if (features > 0) return std::min(features, d);
  if (total_trees() == 1 && !bagging) return d;
  return std::max(1, static_cast<int>(std::floor(std::sqrt(static_cast<double>(d)))));
}

const char* to_string(ResetRule v) { return v == ResetRule::any ? "any" : "rise"; }
const char* to_string(BatchOrder v) {
  switch (v) {
    case BatchOrder::stream: return "stream";
    case BatchOrder::deferred: return "deferred";
    default: return "auto";
  }
}
const char* to_string(LeafPrediction v) { return v == LeafPrediction::nb ? "nb" : "mc"; }
const char* to_string(BoundWeight v) {
  switch (v) {
    case BoundWeight::learned: return "learned";
    case BoundWeight::total: return "total";
    default: return "auto";
  }
}
const char* to_string(ForestPath v) { return v == ForestPath::faithful ? "faithful" : "default"; }
const char* to_string(Engine v) {
  switch (v) {
    case Engine::persistent: return "persistent";
    case Engine::batched: return "batched";
    default: return "auto";
  }
}
const char* to_string(AdwinKernel v) {
  switch (v) {
    case AdwinKernel::warp: return "warp";
    case AdwinKernel::simple: return "simple";
    default: return "prefix";
  }
}

Engine ForestParams::cuda_engine() const {
  if (engine != Engine::automatic) return engine;
  // The whole forest's size, not this rank's block of it: the engine decides the batch order, and a
  // forest split over ranks must learn as one process does (12 trees a rank of 96 ran "deferred").
  return total_trees() >= kPersistentMinTrees && adwin_kernel == AdwinKernel::prefix ? Engine::persistent : Engine::batched;
}

BatchOrder ForestParams::order() const {
  if (batch_order != BatchOrder::automatic) return batch_order;
  return path == ForestPath::compact && cuda_engine() == Engine::persistent && !naive_bayes() ? BatchOrder::stream
                                                                                                : BatchOrder::deferred;
}

// The ranges repeat the family's ParamTable (family_vfdt.cpp) for callers that fill ForestParams
// themselves (tests, tools): a backend never runs out-of-range params.
void ForestParams::validate(int d) const {
  auto bad = [](const std::string& key, const std::string& why) {
    throw Error("vfdt params: '" + key + "' " + why);
  };
  if (trees < 1 || trees > 65535) bad("trees", "must be in [1, 65535]");
  if (first_tree < 0 || (forest_trees > 0 && first_tree + trees > forest_trees))
    bad("trees", "of a forest split over ranks: trees " + std::to_string(first_tree) + " + " + std::to_string(trees) +
                     " past the forest's " + std::to_string(forest_trees));
  if (batch < 1) bad("batch", "must be >= 1");
  if (!(delta > 0 && delta <= 1)) bad("delta", "must be in (0, 1]");
  if (!(tau >= 0)) bad("tau", "must be >= 0");
  if (grace < 1) bad("grace", "must be >= 1");
  if (features < 0) bad("features", "must be >= 0 (0 = sqrt(d) for forests, d for one tree)");
  if (!(adwin_delta > 0 && adwin_delta <= 1)) bad("adwin_delta", "must be in (0, 1]");
  if (max_depth < 1 || max_depth > 30) bad("max_depth", "must be in [1, 30]");
  if (max_nodes < 3) bad("max_nodes", "must be >= 3");
  if (threads < 0) bad("threads", "must be >= 0 (0 = all)");
  const bool faithful = path == ForestPath::faithful;
  if (bound_weight == BoundWeight::total && faithful)
    bad("bound_weight", "\"total\" applies to path \"default\" only: the faithful path keeps the paper's n");
  if (naive_bayes() && faithful)
    bad("leaf_prediction", "\"nb\" applies to path \"default\" only: the faithful path keeps the paper's majority-class leaves");
  if (batch_order == BatchOrder::stream && faithful)
    bad("batch_order", "\"stream\" applies to path \"default\" only: path \"faithful\" keeps the paper's batch order (\"deferred\")");
  if (engine == Engine::persistent && adwin_kernel != AdwinKernel::prefix && !faithful)
    bad("adwin_kernel", std::string("\"") + to_string(adwin_kernel) +
                            "\" runs only with engine \"batched\" (the persistent engine runs \"prefix\")");
  if (d < 1) throw Error("vfdt: the stream has no attributes");
  if (d > 255) throw Error("vfdt: the stream has " + std::to_string(d) + " attributes; at most 255 are supported");
}

void ForestParams::validate(const EncodedStream& s) const {
  validate(s.attributes);
  if (path == ForestPath::faithful) {
    if (!s.all_binary())
      throw Unavailable("vfdt params: path \"faithful\" (the paper's layout) needs binary attributes; stream '" + s.name +
                  "' has non-binary ones — use path \"default\"");
    if (max_depth > 20)
      throw Error("vfdt params: path \"faithful\" allocates 2^(max_depth+1)-1 nodes per tree; 'max_depth' must be <= 20");
  }
}

bool EncodedStream::all_binary() const {
  for (const auto& c : coding)
    if (c.values != 2) return false;
  return true;
}

namespace {

std::string where(const Dataset& d, std::size_t row, std::size_t col) {
  return "dataset '" + d.name() + "': row " + std::to_string(row) + ", attribute '" + d.attribute(col).name + "' (column " +
         std::to_string(col) + ")";
}

void check_target(const Dataset& d) {
  if (d.task() != Task::classification)
    throw Error("dataset '" + d.name() + "' is a regression dataset; the vfdt family needs class labels");
  if (d.num_classes() < 2) throw Error("dataset '" + d.name() + "' has " + std::to_string(d.num_classes()) + " classes; need >= 2");
  if (d.num_classes() > 255) throw Error("dataset '" + d.name() + "' has more than 255 classes");
  for (std::size_t i = 0; i < d.rows(); ++i)
    if (d.label(i) < 0 || d.label(i) >= d.num_classes())
      throw Error("dataset '" + d.name() + "': row " + std::to_string(i) + " has label " + std::to_string(d.label(i)) +
                  ", expected 0.." + std::to_string(d.num_classes() - 1));
}

std::uint8_t encode_cell(const Dataset& d, const AttributeCoding& c, std::size_t i, std::size_t a) {
  const float x = d.at(i, a);
  if (d.is_missing(i, a) || std::isnan(x))
    throw Error(where(d, i, a) + " is missing (NaN); VFDT streams must be complete — impute or drop the rows first");
  if (std::isinf(x)) throw Error(where(d, i, a) + " is infinite");
  if (c.kind == "binned") {
    return static_cast<std::uint8_t>(std::upper_bound(c.edges.begin(), c.edges.end(), x) - c.edges.begin());
  }
  const float r = std::round(x);
  if (r != x || x < 0)
    throw Error(where(d, i, a) + " has value " + std::to_string(x) + ", not a " + c.kind + " code");
  if (c.kind == "binary") {
    if (x > 1) throw Error(where(d, i, a) + " has value " + std::to_string(x) + " but the attribute is binary (0/1)");
    return static_cast<std::uint8_t>(x);
  }
  // nominal: the Dataset's value list is the contract; values past max codes share the last one
  const int k = static_cast<int>(d.attribute(a).values.size());
  if (k > 0 && x >= k)
    throw Error(where(d, i, a) + " has unseen nominal value index " + std::to_string(static_cast<long long>(x)) +
                " (the attribute has " + std::to_string(k) + " values)");
  return static_cast<std::uint8_t>(std::min<long long>(static_cast<long long>(x), c.values - 1));
}

EncodedStream encode_with(const Dataset& d, std::vector<AttributeCoding> coding) {
  EncodedStream s;
  s.name = d.name();
  s.rows = d.rows();
  s.attributes = static_cast<int>(d.cols());
  s.classes = d.num_classes();
  s.coding = std::move(coding);
  s.max_values = 2;
  for (const auto& c : s.coding) s.max_values = std::max(s.max_values, c.values);
  s.codes.resize(s.rows * s.attributes);
  s.labels.resize(s.rows);
  for (std::size_t a = 0; a < d.cols(); ++a)
    for (std::size_t i = 0; i < s.rows; ++i) s.codes[i * s.attributes + a] = encode_cell(d, s.coding[a], i, a);
  for (std::size_t i = 0; i < s.rows; ++i) s.labels[i] = static_cast<std::uint8_t>(d.label(i));
  return s;
}

}  // namespace

EncodedStream EncodedStream::encode(const Dataset& d, const EncodingOptions& opt) {
  check_target(d);
  if (d.cols() == 0) throw Error("dataset '" + d.name() + "' has no attributes");
  if (d.cols() > 255) throw Error("dataset '" + d.name() + "' has " + std::to_string(d.cols()) + " attributes; at most 255 are supported");
  if (opt.bins < 2 || opt.bins > 64) throw Error("vfdt params: 'bins' must be in [2, 64]");
  if (opt.max_values < 2 || opt.max_values > 255) throw Error("vfdt params: 'max_values' must be in [2, 255]");
  if (opt.bin_warmup < 1) throw Error("vfdt params: 'bin_warmup' must be >= 1");
  std::vector<AttributeCoding> coding(d.cols());
  for (std::size_t a = 0; a < d.cols(); ++a) {
    const Attribute& at = d.attribute(a);
    AttributeCoding& c = coding[a];
    c.name = at.name;
    c.source_nominal = at.is_nominal();
    if (at.is_nominal()) {
      c.kind = at.values.size() == 2 ? "binary" : "nominal";
      int k = static_cast<int>(at.values.size());
      if (k == 0) {  // value names unknown: the largest code seen decides
        float mx = 0;
        for (std::size_t i = 0; i < d.rows(); ++i)
          if (!d.is_missing(i, a) && !std::isnan(d.at(i, a))) mx = std::max(mx, d.at(i, a));
        k = static_cast<int>(mx) + 1;
      }
      c.values = std::clamp(k, 2, opt.max_values);
      continue;
    }
    // numeric: a 0/1 column is binary (the paper's streams), otherwise quantile bins
    bool binary = true;
    for (std::size_t i = 0; i < d.rows() && binary; ++i) {
      const float x = d.at(i, a);
      binary = !std::isnan(x) && (x == 0.0f || x == 1.0f);
    }
    if (binary) {
      c.kind = "binary";
      c.values = 2;
      continue;
    }
    c.kind = "binned";
    const std::size_t w = std::min<std::size_t>(d.rows(), static_cast<std::size_t>(opt.bin_warmup));
    std::vector<float> head;
    head.reserve(w);
    for (std::size_t i = 0; i < w; ++i)
      if (!std::isnan(d.at(i, a))) head.push_back(d.at(i, a));
    std::sort(head.begin(), head.end());
    for (int b = 1; b < opt.bins && !head.empty(); ++b) {
      const float e = head[std::min(head.size() - 1, head.size() * b / opt.bins)];
      if (e > head.front() && (c.edges.empty() || e > c.edges.back())) c.edges.push_back(e);
    }
    c.values = std::max(2, static_cast<int>(c.edges.size()) + 1);
  }
  return encode_with(d, std::move(coding));
}

EncodedStream EncodedStream::encode_like(const Dataset& d, const EncodedStream& schema) {
  check_target(d);
  if (static_cast<int>(d.cols()) != schema.attributes)
    throw Error("dataset '" + d.name() + "' has " + std::to_string(d.cols()) + " attributes, but the stream '" + schema.name +
                "' the forest was built for has " + std::to_string(schema.attributes));
  if (d.num_classes() != schema.classes)
    throw Error("dataset '" + d.name() + "' has " + std::to_string(d.num_classes()) + " classes, but the stream '" +
                schema.name + "' has " + std::to_string(schema.classes));
  for (std::size_t a = 0; a < d.cols(); ++a)
    if (d.attribute(a).is_nominal() != schema.coding[a].source_nominal)
      throw Error("dataset '" + d.name() + "': attribute " + std::to_string(a) + " ('" + d.attribute(a).name + "') is " +
                  (d.attribute(a).is_nominal() ? "nominal" : "numeric") + " but was " +
                  (schema.coding[a].source_nominal ? "nominal" : "numeric") + " in '" +
                  schema.name + "'");
  return encode_with(d, schema.coding);
}

ForestLayout ForestLayout::make(const EncodedStream& s, const ForestParams& p) {
  ForestLayout l;
  l.trees = p.trees;
  l.attributes = s.attributes;
  l.classes = s.classes;
  l.values = s.max_values;
  l.features = p.features_for(s.attributes);
  l.nodes = p.max_nodes;
  return l;
}

int ForestSnapshot::leaves(int t) const {
  int n = 0;
  for (int i = 0; i < n_nodes[t]; ++i) n += node_attr[std::size_t(t) * layout.nodes + i] < 0;
  return n;
}

int ForestSnapshot::depth(int t) const {
  int d = 0;
  for (int i = 0; i < n_nodes[t]; ++i) d = std::max(d, node_depth[std::size_t(t) * layout.nodes + i]);
  return d;
}

namespace {
// Preorder walk of tree t (children in value order): visit(node) for every node.
template <class F>
void preorder(const ForestSnapshot& s, int t, F&& visit) {
  const std::size_t base = std::size_t(t) * s.layout.nodes;
  std::vector<int> stack{0};
  while (!stack.empty()) {
    const int node = stack.back();
    stack.pop_back();
    visit(node);
    const int a = s.node_attr[base + node];
    if (a < 0) continue;
    const int first = s.node_child[base + node];
    for (int j = s.attr_values[a] - 1; j >= 0; --j) stack.push_back(first + j);
  }
}
}  // namespace

std::string ForestSnapshot::checksum() const {
  std::uint64_t h = 0xcbf29ce484222325ull;
  auto add = [&](const void* p, std::size_t n) {
    const auto* b = static_cast<const unsigned char*>(p);
    for (std::size_t i = 0; i < n; ++i) {
      h ^= b[i];
      h *= 0x100000001b3ull;
    }
  };
  for (int t = 0; t < layout.trees; ++t) {
    const std::size_t base = std::size_t(t) * layout.nodes;
    add(&n_nodes[t], sizeof(std::int32_t));
    add(&generation[t], sizeof(std::uint32_t));
    preorder(*this, t, [&](int node) {
      const std::int32_t a = node_attr[base + node];
      add(&a, sizeof a);
      if (a < 0) add(slot_class.data() + (base + node_child[base + node]) * layout.classes, sizeof(std::uint32_t) * layout.classes);
    });
  }
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(h));
  return buf;
}

std::string ForestSnapshot::diff(const ForestSnapshot& o) const {
  std::ostringstream os;
  if (layout.trees != o.layout.trees || layout.classes != o.layout.classes) return "layouts differ";
  for (int t = 0; t < layout.trees; ++t) {
    if (n_nodes[t] != o.n_nodes[t]) {
      os << "tree " << t << ": " << n_nodes[t] << " vs " << o.n_nodes[t] << " nodes";
      return os.str();
    }
    if (generation[t] != o.generation[t]) {
      os << "tree " << t << ": " << generation[t] << " vs " << o.generation[t] << " resets";
      return os.str();
    }
    std::vector<std::pair<int, const std::uint32_t*>> mine, theirs;
    auto collect = [](const ForestSnapshot& s, int tt, auto& out) {
      const std::size_t base = std::size_t(tt) * s.layout.nodes;
      preorder(s, tt, [&](int node) {
        const int a = s.node_attr[base + node];
        out.emplace_back(a, a < 0 ? s.slot_class.data() + (base + s.node_child[base + node]) * s.layout.classes : nullptr);
      });
    };
    collect(*this, t, mine);
    collect(o, t, theirs);
    for (std::size_t i = 0; i < mine.size() && i < theirs.size(); ++i) {
      if (mine[i].first != theirs[i].first) {
        os << "tree " << t << ", node " << i << " in preorder: attribute " << mine[i].first << " vs " << theirs[i].first;
        return os.str();
      }
      if (mine[i].first < 0)
        for (int c = 0; c < layout.classes; ++c)
          if (mine[i].second[c] != theirs[i].second[c]) {
            os << "tree " << t << ", leaf " << i << " in preorder, class " << c << ": count " << mine[i].second[c] << " vs "
               << theirs[i].second[c];
            return os.str();
          }
    }
  }
  return "";
}

void ForestBackend::process_votes(std::size_t, std::size_t, std::uint32_t*, PhaseTimer&) {
  throw Error("vfdt/" + name() + ": this backend cannot report its trees' votes (a forest split over ranks)");
}

void ForestBackend::continue_with(const EncodedStream&, std::uint64_t) {
  throw Error("vfdt/" + name() + ": this backend cannot continue a forest on a later chunk of its stream");
}

void check_chunk(const ForestLayout& layout, const std::vector<int>& attr_values, const EncodedStream& chunk,
                 const std::string& backend) {
  const std::string what = "vfdt/" + backend + ": a later chunk of the stream ";
  GPUDM_REQUIRE(chunk.attributes == layout.attributes && static_cast<int>(attr_values.size()) == chunk.attributes,
                what + "has " + std::to_string(chunk.attributes) + " attributes, the forest " + std::to_string(layout.attributes));
  GPUDM_REQUIRE(chunk.classes == layout.classes,
                what + "has " + std::to_string(chunk.classes) + " classes, the forest " + std::to_string(layout.classes));
  GPUDM_REQUIRE(chunk.coding.size() == attr_values.size(), what + "has no coding of every attribute");
  for (int a = 0; a < chunk.attributes; ++a)
    GPUDM_REQUIRE(chunk.coding[a].values == attr_values[a],
                  what + "codes attribute '" + chunk.coding[a].name + "' in " + std::to_string(chunk.coding[a].values) +
                      " values, the forest in " + std::to_string(attr_values[a]) + " (encode it with encode_like)");
  GPUDM_REQUIRE(chunk.codes.size() == chunk.rows * chunk.attributes && chunk.labels.size() == chunk.rows,
                what + "has codes or labels that do not match its rows x attributes");
}

}  // namespace gpudm::vfdt
