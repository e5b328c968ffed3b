#include "algorithms/rules/evaluator.hpp"

#include <algorithm>

#include "algorithms/core/family.hpp"
#include "algorithms/rules/opcodes.hpp"

namespace gpudm::rules {

const std::vector<std::pair<std::string, Path>>& path_names() {
  static const std::vector<std::pair<std::string, Path>> n = {{"fast", Path::fast}, {"faithful", Path::faithful}};
  return n;
}
const std::vector<std::pair<std::string, Features>>& features_names() {
  static const std::vector<std::pair<std::string, Features>> n = {
      {"auto", Features::automatic}, {"f32", Features::f32}, {"f16x2", Features::f16x2}};
  return n;
}
const char* to_string(Path p) { return p == Path::fast ? "fast" : "faithful"; }
const char* to_string(Features f) {
  return f == Features::f32 ? "f32" : (f == Features::f16x2 ? "f16x2" : "auto");
}

std::uint64_t RuleCounts::covered_total(std::size_t r) const {
  std::uint64_t s = 0;
  for (int c = 0; c < classes; ++c) s += covered_of(r, c);
  return s;
}

ConfusionMatrix RuleCounts::confusion(std::size_t r, int consequent) const {
  ConfusionMatrix m;
  const std::uint64_t cov = covered_total(r);
  const std::uint64_t pos = class_rows[static_cast<std::size_t>(consequent)];
  m.tp = covered_of(r, consequent);
  m.fp = static_cast<std::uint32_t>(cov - m.tp);
  m.fn = static_cast<std::uint32_t>(pos - m.tp);
  m.tn = static_cast<std::uint32_t>(rows - cov - m.fn);
  return m;
}

void RuleCounts::reset(std::size_t n_rules, std::uint64_t n_rows, const std::vector<std::uint64_t>& per_class,
                       bool with_coverage) {
  rules = n_rules;
  rows = n_rows;
  class_rows = per_class;
  classes = static_cast<int>(per_class.size());
  covered.assign(n_rules * per_class.size(), 0u);
  words_per_rule = static_cast<std::size_t>((n_rows + 31) / 32);
  if (with_coverage) coverage.resize(n_rules * words_per_rule);
  else coverage.clear();
  gpops = 0;
}

std::string RuleCounts::checksum() const {
  std::string h = checksum_hex(covered.data(), covered.size() * sizeof(std::uint32_t));
  if (!coverage.empty()) h += checksum_hex(coverage.data(), coverage.size() * sizeof(std::uint32_t));
  return h;
}

RuleCounts reference_counts(const RulePopulation& pop, const Dataset& data, Want want) {
  RuleCounts out;
  out.reset(pop.size(), data.rows(), class_rows(data), want == Want::counts_and_coverage);
  if (want == Want::counts_and_coverage) std::fill(out.coverage.begin(), out.coverage.end(), 0u);
  for (std::size_t r = 0; r < pop.size(); ++r) {
    std::uint64_t prims = static_cast<std::uint64_t>(primitives(pop.rule(r)));
    out.gpops += prims * data.rows();
    for (std::size_t i = 0; i < data.rows(); ++i) {
      const bool c = evaluate(pop.rule(r), [&](std::uint32_t a) { return data.column(a)[i]; });
      if (!c) continue;
      ++out.covered[r * static_cast<std::size_t>(out.classes) + static_cast<std::size_t>(data.label(i))];
      if (want == Want::counts_and_coverage) out.coverage[r * out.words_per_rule + i / 32] |= 1u << (i % 32);
    }
  }
  return out;
}

std::string first_difference(const RuleCounts& a, const RuleCounts& b) {
  if (a.rules != b.rules || a.classes != b.classes || a.rows != b.rows)
    return "shape: " + std::to_string(a.rules) + " rules x " + std::to_string(a.classes) + " classes x " +
           std::to_string(a.rows) + " rows vs " + std::to_string(b.rules) + " x " + std::to_string(b.classes) + " x " +
           std::to_string(b.rows);
  for (std::size_t r = 0; r < a.rules; ++r)
    for (int c = 0; c < a.classes; ++c)
      if (a.covered_of(r, c) != b.covered_of(r, c))
        return "rule " + std::to_string(r) + " class " + std::to_string(c) + ": " + std::to_string(a.covered_of(r, c)) +
               " vs " + std::to_string(b.covered_of(r, c));
  if (a.coverage.empty() != b.coverage.empty()) return "coverage present in one result only";
  for (std::size_t r = 0; r < a.rules && !a.coverage.empty(); ++r)
    for (std::size_t i = 0; i < a.rows; ++i)
      if (a.covers(r, i) != b.covers(r, i))
        return "coverage rule " + std::to_string(r) + " row " + std::to_string(i) + ": " + std::to_string(a.covers(r, i)) +
               " vs " + std::to_string(b.covers(r, i));
  if (a.gpops != b.gpops) return "gpops " + std::to_string(a.gpops) + " vs " + std::to_string(b.gpops);
  return "";
}

}  // namespace gpudm::rules
