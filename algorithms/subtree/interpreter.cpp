#include "algorithms/subtree/interpreter.hpp"

#include <bit>

#include "algorithms/core/error.hpp"
#include "algorithms/subtree/encoding.hpp"

namespace gpudm::subtree {

std::size_t Coverage::covered(int t) const {
  std::size_t c = 0;
  const std::uint32_t* w = tree(t);
  for (std::size_t i = 0; i < words_per_tree; ++i) c += static_cast<std::size_t>(std::popcount(w[i]));
  return c;
}

const char* to_string(Strategy s) {
  switch (s) {
    case Strategy::automatic: return "auto";
    case Strategy::postfix: return "postfix";
    case Strategy::mixed: return "mixed";
    case Strategy::subtree: return "subtree";
    case Strategy::best: return "best";
  }
  return "?";
}

const std::vector<std::pair<std::string, Strategy>>& strategy_names() {
  static const std::vector<std::pair<std::string, Strategy>> names = {{"auto", Strategy::automatic},
                                                                     {"postfix", Strategy::postfix},
                                                                     {"mixed", Strategy::mixed},
                                                                     {"subtree", Strategy::subtree},
                                                                     {"best", Strategy::best}};
  return names;
}

Strategy resolve_strategy(Strategy s, Placement where) {
  if (s != Strategy::automatic) return s;
  return where == Placement::device ? Strategy::best : Strategy::mixed;
}

bool features_have_nan(const Dataset& data) {
  for (std::size_t c = 0; c < data.cols(); ++c) {
    const float* col = data.column(c);
    for (std::size_t r = 0; r < data.rows(); ++r)
      if (col[r] != col[r]) return true;
  }
  return false;
}

Coverage reference_coverage(const Population& pop, const Dataset& data, std::size_t rows) {
  if (rows == 0 || rows > data.rows()) rows = data.rows();
  const TokenStreams mixed = encode_mixed(pop);
  Coverage c;
  c.reset(pop.trees, rows);
  for (int t = 0; t < pop.trees; ++t) {
    const std::uint32_t* tok = mixed.tokens.data() + mixed.offsets[t];
    std::uint32_t* words = c.tree(t);
    for (std::size_t r = 0; r < rows; ++r) {
      const bool v = rules::evaluate(tok, [&](std::uint32_t attr) { return data.at(r, attr); });
      words[r / 32] |= static_cast<std::uint32_t>(v) << (r % 32);
    }
  }
  return c;
}

std::string first_difference(const Coverage& a, const Coverage& b, std::size_t rows) {
  if (a.trees != b.trees)
    return "coverage has " + std::to_string(a.trees) + " trees vs " + std::to_string(b.trees);
  if (rows > a.rows || rows > b.rows)
    return "coverage has " + std::to_string(a.rows) + " rows vs " + std::to_string(b.rows) + ", compared over " +
           std::to_string(rows);
  for (int t = 0; t < a.trees; ++t)
    for (std::size_t w = 0; w < (rows + 31) / 32; ++w) {
      std::uint32_t diff = a.tree(t)[w] ^ b.tree(t)[w];
      const std::size_t valid = rows - w * 32;
      if (valid < 32) diff &= (1u << valid) - 1u;
      if (diff) {
        const std::size_t r = w * 32 + static_cast<std::size_t>(std::countr_zero(diff));
        return "tree " + std::to_string(t) + ", row " + std::to_string(r) + ": " + std::to_string(a.covers(t, r)) +
               " vs " + std::to_string(b.covers(t, r));
      }
    }
  return "";
}

}  // namespace gpudm::subtree
