#include "algorithms/vfdt/online.hpp"

#include <algorithm>
#include <cmath>

#include "algorithms/core/error.hpp"
#include "algorithms/core/phase_timer.hpp"
#include "algorithms/vfdt/vfdt_math.hpp"

namespace gpudm::vfdt {

OnlineForest::OnlineForest(const Registry& registry, const std::string& backend, const OnlineSettings& settings,
                           std::uint64_t seed)
    : registry_(&registry), backend_name_(backend), s_(settings) {
  s_.forest.seed = seed;
}

void OnlineForest::learn(const Dataset& d, std::int32_t* predictions) {
  if (d.rows() == 0) return;
  auto next = std::make_unique<EncodedStream>(backend_ ? EncodedStream::encode_like(d, schema_)
                                                       : EncodedStream::encode(d, s_.encoding));
  if (!backend_) {
    // A numeric column all 0/1 in the first chunk is coded as bins with the edge 1 (the same codes
    // for 0 and 1), not as binary: a later chunk's other values then land in the upper bin
    // instead of being refused in the middle of the stream.
    for (auto& c : next->coding)
      if (c.kind == "binary" && !c.source_nominal) {
        c.kind = "binned";
        c.edges = {1.0f};
      }
    s_.forest.validate(next->attributes);
    auto b = registry_->create<ForestBackend>("vfdt", backend_name_);
    b->configure(s_.forest);
    b->prepare(*next);
    b->reset();
    schema_ = *next;
    schema_.rows = 0;
    schema_.codes.clear();
    schema_.labels.clear();
    backend_ = std::move(b);
  } else {
    backend_->continue_with(*next, seen_);
  }
  chunk_ = std::move(next);  // the earlier chunk is no longer the backend's
  PhaseTimer timer;
  timer.set_enabled(false);
  backend_->process(0, chunk_->rows, predictions, timer);
  seen_ += chunk_->rows;
}

nlohmann::ordered_json OnlineForest::model() const {
  GPUDM_REQUIRE(backend_ != nullptr, "vfdt: the forest has learned nothing yet");
  return forest_model_json(backend_->snapshot(), schema_);
}

nlohmann::ordered_json forest_model_json(const ForestSnapshot& f, const EncodedStream& schema) {
  const ForestLayout& L = f.layout;
  nlohmann::ordered_json coding = nlohmann::ordered_json::array();
  for (const auto& c : schema.coding)
    coding.push_back({{"name", c.name}, {"kind", c.kind}, {"source_nominal", c.source_nominal}, {"values", c.values},
                      {"edges", c.edges}});
  nlohmann::ordered_json trees = nlohmann::ordered_json::array();
  for (int t = 0; t < L.trees; ++t) {
    // The nodes renumbered breadth first (a node's children stay contiguous, in value order), so
    // the file does not depend on how a backend numbers its node pool and leaf slots; a leaf's
    // child index is its row in "leaves".
    const std::size_t base = static_cast<std::size_t>(t) * L.nodes;
    std::vector<int> order{0};  // pool indices in breadth-first order
    std::vector<int> attr, child;
    nlohmann::ordered_json leaves = nlohmann::ordered_json::array();
    for (std::size_t q = 0; q < order.size(); ++q) {
      const int k = order[q];
      const int a = f.node_attr[base + k];
      attr.push_back(a);
      if (a >= 0) {
        child.push_back(static_cast<int>(order.size()));
        for (int v = 0; v < f.attr_values[a]; ++v) order.push_back(f.node_child[base + k] + v);
        continue;
      }
      const std::uint32_t* cls = f.slot_class.data() + (base + f.node_child[base + k]) * L.classes;
      child.push_back(static_cast<int>(leaves.size()));
      leaves.push_back(std::vector<std::uint32_t>(cls, cls + L.classes));
    }
    trees.push_back({{"attr", attr}, {"child", child}, {"leaves", leaves}});
  }
  return {{"format", "gpudm-vfdt-forest"}, {"version", 1}, {"classes", schema.classes}, {"coding", coding},
          {"trees", trees}};
}

ForestModel forest_model_from_json(const nlohmann::json& j, const std::string& source) {
  const std::string where = source + ": ";
  try {
    GPUDM_REQUIRE(j.value("format", "") == "gpudm-vfdt-forest", where + "not a gpudm vfdt forest model");
    GPUDM_REQUIRE(j.value("version", 0) == 1, where + "model version " + j.value("version", nlohmann::json()).dump() +
                                                  " is not one this build reads (1)");
    ForestModel m;
    EncodedStream& s = m.schema;
    s.name = source;
    s.classes = j.at("classes").get<int>();
    GPUDM_REQUIRE(s.classes >= 2 && s.classes <= 255, where + "classes must be in [2, 255]");
    for (const auto& c : j.at("coding")) {
      AttributeCoding a;
      a.name = c.at("name").get<std::string>();
      a.kind = c.at("kind").get<std::string>();
      a.source_nominal = c.at("source_nominal").get<bool>();
      a.values = c.at("values").get<int>();
      a.edges = c.at("edges").get<std::vector<float>>();
      GPUDM_REQUIRE(a.values >= 2 && a.values <= 255, where + "attribute '" + a.name + "' has " + std::to_string(a.values) + " values");
      // codes must stay below `values`: a binned attribute's edges give edges + 1 codes, sorted
      const bool sorted = std::is_sorted(a.edges.begin(), a.edges.end(), [](float x, float y) { return x <= y; }) &&
                          std::all_of(a.edges.begin(), a.edges.end(), [](float x) { return std::isfinite(x); });
      GPUDM_REQUIRE((a.kind == "binary" && a.values == 2 && a.edges.empty()) || (a.kind == "nominal" && a.edges.empty()) ||
                        (a.kind == "binned" && sorted && a.values == std::max<int>(2, static_cast<int>(a.edges.size()) + 1)),
                    where + "attribute '" + a.name + "': kind '" + a.kind + "' with " + std::to_string(a.values) + " values and " +
                        std::to_string(a.edges.size()) + " edges is not a coding this build writes");
      s.coding.push_back(std::move(a));
    }
    s.attributes = static_cast<int>(s.coding.size());
    GPUDM_REQUIRE(s.attributes >= 1, where + "no attributes");
    for (const auto& c : s.coding) s.max_values = std::max(s.max_values, c.values);
    const auto& trees = j.at("trees");
    GPUDM_REQUIRE(trees.is_array() && !trees.empty(), where + "no trees");
    ForestSnapshot& f = m.trees;
    ForestLayout& L = f.layout;
    L.trees = static_cast<int>(trees.size());
    L.attributes = s.attributes;
    L.classes = s.classes;
    L.values = s.max_values;
    L.nodes = 1;
    for (const auto& t : trees) L.nodes = std::max(L.nodes, static_cast<int>(t.at("attr").size()));
    const std::size_t N = L.nodes, C = L.classes;
    f.node_attr.assign(L.trees * N, -1);
    f.node_child.assign(L.trees * N, 0);
    f.slot_class.assign(L.trees * N * C, 0);
    for (int t = 0; t < L.trees; ++t) {
      const auto attr = trees[t].at("attr").get<std::vector<int>>();
      const auto child = trees[t].at("child").get<std::vector<int>>();
      const auto& leaves = trees[t].at("leaves");
      const int n = static_cast<int>(attr.size());
      GPUDM_REQUIRE(n >= 1 && child.size() == attr.size(), where + "tree " + std::to_string(t) + ": attr and child differ in length");
      f.n_nodes.push_back(n);
      for (int k = 0; k < n; ++k) {
        const std::size_t i = static_cast<std::size_t>(t) * N + k;
        f.node_attr[i] = attr[k];
        f.node_child[i] = child[k];
        if (attr[k] >= 0) {
          GPUDM_REQUIRE(attr[k] < s.attributes && child[k] > k && child[k] + s.coding[attr[k]].values <= n,
                        where + "tree " + std::to_string(t) + " node " + std::to_string(k) + ": a test outside the tree");
          continue;
        }
        GPUDM_REQUIRE(child[k] >= 0 && child[k] < n && child[k] < static_cast<int>(leaves.size()) && leaves[child[k]].size() == C,
                      where + "tree " + std::to_string(t) + " node " + std::to_string(k) + ": no leaf counts");
        const auto counts = leaves[child[k]].get<std::vector<std::uint32_t>>();
        std::copy(counts.begin(), counts.end(), f.slot_class.begin() + (static_cast<std::size_t>(t) * N + child[k]) * C);
      }
    }
    for (const auto& c : s.coding) f.attr_values.push_back(c.values);
    return m;
  } catch (const nlohmann::json::exception& e) {
    throw Error(where + "malformed model: " + e.what());
  }
}

void snapshot_votes(const ForestSnapshot& f, const EncodedStream& s, std::uint32_t* votes) {
  const ForestLayout& L = f.layout;
  GPUDM_REQUIRE(s.attributes == L.attributes && s.classes == L.classes,
                "vfdt: the instances' attributes or classes are not the forest's");
  const std::size_t C = L.classes, N = L.nodes;
  std::fill_n(votes, s.rows * C, 0u);
  for (int t = 0; t < L.trees; ++t) {
    const std::int32_t* attr = f.node_attr.data() + static_cast<std::size_t>(t) * N;
    const std::int32_t* child = f.node_child.data() + static_cast<std::size_t>(t) * N;
    for (std::size_t i = 0; i < s.rows; ++i) {
      const std::uint8_t* x = s.codes.data() + i * s.attributes;
      int node = 0;
      while (attr[node] >= 0) node = child[node] + x[attr[node]];
      const std::uint32_t* cls = f.slot_class.data() + (static_cast<std::size_t>(t) * N + child[node]) * C;
      ++votes[i * C + static_cast<std::size_t>(majority(cls, L.classes))];
    }
  }
}

}  // namespace gpudm::vfdt
