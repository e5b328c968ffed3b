// Stream generators: MOA RandomTreeGenerator (exact port), VFML treedata-style random tree,
// poker hands.
#include <algorithm>
#include <cmath>

#include "algorithms/core/error.hpp"
#include "algorithms/core/rng.hpp"
#include "datasets/generator_util.hpp"
#include "datasets/generators.hpp"
#include "datasets/portable_random.hpp"

namespace gpudm::datasets {
using detail::indexed;
using detail::nominal_attribute;
using detail::numeric_attribute;

// ---------------------------------------------------------------------------------------------
// MOA RandomTreeGenerator (moa/streams/generators/RandomTreeGenerator.java): the same draws, in
// the same order, from java.util.Random, so the concept and the instance stream equal MOA's.

MoaRandomTree::MoaRandomTree(const MoaRandomTreeParams& p) : p_(p) {
  if (p.num_classes < 2) throw Error("moa_random_tree: num_classes must be >= 2");
  if (p.num_vals_per_nominal < 2) throw Error("moa_random_tree: num_vals_per_nominal must be >= 2");
  if (p.num_nominals < 0 || p.num_numerics < 0 || p.num_nominals + p.num_numerics == 0)
    throw Error("moa_random_tree: needs at least one attribute");
  JavaRandom rand(p.tree_seed);
  std::vector<int> nominal(static_cast<std::size_t>(p.num_nominals));
  for (int i = 0; i < p.num_nominals; ++i) nominal[static_cast<std::size_t>(i)] = i;
  std::vector<double> mn(static_cast<std::size_t>(p.num_numerics), 0.0), mx(static_cast<std::size_t>(p.num_numerics), 1.0);
  build(0, nominal, mn, mx, &rand);
}

int MoaRandomTree::build(int depth, const std::vector<int>& nominal_candidates, std::vector<double> min_v,
                         std::vector<double> max_v, void* rand_ptr) {
  JavaRandom& rand = *static_cast<JavaRandom*>(rand_ptr);
  const int id = static_cast<int>(nodes_.size());
  nodes_.emplace_back();
  // Short-circuit exactly as MOA: nextDouble() only when depth < max and depth >= firstLeafLevel.
  if (depth >= p_.max_tree_depth ||
      (depth >= p_.first_leaf_level && p_.leaf_fraction >= 1.0 - rand.next_double())) {
    nodes_[static_cast<std::size_t>(id)].class_label = rand.next_int(p_.num_classes);
    return id;
  }
  const int n_nom = static_cast<int>(nominal_candidates.size());
  const int chosen = rand.next_int(n_nom + p_.num_numerics);
  if (chosen < n_nom) {
    const int att = nominal_candidates[static_cast<std::size_t>(chosen)];
    nodes_[static_cast<std::size_t>(id)].split_att = att;
    std::vector<int> rest;
    for (int c : nominal_candidates)
      if (c != att) rest.push_back(c);
    std::vector<int> children;
    for (int v = 0; v < p_.num_vals_per_nominal; ++v) children.push_back(build(depth + 1, rest, min_v, max_v, rand_ptr));
    nodes_[static_cast<std::size_t>(id)].children = std::move(children);
  } else {
    const int k = chosen - n_nom;
    const auto ku = static_cast<std::size_t>(k);
    const double value = (max_v[ku] - min_v[ku]) * rand.next_double() + min_v[ku];
    nodes_[static_cast<std::size_t>(id)].split_att = p_.num_nominals + k;
    nodes_[static_cast<std::size_t>(id)].split_value = value;
    std::vector<double> new_max = max_v;
    new_max[ku] = value;
    const int left = build(depth + 1, nominal_candidates, min_v, new_max, rand_ptr);
    std::vector<double> new_min = min_v;
    new_min[ku] = value;
    const int right = build(depth + 1, nominal_candidates, new_min, max_v, rand_ptr);
    nodes_[static_cast<std::size_t>(id)].children = {left, right};
  }
  return id;
}

int MoaRandomTree::classify(const double* att) const {
  std::size_t n = 0;
  while (nodes_[n].split_att >= 0) {
    const Node& node = nodes_[n];
    if (node.split_att < p_.num_nominals)
      n = static_cast<std::size_t>(node.children[static_cast<std::size_t>(att[node.split_att])]);
    else
      n = static_cast<std::size_t>(node.children[att[node.split_att] < node.split_value ? 0 : 1]);
  }
  return nodes_[n].class_label;
}

std::size_t MoaRandomTree::leaves() const {
  return static_cast<std::size_t>(std::count_if(nodes_.begin(), nodes_.end(), [](const Node& n) { return n.split_att < 0; }));
}

int MoaRandomTree::depth() const {
  std::vector<int> d(nodes_.size(), 0);
  int best = 0;
  for (std::size_t i = 0; i < nodes_.size(); ++i)  // parents precede children (pre-order ids)
    for (int c : nodes_[i].children) {
      d[static_cast<std::size_t>(c)] = d[i] + 1;
      best = std::max(best, d[static_cast<std::size_t>(c)]);
    }
  return best;
}

Dataset make_moa_random_tree(std::size_t rows, const MoaRandomTreeParams& p) {
  const MoaRandomTree tree(p);
  std::vector<Attribute> attrs;
  std::vector<std::string> vals;
  for (int v = 0; v < p.num_vals_per_nominal; ++v) vals.push_back(indexed("value", v + 1));
  for (int i = 0; i < p.num_nominals; ++i)
    attrs.push_back(nominal_attribute(indexed("nominal", i + 1), vals));
  for (int i = 0; i < p.num_numerics; ++i) attrs.push_back(numeric_attribute(indexed("numeric", i + 1)));
  std::vector<std::string> classes;
  for (int c = 0; c < p.num_classes; ++c) classes.push_back(indexed("class", c + 1));
  Dataset d("rt_moa", Task::classification, rows, std::move(attrs), std::move(classes));
  JavaRandom rand(p.instance_seed);
  const int n_att = p.num_nominals + p.num_numerics;
  std::vector<double> att(static_cast<std::size_t>(n_att));
  for (std::size_t r = 0; r < rows; ++r) {
    for (int i = 0; i < n_att; ++i) {
      const double v = i < p.num_nominals ? double(rand.next_int(p.num_vals_per_nominal)) : rand.next_double();
      att[static_cast<std::size_t>(i)] = v;
      d.at(r, static_cast<std::size_t>(i)) = static_cast<float>(v);
    }
    d.set_label(r, tree.classify(att.data()));
  }
  d.source = "generator";
  d.path = "moa_random_tree";
  d.seed = static_cast<std::uint64_t>(p.instance_seed);
  return d;
}

// ---------------------------------------------------------------------------------------------
// VFML treedata-style concept (binary discrete attributes only).
namespace {

struct VfmlNode {
  int att = -1;  // -1: leaf
  int cls = 0;
  int child[2] = {-1, -1};
};

// RandomRange(a, b) = a + int((b - a + 1) * random() / (RAND_MAX + 1.0)), as VFML's random.c.
int random_range(GlibcRandom& g, int a, int b) {
  return a + static_cast<int>((b - a + 1) * static_cast<double>(g.next()) / (GlibcRandom::kRandMax + 1.0));
}

int vfml_build(std::vector<VfmlNode>& nodes, const VfmlTreeParams& p, std::uint64_t heap_id, int level,
               std::vector<char>& active) {
  GlibcRandom g(static_cast<std::uint32_t>(p.concept_seed * heap_id));
  const int id = static_cast<int>(nodes.size());
  nodes.emplace_back();
  int n_active = 0;
  for (char a : active) n_active += a;
  bool leaf = level > p.max_level || n_active == 0;
  if (!leaf && level >= p.first_prune_level) leaf = random_range(g, 0, 100) < p.prune_percent;
  if (leaf) {
    nodes[static_cast<std::size_t>(id)].cls = random_range(g, 0, p.classes - 1);
    return id;
  }
  int pick = random_range(g, 0, n_active - 1);
  int att = 0;
  for (; att < static_cast<int>(active.size()); ++att)
    if (active[static_cast<std::size_t>(att)] && pick-- == 0) break;
  nodes[static_cast<std::size_t>(id)].att = att;
  active[static_cast<std::size_t>(att)] = 0;
  const int l = vfml_build(nodes, p, heap_id * 2, level + 1, active);
  const int r = vfml_build(nodes, p, heap_id * 2 + 1, level + 1, active);
  active[static_cast<std::size_t>(att)] = 1;
  nodes[static_cast<std::size_t>(id)].child[0] = l;
  nodes[static_cast<std::size_t>(id)].child[1] = r;
  return id;
}

// Collapses subtrees whose leaves all carry one class; returns that class or -1.
int vfml_collapse(std::vector<VfmlNode>& nodes, int id) {
  VfmlNode& n = nodes[static_cast<std::size_t>(id)];
  if (n.att < 0) return n.cls;
  const int a = vfml_collapse(nodes, n.child[0]);
  const int b = vfml_collapse(nodes, n.child[1]);
  if (a >= 0 && a == b) {
    VfmlNode& m = nodes[static_cast<std::size_t>(id)];
    m.att = -1;
    m.cls = a;
    return a;
  }
  return -1;
}

}  // namespace

Dataset make_vfml_random_tree(std::size_t rows, std::uint64_t seed, const VfmlTreeParams& p) {
  if (p.discrete < 1 || p.classes < 2) throw Error("vfml_random_tree: needs discrete >= 1 and classes >= 2");
  std::vector<VfmlNode> nodes;
  std::vector<char> active(static_cast<std::size_t>(p.discrete), 1);
  vfml_build(nodes, p, 1, 1, active);
  vfml_collapse(nodes, 0);
  std::vector<Attribute> attrs;
  for (int i = 0; i < p.discrete; ++i)
    attrs.push_back(nominal_attribute(indexed("a", i + 1), {"0", "1"}));
  std::vector<std::string> classes;
  for (int c = 0; c < p.classes; ++c) classes.push_back(std::to_string(c));
  Dataset d("rt_vfml", Task::classification, rows, std::move(attrs), std::move(classes));
  Rng rng(seed);
  const auto n_att = static_cast<std::size_t>(p.discrete);
  std::vector<int> x(n_att);
  for (std::size_t r = 0; r < rows; ++r) {
    for (std::size_t a = 0; a < n_att; ++a) x[a] = static_cast<int>(rng.below(2));
    std::size_t n = 0;
    while (nodes[n].att >= 0) n = static_cast<std::size_t>(nodes[n].child[x[static_cast<std::size_t>(nodes[n].att)]]);
    int cls = nodes[n].cls;
    // ExampleAddNoise: class and every attribute flip to a different value with the noise rate.
    if (rng.bernoulli(p.class_noise)) {
      const int other = static_cast<int>(rng.below(static_cast<std::uint64_t>(p.classes - 1)));
      cls = other >= cls ? other + 1 : other;
    }
    for (std::size_t a = 0; a < n_att; ++a) {
      if (rng.bernoulli(p.attribute_noise)) x[a] = 1 - x[a];
      d.at(r, a) = static_cast<float>(x[a]);
    }
    d.set_label(r, cls);
  }
  d.source = "generator";
  d.path = "vfml_random_tree";
  d.seed = seed;
  return d;
}

// ---------------------------------------------------------------------------------------------
// Poker hands (UCI "Poker Hand": suits 1..4, ranks 1..13, ace = 1; classes 0..9).

int poker_hand_class(const int suit[5], const int rank[5]) {
  int count[14] = {0};
  for (int i = 0; i < 5; ++i) ++count[rank[i]];
  const bool flush = suit[0] == suit[1] && suit[1] == suit[2] && suit[2] == suit[3] && suit[3] == suit[4];
  int pairs = 0, threes = 0, fours = 0, distinct = 0, lo = 14, hi = 0;
  for (int r = 1; r <= 13; ++r) {
    if (count[r] == 0) continue;
    ++distinct;
    lo = std::min(lo, r);
    hi = std::max(hi, r);
    if (count[r] == 2) ++pairs;
    if (count[r] == 3) ++threes;
    if (count[r] == 4) ++fours;
  }
  const bool broadway = distinct == 5 && count[1] && count[10] && count[11] && count[12] && count[13];
  const bool straight = distinct == 5 && (hi - lo == 4 || broadway);  // ace low or high (10-A)
  if (flush && broadway) return 9;
  if (flush && straight) return 8;
  if (fours) return 7;
  if (threes && pairs) return 6;
  if (flush) return 5;
  if (straight) return 4;
  if (threes) return 3;
  if (pairs == 2) return 2;
  if (pairs == 1) return 1;
  return 0;
}

Dataset make_poker(std::size_t rows, std::uint64_t seed) {
  std::vector<Attribute> attrs;
  for (int i = 1; i <= 5; ++i) {
    attrs.push_back(numeric_attribute(indexed("S", i)));
    attrs.push_back(numeric_attribute(indexed("C", i)));
  }
  std::vector<std::string> classes;
  for (int c = 0; c < 10; ++c) classes.push_back(std::to_string(c));
  Dataset d("poker_full", Task::classification, rows, std::move(attrs), std::move(classes));
  Rng rng(seed);
  int card[5], suit[5], rank[5];
  for (std::size_t r = 0; r < rows; ++r) {
    for (int i = 0; i < 5; ++i) {
      bool dup;
      do {
        card[i] = static_cast<int>(rng.below(52));
        dup = false;
        for (int j = 0; j < i; ++j) dup = dup || card[j] == card[i];
      } while (dup);
      suit[i] = card[i] / 13 + 1;
      rank[i] = card[i] % 13 + 1;
      d.at(r, static_cast<std::size_t>(2 * i)) = static_cast<float>(suit[i]);
      d.at(r, static_cast<std::size_t>(2 * i + 1)) = static_cast<float>(rank[i]);
    }
    d.set_label(r, poker_hand_class(suit, rank));
  }
  d.source = "generator";
  d.path = "poker";
  d.seed = seed;
  return d;
}

}  // namespace gpudm::datasets
