#pragma once
// Prequential (test-then-train) summaries from the forest's predictions: cumulative accuracy,
// sliding-window accuracy (MOA's WindowClassificationPerformanceEvaluator) and a learning curve.
#include <cstdint>
#include <vector>

#include "algorithms/vfdt/forest.hpp"

namespace gpudm::vfdt {

struct PrequentialSummary {
  double accuracy = 0;         // percent, over the whole stream
  double window_accuracy = 0;  // percent, over the last `window` instances
  std::vector<std::size_t> curve_x;
  std::vector<double> curve_acc, curve_window;
};

PrequentialSummary summarize(const EncodedStream& s, const std::vector<std::int32_t>& predictions, int window,
                             int curve_points);

}  // namespace gpudm::vfdt
