#pragma once
// Confusion matrix of one rule over a dataset and the per-instance outcome codes of the
// Pittsburgh coverage kernel (Cano et al. 2014, Listing 1). Host/device, C++17.
//
// A rule "predicts positive" on an instance when its antecedent covers it; the instance is
// positive when its class equals the rule's consequent:
//   covers & positive -> TP,  covers & !positive -> FP,  !covers & positive -> FN,  else TN.
#include <cstdint>

#include "algorithms/core/hd.hpp"

namespace gpudm::rules {

enum Outcome : std::uint8_t { kTP = 0, kTN = 1, kFP = 2, kFN = 3 };

GPUDM_HD std::uint8_t outcome(bool covers, bool positive) {
  return covers ? (positive ? kTP : kFP) : (positive ? kFN : kTN);
}
GPUDM_HD bool outcome_covers(std::uint8_t code) { return code == kTP || code == kFP; }

struct ConfusionMatrix {
  std::uint32_t tp = 0, tn = 0, fp = 0, fn = 0;

  GPUDM_HD void add(std::uint8_t code) {
    tp += code == kTP;
    tn += code == kTN;
    fp += code == kFP;
    fn += code == kFN;
  }
  GPUDM_HD std::uint64_t total() const {
    return static_cast<std::uint64_t>(tp) + tn + fp + fn;
  }
};

GPUDM_HD bool operator==(const ConfusionMatrix& a, const ConfusionMatrix& b) {
  return a.tp == b.tp && a.tn == b.tn && a.fp == b.fp && a.fn == b.fn;
}

// The rule fitness of the paper's Listing 2: sensitivity x specificity (0 when undefined).
GPUDM_HD float sensitivity_specificity(std::uint32_t tp, std::uint32_t tn, std::uint32_t fp, std::uint32_t fn) {
  const float se = (tp + fn) ? static_cast<float>(tp) / static_cast<float>(tp + fn) : 0.0f;
  const float sp = (tn + fp) ? static_cast<float>(tn) / static_cast<float>(tn + fp) : 0.0f;
  return se * sp;
}
GPUDM_HD float sensitivity_specificity(const ConfusionMatrix& m) {
  return sensitivity_specificity(m.tp, m.tn, m.fp, m.fn);
}

}  // namespace gpudm::rules
