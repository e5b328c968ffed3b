#pragma once
// The paper's four steps as plain C++ over a row range of one individual, shared by the
// sequential and OpenMP backends (OpenMP pragmas stay in backends/openmp/). Codes are the
// coverage kernel's outcomes (rules/confusion.hpp), one byte per (rule, row), laid out
// [rule][row - row_begin] with stride `stride`.
#include <cstdint>

#include "algorithms/core/dataset.hpp"
#include "algorithms/pittsburgh/population.hpp"
#include "algorithms/rules/confusion.hpp"
#include "algorithms/rules/opcodes.hpp"

namespace gpudm::pittsburgh::cpu {

// Rule coverage: interprets every rule of `ind` on rows [b, e).
inline void coverage(const FlatPopulation& f, const Dataset& d, std::size_t ind, std::size_t b, std::size_t e,
                     std::uint8_t* codes, std::size_t stride) {
  const std::int32_t* labels = d.labels().data();
  const std::uint32_t r0 = f.individual_rule_begin[ind], r1 = f.individual_rule_begin[ind + 1];
  for (std::uint32_t r = r0; r < r1; ++r) {
    const std::uint32_t* tokens = f.words.data() + f.rule_word_begin[r];
    const std::int32_t cons = f.rule_consequent[r];
    std::uint8_t* out = codes + static_cast<std::size_t>(r - r0) * stride;
    for (std::size_t row = b; row < e; ++row) {
      const bool covers = rules::evaluate(tokens, [&](std::uint32_t a) { return d.column(a)[row]; });
      out[row - b] = rules::outcome(covers, labels[row] == cons);
    }
  }
}

// Rule fitness (counting part): adds the outcome counts of rows [b, e) to m[rule - first].
inline void count_rules(const FlatPopulation& f, std::size_t ind, const std::uint8_t* codes, std::size_t stride,
                        std::size_t n, rules::ConfusionMatrix* m) {
  const std::uint32_t nr = f.rules_of(ind);
  for (std::uint32_t r = 0; r < nr; ++r) {
    const std::uint8_t* c = codes + static_cast<std::size_t>(r) * stride;
    std::uint32_t k[4] = {0, 0, 0, 0};
    for (std::size_t i = 0; i < n; ++i) ++k[c[i] & 3u];
    m[r].tp += k[rules::kTP];
    m[r].tn += k[rules::kTN];
    m[r].fp += k[rules::kFP];
    m[r].fn += k[rules::kFN];
  }
}

// Rule-set classification: decision list over the coverage codes; 1 = correctly classified.
inline void classify(const FlatPopulation& f, const Dataset& d, std::size_t ind, const std::uint8_t* codes,
                     std::size_t stride, std::size_t b, std::size_t e, std::uint8_t* correct) {
  const std::uint32_t nr = f.rules_of(ind);
  const std::int32_t def = f.default_class[ind];
  const std::int32_t* labels = d.labels().data();
  for (std::size_t row = b; row < e; ++row) {
    std::uint8_t ok = labels[row] == def;
    for (std::uint32_t r = 0; r < nr; ++r) {
      const std::uint8_t c = codes[static_cast<std::size_t>(r) * stride + (row - b)];
      if (c == rules::kTP) { ok = 1; break; }
      if (c == rules::kFP) { ok = 0; break; }
    }
    correct[row - b] = ok;
  }
}

// Rule-set fitness (counting part).
inline std::uint32_t count_correct(const std::uint8_t* correct, std::size_t n) {
  std::uint32_t s = 0;
  for (std::size_t i = 0; i < n; ++i) s += correct[i];
  return s;
}

}  // namespace gpudm::pittsburgh::cpu
