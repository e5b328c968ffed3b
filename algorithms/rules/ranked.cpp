#include "algorithms/rules/ranked.hpp"

#include <algorithm>
#include <cmath>

namespace gpudm::rules {

RankedColumns rank_columns(const Dataset& d) {
  RankedColumns r;
  r.begin.push_back(0);
  std::vector<float> col;
  for (std::size_t c = 0; c < d.cols(); ++c) {
    const float* x = d.column(c);
    col.clear();
    for (std::size_t i = 0; i < d.rows(); ++i)
      if (!std::isnan(x[i])) col.push_back(x[i]);
    std::sort(col.begin(), col.end());
    col.erase(std::unique(col.begin(), col.end(), [](float p, float q) { return p == q; }), col.end());
    if (col.size() > kMaxRanks) {
      r.reason = "attribute " + std::to_string(c) + " ('" + d.attribute(c).name + "') has " + std::to_string(col.size()) +
                 " distinct values, more than the " + std::to_string(kMaxRanks) + " codes of the ranked fp16 layout";
      r.values.clear();
      r.begin.clear();
      return r;
    }
    r.values.insert(r.values.end(), col.begin(), col.end());
    r.begin.push_back(static_cast<std::uint32_t>(r.values.size()));
  }
  r.codes.assign(d.padded_rows() * d.cols(), 0);
  for (std::size_t c = 0; c < d.cols(); ++c) {
    const float* v = r.values.data() + r.begin[c];
    const std::uint32_t n = r.begin[c + 1] - r.begin[c];
    const float* x = d.column(c);
    std::uint16_t* out = r.codes.data() + c * d.padded_rows();
    for (std::size_t i = 0; i < d.rows(); ++i)
      out[i] = std::isnan(x[i]) ? kRankNaN : rank_code(rank_lower(v, n, x[i]));
  }
  return r;
}

}  // namespace gpudm::rules
