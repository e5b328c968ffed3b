#pragma once
// The three fitness functions, from a rule's confusion matrix for its consequent (the GP paper,
// Sec. 6.1). Pure functions: the tests check them against hand-computed matrices.
#include <cstdint>

#include "algorithms/rules/confusion.hpp"

namespace gpudm::gp_rules {

// Falco, Della Cioppa, Tarantino (2001), minimised:
//   fitness = nI - ((tp + tn) - (fp + fn)) + alpha * N
// nI: instances, N: nodes of the rule (terminals included), alpha in [0, 1] weighs simplicity.
inline double falco_fitness(const rules::ConfusionMatrix& m, std::uint64_t instances, int nodes, double alpha) {
  const double right = static_cast<double>(m.tp) + static_cast<double>(m.tn);
  const double wrong = static_cast<double>(m.fp) + static_cast<double>(m.fn);
  return static_cast<double>(instances) - (right - wrong) + alpha * nodes;
}

// Tan, Tay, Lee, Heng (2002), maximised: Se * Sp with Se = tp / (tp + w1 fn),
// Sp = tn / (tn + w2 fp); an undefined ratio (0 / 0) counts 0.
inline double sensitivity(const rules::ConfusionMatrix& m, double w1) {
  const double d = static_cast<double>(m.tp) + w1 * static_cast<double>(m.fn);
  return d > 0 ? static_cast<double>(m.tp) / d : 0.0;
}
inline double specificity(const rules::ConfusionMatrix& m, double w2) {
  const double d = static_cast<double>(m.tn) + w2 * static_cast<double>(m.fp);
  return d > 0 ? static_cast<double>(m.tn) / d : 0.0;
}
inline double tan_fitness(const rules::ConfusionMatrix& m, double w1, double w2) {
  return sensitivity(m, w1) * specificity(m, w2);
}

// Bojarczuk, Lopes, Freitas (2004), maximised: Se * Sp * Sy (w1 = w2 = 1) with the simplicity
//   Sy = (maxnodes - 0.5 numnodes - 0.5) / (maxnodes - 1),
// 1 for a one-node rule, 0.5 for a rule of maxnodes nodes (maxnodes = 1: Sy = 1).
inline double simplicity(int numnodes, int maxnodes) {
  if (maxnodes <= 1) return 1.0;
  return (maxnodes - 0.5 * numnodes - 0.5) / (maxnodes - 1.0);
}
inline double bojarczuk_fitness(const rules::ConfusionMatrix& m, int numnodes, int maxnodes) {
  return tan_fitness(m, 1.0, 1.0) * simplicity(numnodes, maxnodes);
}

}  // namespace gpudm::gp_rules
