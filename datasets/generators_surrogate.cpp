// Shape surrogates: datasets we cannot ship, replaced by generated data of the same shape whose
// labels come from a random tree over the features (so learners have something to find).
#include <algorithm>
#include <cmath>

#include "algorithms/core/error.hpp"
#include "algorithms/core/rng.hpp"
#include "datasets/generator_util.hpp"
#include "datasets/generators.hpp"

namespace gpudm::datasets {
using detail::indexed;
using detail::nominal_attribute;
using detail::numeric_attribute;
namespace {

struct ConceptNode {
  int att = -1;  // -1: leaf
  float threshold = 0;
  int child[2] = {-1, -1};
  int cls = 0;
  // regression leaf: y = b0 + b1 x[a1] + b2 x[a2]
  float b0 = 0, b1 = 0, b2 = 0;
  int a1 = 0, a2 = 0;
};

struct Concept {
  std::vector<ConceptNode> nodes;
  int leaf_of(const Dataset& d, std::size_t r) const {
    int n = 0;
    while (nodes[static_cast<std::size_t>(n)].att >= 0) {
      const ConceptNode& c = nodes[static_cast<std::size_t>(n)];
      n = c.child[d.at(r, static_cast<std::size_t>(c.att)) < c.threshold ? 0 : 1];
    }
    return n;
  }
};

int build_node(Concept& k, Rng& rng, int depth, int max_depth, int n_cont, int n_att, std::vector<float> lo,
               std::vector<float> hi) {
  const int id = static_cast<int>(k.nodes.size());
  k.nodes.emplace_back();
  if (depth >= max_depth) return id;
  const int att = rng.below_int(n_att);
  const auto a = static_cast<std::size_t>(att);
  float thr;
  if (att < n_cont) {
    // Middle half of the attribute's current range: no empty branches, balanced-ish tree.
    thr = lo[a] + (hi[a] - lo[a]) * static_cast<float>(rng.uniform(0.25, 0.75));
  } else {
    thr = 0.5f;  // binary attribute
  }
  k.nodes[static_cast<std::size_t>(id)].att = att;
  k.nodes[static_cast<std::size_t>(id)].threshold = thr;
  std::vector<float> hi_left = hi;
  hi_left[a] = std::min(hi[a], thr);
  const int l = build_node(k, rng, depth + 1, max_depth, n_cont, n_att, lo, hi_left);
  std::vector<float> lo_right = lo;
  lo_right[a] = std::max(lo[a], thr);
  const int r = build_node(k, rng, depth + 1, max_depth, n_cont, n_att, lo_right, hi);
  k.nodes[static_cast<std::size_t>(id)].child[0] = l;
  k.nodes[static_cast<std::size_t>(id)].child[1] = r;
  return id;
}

Concept make_concept(const SurrogateParams& p, int depth, std::uint64_t seed) {
  Rng rng(seed);
  Concept k;
  const int n_att = p.continuous + p.binary;
  std::vector<float> lo(static_cast<std::size_t>(n_att), 0.0f), hi(static_cast<std::size_t>(n_att), 1.0f);
  build_node(k, rng, 0, depth, p.continuous, n_att, lo, hi);
  std::vector<int> leaves;
  for (std::size_t i = 0; i < k.nodes.size(); ++i)
    if (k.nodes[i].att < 0) leaves.push_back(static_cast<int>(i));
  if (p.classes > 0) {
    // Every class gets at least one leaf (in a random position); the rest follow the prior.
    std::vector<double> cdf;
    double acc = 0;
    for (int c = 0; c < p.classes; ++c) {
      acc += p.class_prior.empty() ? 1.0 : p.class_prior[static_cast<std::size_t>(c)];
      cdf.push_back(acc);
    }
    for (std::size_t i = leaves.size(); i > 1; --i) std::swap(leaves[i - 1], leaves[rng.below(i)]);
    for (std::size_t i = 0; i < leaves.size(); ++i) {
      int cls;
      if (static_cast<int>(i) < p.classes) {
        cls = static_cast<int>(i);
      } else {
        const double u = rng.uniform() * acc;
        cls = static_cast<int>(std::upper_bound(cdf.begin(), cdf.end(), u) - cdf.begin());
        cls = std::min(cls, p.classes - 1);
      }
      k.nodes[static_cast<std::size_t>(leaves[i])].cls = cls;
    }
  } else {
    const int n_reg = std::max(1, p.continuous);
    for (int leaf : leaves) {
      ConceptNode& n = k.nodes[static_cast<std::size_t>(leaf)];
      n.b0 = static_cast<float>(rng.normal(0.0, 2.0));
      n.b1 = static_cast<float>(rng.normal(0.0, 1.0));
      n.b2 = static_cast<float>(rng.normal(0.0, 1.0));
      n.a1 = rng.below_int(n_reg);
      n.a2 = rng.below_int(n_reg);
    }
  }
  return k;
}

}  // namespace

Dataset make_surrogate(const std::string& name, const SurrogateParams& p) {
  const std::string who = "dataset '" + name + "': surrogate";
  if (p.continuous < 0 || p.binary < 0 || p.continuous + p.binary < 1)
    throw Error(who + ": needs at least one attribute (cols >= 1)");
  if (p.classes == 1 || p.classes < 0) throw Error(who + ": classes must be 0 (regression) or >= 2");
  if (!p.class_prior.empty() && static_cast<int>(p.class_prior.size()) != p.classes)
    throw Error(who + ": class_prior has " + std::to_string(p.class_prior.size()) + " entries, expected " +
                std::to_string(p.classes));
  if (p.classes == 0 && p.continuous == 0) throw Error(who + ": a regression surrogate needs continuous columns");
  for (double t : p.drift_points)
    if (!(t > 0 && t < 1)) throw Error(who + ": drift_points must lie in (0, 1)");
  const bool classification = p.classes > 0;
  std::vector<Attribute> attrs;
  for (int i = 0; i < p.continuous; ++i) attrs.push_back(numeric_attribute(indexed("c", i + 1)));
  for (int i = 0; i < p.binary; ++i)
    attrs.push_back(nominal_attribute(indexed("b", i + 1), {"0", "1"}));
  std::vector<std::string> classes;
  for (int c = 0; c < p.classes; ++c) classes.push_back(std::to_string(c));
  Dataset d(name, classification ? Task::classification : Task::regression, p.rows, std::move(attrs),
            std::move(classes));
  const Rng base(p.seed);
  // Features, one independent stream per column.
  for (int c = 0; c < p.continuous + p.binary; ++c) {
    Rng rc = base.split(static_cast<std::uint64_t>(c));
    float* col = d.column(static_cast<std::size_t>(c));
    if (c < p.continuous) {
      for (std::size_t r = 0; r < p.rows; ++r) col[r] = rc.uniform_float();
    } else {
      const auto bits = static_cast<std::uint64_t>((0.1 + 0.4 * rc.uniform()) * 0x1.0p32);
      for (std::size_t r = 0; r < p.rows; ++r) col[r] = (rc.next() >> 32) < bits ? 1.0f : 0.0f;
    }
  }
  // Concepts: one before and one after each drift point.
  int depth = p.depth;
  if (classification)
    while ((1 << depth) < 2 * p.classes && depth < 20) ++depth;
  std::vector<Concept> concepts;
  for (std::size_t k = 0; k <= p.drift_points.size(); ++k)
    concepts.push_back(make_concept(p, depth, base.split(1000003 + k).next()));
  std::vector<double> centres;
  const double span = p.drift_span > 0 ? p.drift_span : static_cast<double>(p.rows);
  for (double t : p.drift_points) centres.push_back(t * span);
  Rng rl = base.split(2000003);
  for (std::size_t r = 0; r < p.rows; ++r) {
    std::size_t k = 0;
    for (std::size_t i = 0; i < centres.size(); ++i) {
      bool switched;
      if (p.drift_width <= 0) {
        switched = static_cast<double>(r) >= centres[i];
      } else {
        const double x = -4.0 * (static_cast<double>(r) - centres[i]) / p.drift_width;
        switched = rl.uniform() < 1.0 / (1.0 + std::exp(x));
      }
      if (!switched) break;
      k = i + 1;
    }
    const Concept& cpt = concepts[k];
    const ConceptNode& leaf = cpt.nodes[static_cast<std::size_t>(cpt.leaf_of(d, r))];
    if (classification) {
      int cls = leaf.cls;
      if (p.label_noise > 0 && rl.bernoulli(p.label_noise)) cls = rl.below_int(p.classes);
      d.set_label(r, cls);
    } else {
      const double y = leaf.b0 + leaf.b1 * d.at(r, static_cast<std::size_t>(leaf.a1)) +
                       leaf.b2 * d.at(r, static_cast<std::size_t>(leaf.a2)) + p.target_noise_sd * rl.normal();
      d.set_target(r, static_cast<float>(y));
    }
  }
  d.source = "generator";
  d.path = "surrogate";
  d.seed = p.seed;
  d.surrogate = true;
  return d;
}

}  // namespace gpudm::datasets
