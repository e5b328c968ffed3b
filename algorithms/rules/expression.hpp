#pragma once
// Host-side companions of opcodes.hpp: validation of encoded expressions against a dataset's
// schema (before any kernel runs, so interpreters never meet a malformed rule), the GPops
// count of an expression, and its JSON text form.
//
// JSON text form of an antecedent (the population format, docs in algorithms/pittsburgh/
// population.hpp): a flat array read left to right exactly like the encoding, comparisons in
// prefix with their attribute index and value(s), logical operators in postfix:
//   [">", 0, 5.1, "<=", 2, 1.9, "AND", "=", 4, 2, "NOT", "OR"]
//   ["IN", 3, 0.1, 0.9]          interval lo <= x <= hi ("OUT": x < lo or x > hi)
//   []                            empty antecedent: covers every instance
// END is implicit (appended by the parser). Operators: > >= < <= = != IN OUT AND OR NOT.
//
// GPops (the paper's "primitives"; stated once here and in every results JSON): a comparison
// counts its operator, its attribute and its value(s) (3, or 4 for IN/OUT: terminals count),
// a logical operator counts 1, END counts 0. GPops of a run = sum over the rules interpreted
// of primitives(rule) x instances.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "algorithms/core/dataset.hpp"
#include "algorithms/rules/opcodes.hpp"

namespace gpudm::rules {

// Longest expression (words, END included) any backend accepts; the CUDA fast path stages
// whole individuals in shared memory, so the bound is part of the device limits.
inline constexpr int kMaxExpressionWords = 1024;

// What validation needs to know about the data.
struct Schema {
  std::size_t attributes = 0;
  std::vector<bool> nominal;  // per attribute
  int classes = 0;            // 0: no class check
  static Schema of(const Dataset& d);
};

struct ExpressionInfo {
  int words = 0;       // including END
  int max_depth = 0;   // deepest boolean stack reached
  int primitives = 0;  // GPops per instance (see above)
};

// Checks the END-terminated expression starting at tokens[0] with `available` words in the
// buffer. Returns "" when valid, else a message without context ("word 3: attribute 7 out of
// range (dataset has 4 attributes)"). Fills `info` when valid.
std::string check_expression(const std::uint32_t* tokens, std::size_t available, const Schema& schema,
                             ExpressionInfo* info = nullptr, int max_words = kMaxExpressionWords);

// Primitives of one valid expression (GPops per instance).
int primitives(const std::uint32_t* tokens);

const char* opcode_name(std::uint32_t op);  // ">", "AND", ... ; "?" for unknown
// Parses the JSON text form (END appended). Throws gpudm::Error prefixed with `where`.
std::vector<std::uint32_t> parse_expression(const nlohmann::json& text, const std::string& where);
// The JSON text form of a valid expression.
nlohmann::json format_expression(const std::uint32_t* tokens);
// Human-readable infix-ish string for logs ("(x0 > 5.1 AND x2 <= 1.9)").
std::string to_infix(const std::uint32_t* tokens);
// The same with the dataset's attribute names and nominal value names
// ("(petal_width <= 0.6 AND NOT color = red)", intervals "x IN [lo, hi]").
std::string to_infix(const std::uint32_t* tokens, const Dataset& names);

}  // namespace gpudm::rules
