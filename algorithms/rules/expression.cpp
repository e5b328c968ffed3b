#include "algorithms/rules/expression.hpp"

#include <cmath>
#include <cstring>
#include <limits>
#include <sstream>

namespace gpudm::rules {

Schema Schema::of(const Dataset& d) {
  Schema s;
  s.attributes = d.cols();
  s.nominal.resize(d.cols());
  for (std::size_t c = 0; c < d.cols(); ++c) s.nominal[c] = d.attribute(c).is_nominal();
  s.classes = d.task() == Task::classification ? d.num_classes() : 0;
  return s;
}

namespace {
int primitives_of_word(std::uint32_t op) {
  if (is_comparison(op)) return 2 + operand_count(op);
  if (is_logical(op)) return 1;
  return 0;
}
}  // namespace

std::string check_expression(const std::uint32_t* tokens, std::size_t available, const Schema& schema,
                             ExpressionInfo* info, int max_words) {
  int depth = 0, max_depth = 0, prims = 0;
  std::size_t i = 0;
  for (;;) {
    if (i >= available) return "missing END (expression runs past its " + std::to_string(available) + " words)";
    if (static_cast<int>(i) >= max_words)
      return "longer than the device limit of " + std::to_string(max_words) + " words";
    const std::uint32_t w = tokens[i];
    const std::uint32_t op = opcode_of(w);
    // Built only on an error: this runs for every token of every evaluation (the CUDA
    // evaluator's "encode" phase), where a string per token cost ~0.3 us.
    const auto at = [&] { return "word " + std::to_string(i) + " (" + opcode_name(op) + "): "; };
    if (op >= kOpcodeCount) return "word " + std::to_string(i) + ": unknown opcode " + std::to_string(op);
    if (op == kEnd) {
      if (attribute_of(w) != 0) return at() + "END carries a non-zero attribute field";
      if (depth > 1) return at() + std::to_string(depth) + " values left on the stack (missing AND/OR)";
      break;
    }
    if (is_comparison(op)) {
      const std::uint32_t a = attribute_of(w);
      if (a >= schema.attributes)
        return at() + "attribute " + std::to_string(a) + " out of range (dataset has " +
               std::to_string(schema.attributes) + " attributes)";
      if (is_nominal_op(op) && !schema.nominal.empty() && !schema.nominal[a])
        return at() + "nominal operator on numeric attribute " + std::to_string(a);
      const int n = operand_count(op);
      if (i + static_cast<std::size_t>(n) >= available) return at() + "missing operand value";
      for (int k = 1; k <= n; ++k) {
        const float v = word_as_float(tokens[i + k]);
        if (std::isnan(v)) return at() + "operand value is NaN";
      }
      if ((op == kIn || op == kOut) && word_as_float(tokens[i + 1]) > word_as_float(tokens[i + 2]))
        return at() + "interval bounds reversed (lo > hi)";
      if (++depth > kMaxStack) return at() + "stack overflow (depth > " + std::to_string(kMaxStack) + ")";
      i += 1 + static_cast<std::size_t>(n);
    } else if (op == kNot) {
      if (attribute_of(w) != 0) return at() + "logical operator carries an attribute field";
      if (depth < 1) return at() + "stack underflow (NOT needs 1 operand)";
      ++i;
    } else {
      if (attribute_of(w) != 0) return at() + "logical operator carries an attribute field";
      if (depth < 2) return at() + "stack underflow (needs 2 operands, stack has " + std::to_string(depth) + ")";
      --depth;
      ++i;
    }
    prims += primitives_of_word(op);
    if (depth > max_depth) max_depth = depth;
  }
  if (info) {
    info->words = static_cast<int>(i) + 1;
    info->max_depth = max_depth;
    info->primitives = prims;
  }
  return "";
}

int primitives(const std::uint32_t* tokens) {
  int p = 0;
  for (std::size_t i = 0;;) {
    const std::uint32_t op = opcode_of(tokens[i]);
    if (op == kEnd) return p;
    p += primitives_of_word(op);
    i += 1 + static_cast<std::size_t>(operand_count(op));
  }
}

const char* opcode_name(std::uint32_t op) {
  static const char* names[] = {"END", ">", ">=", "<", "<=", "=", "!=", "IN", "OUT", "AND", "OR", "NOT"};
  return op < kOpcodeCount ? names[op] : "?";
}

namespace {
std::uint32_t opcode_from_name(const std::string& s) {
  for (std::uint32_t op = 1; op < kOpcodeCount; ++op)
    if (s == opcode_name(op)) return op;
  if (s == "==") return kEq;
  if (s == "<>") return kNe;
  if (s == "and") return kAnd;
  if (s == "or") return kOr;
  if (s == "not") return kNot;
  return kOpcodeCount;
}
}  // namespace

std::vector<std::uint32_t> parse_expression(const nlohmann::json& text, const std::string& where) {
  if (!text.is_array()) throw Error(where + ": antecedent must be a JSON array of tokens");
  std::vector<std::uint32_t> out;
  const std::size_t n = text.size();
  for (std::size_t i = 0; i < n;) {
    const auto& t = text[i];
    const std::string pos = where + ": token " + std::to_string(i);
    if (!t.is_string()) throw Error(pos + ": expected an operator string, got " + t.dump());
    const std::string s = t.get<std::string>();
    const std::uint32_t op = opcode_from_name(s);
    if (op == kOpcodeCount)
      throw Error(pos + ": unknown operator '" + s + "' (known: > >= < <= = != IN OUT AND OR NOT)");
    if (is_logical(op)) {
      out.push_back(make_word(op));
      ++i;
      continue;
    }
    const int k = operand_count(op);
    if (i + 1 + static_cast<std::size_t>(k) >= n)
      throw Error(pos + ": '" + s + "' needs an attribute index and " + std::to_string(k) + " value(s)");
    const auto& a = text[i + 1];
    if (!a.is_number_integer() || a.get<long long>() < 0 || a.get<long long>() > static_cast<long long>(kMaxAttribute) ||
        (a.is_number_unsigned() && a.get<std::uint64_t>() > kMaxAttribute))
      throw Error(pos + ": attribute index must be a non-negative integer, got " + a.dump());
    out.push_back(make_word(op, static_cast<std::uint32_t>(a.get<long long>())));
    for (int j = 0; j < k; ++j) {
      const auto& v = text[i + 2 + static_cast<std::size_t>(j)];
      if (!v.is_number() || !(std::fabs(v.get<double>()) <= std::numeric_limits<float>::max()))
        throw Error(pos + ": value of '" + s + "' must be a finite number within the float range, got " + v.dump());
      out.push_back(float_as_word(v.get<float>()));
    }
    i += 2 + static_cast<std::size_t>(k);
  }
  out.push_back(make_word(kEnd));
  return out;
}

nlohmann::json format_expression(const std::uint32_t* tokens) {
  nlohmann::json a = nlohmann::json::array();
  for (std::size_t i = 0;;) {
    const std::uint32_t w = tokens[i];
    const std::uint32_t op = opcode_of(w);
    if (op == kEnd) break;
    a.push_back(opcode_name(op));
    if (is_comparison(op)) {
      a.push_back(attribute_of(w));
      for (int k = 1; k <= operand_count(op); ++k) a.push_back(word_as_float(tokens[i + static_cast<std::size_t>(k)]));
    }
    i += 1 + static_cast<std::size_t>(operand_count(op));
  }
  return a;
}

namespace {

// Infix text of a valid expression; `cmp(word, a, b)` writes one comparison.
template <class Cmp>
std::string infix(const std::uint32_t* tokens, Cmp cmp) {
  std::vector<std::string> st;
  for (std::size_t i = 0;;) {
    const std::uint32_t w = tokens[i];
    const std::uint32_t op = opcode_of(w);
    if (op == kEnd) break;
    if (is_comparison(op)) {
      st.push_back(cmp(w, word_as_float(tokens[i + 1]), operand_count(op) == 2 ? word_as_float(tokens[i + 2]) : 0.0f));
    } else if (op == kNot) {
      if (st.empty()) return "<malformed>";
      st.back() = "NOT " + st.back();
    } else {
      if (st.size() < 2) return "<malformed>";
      std::string r = st.back();
      st.pop_back();
      st.back() = "(" + st.back() + " " + opcode_name(op) + " " + r + ")";
    }
    i += 1 + static_cast<std::size_t>(operand_count(op));
  }
  return st.empty() ? "TRUE" : st.back();
}

}  // namespace

std::string to_infix(const std::uint32_t* tokens) {
  return infix(tokens, [](std::uint32_t w, float a, float b) {
    std::ostringstream os;
    os << "x" << attribute_of(w) << ' ' << opcode_name(opcode_of(w)) << ' ' << a;
    if (operand_count(opcode_of(w)) == 2) os << ".." << b;
    return os.str();
  });
}

std::string to_infix(const std::uint32_t* tokens, const Dataset& d) {
  return infix(tokens, [&](std::uint32_t w, float a, float b) {
    const std::uint32_t attr = attribute_of(w), op = opcode_of(w);
    const bool known = attr < d.cols();
    const auto value = [&](float v) {
      if (known) {
        const Attribute& at = d.attribute(attr);
        if (at.is_nominal() && v >= 0 && std::floor(v) == v && static_cast<std::size_t>(v) < at.values.size())
          return at.values[static_cast<std::size_t>(v)];
      }
      std::ostringstream os;
      os << v;
      return os.str();
    };
    const std::string name = known ? d.attribute(attr).name : "x" + std::to_string(attr);
    if (operand_count(op) == 2) return name + " " + opcode_name(op) + " [" + value(a) + ", " + value(b) + "]";
    return name + " " + opcode_name(op) + " " + value(a);
  });
}

}  // namespace gpudm::rules
