#pragma once
// Small datasets and helpers shared by the Pittsburgh tests.
#include <string>
#include <vector>

#include "algorithms/core/backend.hpp"
#include "algorithms/core/dataset.hpp"
#include "algorithms/core/phase_timer.hpp"
#include "algorithms/core/registry.hpp"
#include "algorithms/core/rng.hpp"
#include "algorithms/pittsburgh/evaluator.hpp"

namespace gpudm {
void register_pittsburgh(Registry&);
}

namespace pitt_test {

// The family for tests/common/equivalence.hpp (IsEquivalentToRef<PittsburghTraits>).
struct PittsburghTraits {
  using Interface = gpudm::pittsburgh::RuleSetEvaluator;
  static constexpr const char* kFamily = gpudm::pittsburgh::kFamilyName;
  static void register_backends(gpudm::Registry& r) { gpudm::register_pittsburgh(r); }
};

// rows x (numeric cols + 1 nominal col with 3 values), `classes` classes, some missing values.
inline gpudm::Dataset random_dataset(std::size_t rows, std::size_t numeric, int classes, std::uint64_t seed,
                                     bool with_missing = true) {
  std::vector<gpudm::Attribute> attrs;
  for (std::size_t c = 0; c < numeric; ++c) attrs.push_back({std::string("x") + std::to_string(c), gpudm::AttributeKind::numeric, {}});
  attrs.push_back({"color", gpudm::AttributeKind::nominal, {"red", "green", "blue"}});
  std::vector<std::string> cls;
  for (int k = 0; k < classes; ++k) cls.push_back(std::string("c") + std::to_string(k));
  gpudm::Dataset d("random", gpudm::Task::classification, rows, attrs, cls);
  gpudm::Rng rng(seed);
  for (std::size_t i = 0; i < rows; ++i) {
    for (std::size_t c = 0; c < numeric; ++c) d.at(i, c) = static_cast<float>(rng.below(21)) * 0.5f - 5.0f;  // ties on purpose
    d.at(i, numeric) = static_cast<float>(rng.below(3));
    d.set_label(i, rng.below_int(classes));
    if (with_missing && rng.bernoulli(0.02)) d.set_missing(i, rng.below(numeric + 1));
  }
  return d;
}

inline std::string first_difference(const gpudm::pittsburgh::EvaluationResult& a,
                                     const gpudm::pittsburgh::EvaluationResult& b) {
  if (a.rule_confusion.size() != b.rule_confusion.size()) return "rule count differs";
  for (std::size_t r = 0; r < a.rule_confusion.size(); ++r) {
    const auto& x = a.rule_confusion[r];
    const auto& y = b.rule_confusion[r];
    if (!(x == y))
      return "rule " + std::to_string(r) + ": (" + std::to_string(x.tp) + "," + std::to_string(x.tn) + "," +
             std::to_string(x.fp) + "," + std::to_string(x.fn) + ") vs (" + std::to_string(y.tp) + "," +
             std::to_string(y.tn) + "," + std::to_string(y.fp) + "," + std::to_string(y.fn) + ")";
    if (a.rule_fitness[r] != b.rule_fitness[r]) return "rule " + std::to_string(r) + ": fitness differs";
  }
  if (a.correct != b.correct) return "correct counts differ";
  return "";
}

// One numeric attribute 1..6, classes a a b b c c.
inline gpudm::Dataset six_rows() {
  gpudm::Dataset d("six", gpudm::Task::classification, 6, {{"x0", gpudm::AttributeKind::numeric, {}}}, {"a", "b", "c"});
  for (int i = 0; i < 6; ++i) {
    d.at(i, 0) = static_cast<float>(i + 1);
    d.set_label(i, i / 2);
  }
  return d;
}

// Decision lists whose counts on six_rows() are worked out by hand (test_equivalence.cpp).
inline gpudm::pittsburgh::Population hand_population() {
  return gpudm::pittsburgh::population_from_json(nlohmann::json::parse(R"({"individuals": [
    {"default_class": 2, "rules": [{"antecedent": ["<=", 0, 2], "consequent": 0},
                                   {"antecedent": [">=", 0, 2], "consequent": 1}]},
    {"default_class": 2, "rules": [{"antecedent": [">=", 0, 2], "consequent": 1},
                                   {"antecedent": ["<=", 0, 2], "consequent": 0}]},
    {"default_class": 2, "rules": []},
    {"default_class": 1, "rules": [{"antecedent": ["IN", 0, 3, 4, "NOT"], "consequent": 2}]}
  ]})"));
}

// One evaluation with a fresh timer (phases into `phases` when given).
inline gpudm::pittsburgh::EvaluationResult evaluate(gpudm::pittsburgh::RuleSetEvaluator& ev,
                                                    const gpudm::pittsburgh::Population& p,
                                                    gpudm::PhaseTimer* phases = nullptr) {
  gpudm::pittsburgh::EvaluationResult r;
  gpudm::PhaseTimer t;
  ev.evaluate(p, r, phases ? *phases : t);
  return r;
}

// The options a backend is checked under, by capabilities: thread counts 1 and 3 where it has a
// thread pool; on a device backend path (faithful | fast) x devices (1, 2: those it has) x, on the
// fast path, features (auto | f32), and both paths split over two slices on device 0; else the
// defaults.
struct Variant {
  gpudm::pittsburgh::EvaluatorOptions options;
  std::string label;
};
inline std::vector<Variant> variants(const gpudm::Capabilities& caps) {
  using namespace gpudm::pittsburgh;
  std::vector<Variant> out;
  if (caps.threads) {
    for (int t : {1, 3}) {
      EvaluatorOptions o;
      o.threads = t;
      out.push_back({o, "threads " + std::to_string(t)});
    }
  } else if (caps.device()) {
    for (KernelPath path : {KernelPath::faithful, KernelPath::fast})
      for (int devices : {1, 2}) {
        if (devices > caps.devices) continue;
        for (FeatureLayout f : {FeatureLayout::automatic, FeatureLayout::f32}) {
          if (path == KernelPath::faithful && f != FeatureLayout::automatic) continue;
          EvaluatorOptions o;
          o.path = path;
          o.devices = devices;
          o.features = f;
          out.push_back({o, std::string("path ") + to_string(path) + " devices " + std::to_string(devices) +
                                " features " + to_string(f)});
        }
      }
    for (KernelPath path : {KernelPath::faithful, KernelPath::fast}) {  // two slices on one GPU
      EvaluatorOptions o;
      o.path = path;
      o.device_ids = {0, 0};
      out.push_back({o, std::string("path ") + to_string(path) + " device_ids [0, 0]"});
    }
  } else {
    out.push_back({EvaluatorOptions{}, "defaults"});
  }
  return out;
}

}  // namespace pitt_test
