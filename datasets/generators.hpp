#pragma once
// Synthetic datasets. Every generator is deterministic for its parameters and seed, seeded with
// gpudm::Rng unless a port must reproduce another program's stream (MOA: java.util.Random;
// the VFML concept tree: glibc random()). Each is documented in datasets/catalog.json, where
// the catalog names, their default parameters and what they stand in for are listed.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "algorithms/core/dataset.hpp"

namespace gpudm::datasets {

// ---- regression sets with published formulas (MANIFEST.md §4) ----
// 2dplanes (Breiman et al. 1984): X1 in {-1,1}, X2..X10 in {-1,0,1};
// Y = 3 + 3X2 + 2X3 + X4 + e if X1 = 1, else -3 + 3X5 + 2X6 + X7 + e; e ~ N(0, noise_sd).
Dataset make_2dplanes(std::size_t rows, std::uint64_t seed, double noise_sd = 1.0);
double planes2d_mean(const float* x /* 10 values */);
// Fried (Friedman #1): X1..X10 ~ U[0,1]; Y = 10 sin(pi X1 X2) + 20 (X3 - 0.5)^2 + 10 X4 + 5 X5 + e.
Dataset make_fried(std::size_t rows, std::uint64_t seed, double noise_sd = 1.0);
double fried_mean(const float* x /* 10 values */);
// Mv from Torgo's description (the published file does not follow it; see MANIFEST §4.3).
// X3, X7, X8 are nominal with PMLB's codes (X3 brown=0 red=1 green=2; X7 no=0 yes=1; X8 normal=0 large=1).
Dataset make_mv(std::size_t rows, std::uint64_t seed);

// ---- Armchair: documented reconstruction (the paper's definition is not public) ----
// x1, x2 ~ U[0, 10]; five axis-parallel regions, each with its own plane (kArmchairRegions);
// y = plane(x) + N(0, noise_sd). `noise_attributes` extra U[0, 10] columns carry no signal
// (the paper's 4/6/8/10-attribute variants). The optimal model tree splits x2 < 8 at the root
// (5 leaves); a greedy one-level split (constant or linear leaves) picks x1 instead.
struct ArmchairRegion {
  const char* name;
  float x1_lo, x1_hi, x2_lo, x2_hi;  // [lo, hi)
  float c0, c1, c2;                  // y = c0 + c1 x1 + c2 x2
};
inline constexpr int kArmchairRegionCount = 5;
extern const ArmchairRegion kArmchairRegions[kArmchairRegionCount];
inline constexpr double kArmchairNoiseSd = 0.05;
int armchair_region(float x1, float x2);
double armchair_mean(float x1, float x2);
Dataset make_armchair(std::size_t rows, std::uint64_t seed, int noise_attributes = 0,
                      double noise_sd = kArmchairNoiseSd);
nlohmann::ordered_json armchair_definition();  // the regions as JSON (catalog report, GMT checks)

// ---- streams ----
// MOA RandomTreeGenerator, exact port (java.util.Random for tree and instances).
struct MoaRandomTreeParams {
  std::int32_t tree_seed = 1, instance_seed = 1;
  int num_classes = 2, num_nominals = 5, num_numerics = 5, num_vals_per_nominal = 5;
  int max_tree_depth = 5, first_leaf_level = 3;
  double leaf_fraction = 0.15;
};
class MoaRandomTree {
 public:
  explicit MoaRandomTree(const MoaRandomTreeParams& p);
  // Attributes in MOA order (nominals as value index, then numerics); returns the class.
  int classify(const double* att) const;
  std::size_t nodes() const { return nodes_.size(); }
  std::size_t leaves() const;
  int depth() const;

 private:
  struct Node {
    int class_label = 0;
    int split_att = -1;  // -1: leaf
    double split_value = 0;
    std::vector<int> children;
  };
  int build(int depth, const std::vector<int>& nominal_candidates, std::vector<double> min_v,
            std::vector<double> max_v, void* rand);
  MoaRandomTreeParams p_;
  std::vector<Node> nodes_;
};
Dataset make_moa_random_tree(std::size_t rows, const MoaRandomTreeParams& p);

// VFML treedata-style binary random tree (the RT stream of the VFDT paper: 10 binary attributes,
// 2 classes, 5 levels, 20 % noise). The concept tree follows treedata's rules with a glibc
// random() port and per-node reseeding (conceptSeed x node number); examples are drawn with
// gpudm::Rng(seed), so the stream is VFML-like, not byte-identical to a treedata run.
struct VfmlTreeParams {
  int discrete = 10, classes = 2;
  int max_level = 5, first_prune_level = 3, prune_percent = 25;
  std::uint32_t concept_seed = 100;
  double class_noise = 0.2, attribute_noise = 0.2;
};
Dataset make_vfml_random_tree(std::size_t rows, std::uint64_t seed, const VfmlTreeParams& p);

// Poker hands: 5 distinct cards from a 52-card deck, columns S1,C1,...,S5,C5 (suit 1..4,
// rank 1..13 with ace = 1), labelled by the UCI rules (0 nothing .. 9 royal flush).
Dataset make_poker(std::size_t rows, std::uint64_t seed);
int poker_hand_class(const int suit[5], const int rank[5]);

// Every generator is prefix-stable: {"rows": N} gives the first N rows of the longer stream.
//
// Shape surrogate: `continuous` U[0,1) columns then `binary` Bernoulli(p_c) columns; labels from a
// random tree of depth `depth` over the features (class per leaf, or a linear model per leaf for
// regression) with label noise, so learners have signal. Concept drift: at each fraction in
// `drift_points` the labelling tree is replaced by a new one (seed-derived); with drift_width > 0
// the switch is gradual, P(new concept) = 1 / (1 + exp(-4 (t - t0) / width)) as in MOA's
// ConceptDriftStream. `class_prior` (optional) weights the classes given to leaves.
struct SurrogateParams {
  std::size_t rows = 10000;
  int continuous = 10, binary = 0;
  int classes = 2;              // 0: regression
  int depth = 6;
  double label_noise = 0.05;    // classification: P(label replaced by a uniform random class)
  double target_noise_sd = 0.1; // regression
  std::vector<double> drift_points;  // fractions of drift_span
  double drift_span = 0;        // rows the drift points refer to (0: rows); fixed spans keep
                                // {"rows": N} a prefix of the full stream
  double drift_width = 0;       // rows
  std::vector<double> class_prior;
  std::uint64_t seed = 1;
};
Dataset make_surrogate(const std::string& name, const SurrogateParams& p);

// Dispatch by generator name (the catalog's "generator.name") with merged parameters
// (catalog defaults overridden by options). Unknown generator or parameter: gpudm::Error.
Dataset generate(const std::string& generator, const nlohmann::json& params, const std::string& dataset_name);
std::vector<std::string> generator_names();

}  // namespace gpudm::datasets
