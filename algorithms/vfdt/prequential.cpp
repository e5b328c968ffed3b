#include "algorithms/vfdt/prequential.hpp"

#include <algorithm>

namespace gpudm::vfdt {

PrequentialSummary summarize(const EncodedStream& s, const std::vector<std::int32_t>& predictions, int window,
                             int curve_points) {
  GPUDM_REQUIRE(predictions.size() == s.rows, "vfdt: one prediction per instance expected");
  GPUDM_REQUIRE(window >= 1, "vfdt params: 'window' must be >= 1");
  GPUDM_REQUIRE(curve_points >= 1, "vfdt params: 'curve_points' must be >= 1");
  PrequentialSummary r;
  const std::size_t n = s.rows;
  if (n == 0) return r;
  const std::size_t step = std::max<std::size_t>(1, n / static_cast<std::size_t>(curve_points));
  std::size_t correct = 0, in_window = 0;
  const std::size_t W = static_cast<std::size_t>(window);
  for (std::size_t i = 0; i < n; ++i) {
    const bool ok = predictions[i] == s.labels[i];
    correct += ok;
    in_window += ok;
    if (i >= W) in_window -= predictions[i - W] == s.labels[i - W];
    if ((i + 1) % step == 0 || i + 1 == n) {
      if (!r.curve_x.empty() && r.curve_x.back() == i + 1) continue;
      r.curve_x.push_back(i + 1);
      r.curve_acc.push_back(100.0 * static_cast<double>(correct) / static_cast<double>(i + 1));
      r.curve_window.push_back(100.0 * static_cast<double>(in_window) / static_cast<double>(std::min(i + 1, W)));
    }
  }
  r.accuracy = 100.0 * static_cast<double>(correct) / static_cast<double>(n);
  r.window_accuracy = r.curve_window.back();
  return r;
}

}  // namespace gpudm::vfdt
