#include "algorithms/subtree/tree.hpp"

#include <algorithm>
#include <cmath>
#include <sstream>

#include "algorithms/core/dataset.hpp"
#include "algorithms/core/error.hpp"
#include "algorithms/core/rng.hpp"

namespace gpudm::subtree {

int depth_for_size(long long nodes) {
  // In 64 bits: nodes_for_depth(30) overflows an int (UBSan in the asan job).
  for (int d = 0; d <= 30; ++d)
    if ((2LL << d) - 1 == nodes) return d;
  return -1;
}

namespace {

float random_value(const Dataset& data, std::size_t col, Rng& rng) {
  if (data.rows() == 0) return 0.0f;
  for (int tries = 0; tries < 16; ++tries) {
    const float v = data.at(rng.below(data.rows()), col);
    if (!std::isnan(v)) return v;
  }
  return 0.0f;  // a column of missing values: any threshold gives empty coverage
}

Node random_leaf(const Dataset& data, Rng& rng, const GeneratorOptions& o) {
  const auto col = static_cast<std::uint32_t>(rng.below(data.cols()));
  Node n;
  const Attribute& attr = data.attribute(col);
  if (attr.is_nominal()) {
    const std::uint32_t op = rng.bernoulli(0.5) ? rules::kEq : rules::kNe;
    n.word = rules::make_word(op, col);
    n.a = attr.values.empty() ? random_value(data, col, rng) : static_cast<float>(rng.below(attr.values.size()));
    return n;
  }
  if (rng.bernoulli(o.interval_probability)) {
    const std::uint32_t op = rng.bernoulli(0.5) ? rules::kIn : rules::kOut;
    float lo = random_value(data, col, rng), hi = random_value(data, col, rng);
    if (lo > hi) std::swap(lo, hi);
    n.word = rules::make_word(op, col);
    n.a = lo;
    n.b = hi;
    return n;
  }
  static constexpr std::uint32_t kOrdering[] = {rules::kGt, rules::kGe, rules::kLt, rules::kLe};
  n.word = rules::make_word(kOrdering[rng.below(4)], col);
  n.a = random_value(data, col, rng);
  return n;
}

}  // namespace

Population generate_population(const Dataset& data, int trees, int depth, const Rng& rng,
                               const GeneratorOptions& options) {
  GPUDM_REQUIRE(trees >= 1, "subtree: population must be >= 1 (got " + std::to_string(trees) + ")");
  GPUDM_REQUIRE(depth >= 1 && depth <= kMaxDepth,
                "subtree: tree depth must be in [1, " + std::to_string(kMaxDepth) + "] (got " + std::to_string(depth) + ")");
  GPUDM_REQUIRE(data.cols() >= 1, "subtree: dataset '" + data.name() + "' has no attributes");
  Population pop;
  pop.depth = depth;
  pop.trees = trees;
  pop.nodes.resize(static_cast<std::size_t>(trees) * nodes_for_depth(depth));
  const int internal = leaves_for_depth(depth) - 1;
  for (int t = 0; t < trees; ++t) {
    Rng r = rng.split(static_cast<std::uint64_t>(t));
    Node* nodes = pop.tree(t);
    for (int i = 0; i < internal; ++i)
      nodes[i].word = rules::make_word(r.bernoulli(options.and_probability) ? rules::kAnd : rules::kOr);
    for (int i = internal; i < pop.nodes_per_tree(); ++i) nodes[i] = random_leaf(data, r, options);
  }
  return pop;
}

void validate_population(const Population& pop, const Dataset& data) {
  const auto where = [](int t, int i) { return "subtree: tree " + std::to_string(t) + " node " + std::to_string(i) + ": "; };
  GPUDM_REQUIRE(pop.depth >= 1 && pop.depth <= kMaxDepth, "subtree: tree depth " + std::to_string(pop.depth) +
                                                              " is outside [1, " + std::to_string(kMaxDepth) + "]");
  GPUDM_REQUIRE(pop.trees >= 1, "subtree: empty population");
  GPUDM_REQUIRE(pop.nodes.size() == static_cast<std::size_t>(pop.trees) * pop.nodes_per_tree(),
                "subtree: population holds " + std::to_string(pop.nodes.size()) + " nodes, expected " +
                    std::to_string(pop.trees) + " trees x " + std::to_string(pop.nodes_per_tree()));
  const int internal = pop.leaves_per_tree() - 1;
  for (int t = 0; t < pop.trees; ++t) {
    const Node* nodes = pop.tree(t);
    for (int i = 0; i < pop.nodes_per_tree(); ++i) {
      const std::uint32_t op = rules::opcode_of(nodes[i].word);
      if (i < internal) {
        GPUDM_REQUIRE(op == rules::kAnd || op == rules::kOr,
                      where(t, i) + "internal node has opcode " + std::to_string(op) + ", expected AND or OR");
        continue;
      }
      GPUDM_REQUIRE(rules::is_comparison(op), where(t, i) + "leaf has opcode " + std::to_string(op) + ", expected a comparison");
      const std::uint32_t attr = rules::attribute_of(nodes[i].word);
      GPUDM_REQUIRE(attr < data.cols(), where(t, i) + "attribute " + std::to_string(attr) + " is out of range (dataset '" +
                                            data.name() + "' has " + std::to_string(data.cols()) + " attributes)");
      GPUDM_REQUIRE(!rules::is_nominal_op(op) || data.attribute(attr).is_nominal(),
                    where(t, i) + "nominal operator on numeric attribute " + std::to_string(attr) + " ('" +
                        data.attribute(attr).name + "')");
    }
  }
}

namespace {
const char* op_text(std::uint32_t op) {
  switch (op) {
    case rules::kGt: return ">";
    case rules::kGe: return ">=";
    case rules::kLt: return "<";
    case rules::kLe: return "<=";
    case rules::kEq: return "==";
    case rules::kNe: return "!=";
    case rules::kIn: return "IN";
    case rules::kOut: return "OUT";
    case rules::kAnd: return "AND";
    case rules::kOr: return "OR";
    default: return "?";
  }
}
void infix(const Population& pop, const Node* nodes, int i, std::ostringstream& os) {
  const int internal = pop.leaves_per_tree() - 1;
  const Node& n = nodes[i];
  const std::uint32_t op = rules::opcode_of(n.word);
  if (i < internal) {
    os << '(';
    infix(pop, nodes, 2 * i + 1, os);
    os << ' ' << op_text(op) << ' ';
    infix(pop, nodes, 2 * i + 2, os);
    os << ')';
  } else if (op == rules::kIn || op == rules::kOut) {
    os << 'x' << rules::attribute_of(n.word) << ' ' << op_text(op) << " [" << n.a << ", " << n.b << ']';
  } else {
    os << 'x' << rules::attribute_of(n.word) << ' ' << op_text(op) << ' ' << n.a;
  }
}
}  // namespace

std::string to_infix(const Population& pop, int t) {
  std::ostringstream os;
  os.precision(9);
  infix(pop, pop.tree(t), 0, os);
  return os.str();
}

}  // namespace gpudm::subtree
