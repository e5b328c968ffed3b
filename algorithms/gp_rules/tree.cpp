#include "algorithms/gp_rules/tree.hpp"

#include <algorithm>
#include <cmath>
#include <functional>

#include "algorithms/core/error.hpp"
#include "algorithms/rules/opcodes.hpp"

namespace gpudm::gp_rules {

namespace r = ::gpudm::rules;

namespace {

bool contains(const std::vector<std::uint8_t>& v, std::uint32_t op) {
  return std::find(v.begin(), v.end(), static_cast<std::uint8_t>(op)) != v.end();
}
int arity(Kind k) { return k == Kind::cmp ? 0 : (k == Kind::not_ ? 1 : 2); }

}  // namespace

Grammar Grammar::falco(int max_depth) {
  Grammar g;
  g.max_depth = max_depth;
  g.numeric_ops = {r::kLt, r::kLe, r::kGt, r::kGe, r::kIn, r::kOut};
  g.nominal_ops = {r::kEq};
  return g;
}
Grammar Grammar::tan(int max_depth) {
  Grammar g = falco(max_depth);
  g.use_or = false;
  g.nominal_ops = {r::kEq, r::kNe};
  return g;
}
Grammar Grammar::bojarczuk(int max_depth, int max_nodes) {
  Grammar g;
  g.max_depth = max_depth;
  g.max_nodes = max_nodes;
  g.dnf = true;
  g.numeric_ops = {r::kLt, r::kLe, r::kGt, r::kGe};
  g.nominal_ops = {r::kEq, r::kNe};
  return g;
}

bool Grammar::allows(Kind child, Kind parent, bool root) const {
  if (child == Kind::or_ && !use_or) return false;
  if (child == Kind::not_ && !use_not) return false;
  if (!dnf || root) return true;
  switch (parent) {
    case Kind::or_: return true;
    case Kind::and_: return child != Kind::or_;
    case Kind::not_: return child == Kind::cmp;
    case Kind::cmp: return false;
  }
  return false;
}

int node_size(const Node& n) {
  if (n.kind != Kind::cmp) return 1;
  return 2 + r::operand_count(n.op);
}

std::size_t subtree_end(const Tree& t, std::size_t i) {
  std::size_t need = 1;
  while (need > 0) {
    GPUDM_REQUIRE(i < t.size(), "gp_rules: truncated tree");
    need += static_cast<std::size_t>(arity(t[i].kind)) - 1;
    ++i;
  }
  return i;
}

Shape::Shape(const Tree& t)
    : parent(t.size(), -1), level(t.size(), 1), sub_depth(t.size(), 0), sub_size(t.size(), 0), end(t.size(), 0) {
  const std::function<std::size_t(std::size_t, int, int)> walk = [&](std::size_t i, int par, int lev) -> std::size_t {
    GPUDM_REQUIRE(i < t.size(), "gp_rules: truncated tree");
    parent[i] = par;
    level[i] = lev;
    const Node& n = t[i];
    std::size_t e = i + 1;
    int d = n.kind == Kind::cmp ? 2 : 1, s = node_size(n);
    for (int c = 0; c < arity(n.kind); ++c) {
      const std::size_t child = e;
      e = walk(child, static_cast<int>(i), lev + 1);
      d = std::max(d, 1 + sub_depth[child]);
      s += sub_size[child];
    }
    sub_depth[i] = d;
    sub_size[i] = s;
    end[i] = e;
    return e;
  };
  if (!t.empty()) walk(0, -1, 1);
}

int depth(const Tree& t) { return t.empty() ? 0 : Shape(t).sub_depth[0]; }
int size(const Tree& t) {
  int s = 0;
  for (const Node& n : t) s += node_size(n);
  return s;
}

std::vector<std::uint32_t> encode(const Tree& t) {
  std::vector<std::uint32_t> out;
  out.reserve(t.size() * 3 + 1);
  const std::function<std::size_t(std::size_t)> emit = [&](std::size_t i) -> std::size_t {
    const Node& n = t[i];
    switch (n.kind) {
      case Kind::cmp:
        out.push_back(r::make_word(n.op, n.attr));
        out.push_back(r::float_as_word(n.a));
        if (r::operand_count(n.op) == 2) out.push_back(r::float_as_word(n.b));
        return i + 1;
      case Kind::not_: {
        const std::size_t e = emit(i + 1);
        out.push_back(r::make_word(r::kNot));
        return e;
      }
      default: {
        const std::size_t e = emit(emit(i + 1));
        out.push_back(r::make_word(n.kind == Kind::and_ ? r::kAnd : r::kOr));
        return e;
      }
    }
  };
  if (!t.empty()) emit(0);
  out.push_back(r::make_word(r::kEnd));
  return out;
}

std::string check(const Tree& t, const Grammar& g, const rules::Schema& schema) {
  if (t.empty()) return "empty tree";
  std::string why;
  const std::function<std::size_t(std::size_t, Kind, bool)> walk = [&](std::size_t i, Kind parent, bool root) -> std::size_t {
    if (!why.empty()) return t.size();
    if (i >= t.size()) {
      why = "truncated: a node is missing a child";
      return t.size();
    }
    const Node& n = t[i];
    const std::string at = "node " + std::to_string(i) + ": ";
    if (static_cast<int>(n.kind) > static_cast<int>(Kind::cmp)) {
      why = at + "unknown kind";
      return t.size();
    }
    if (!g.allows(n.kind, parent, root)) {
      why = at + "not allowed here by the syntax";
      return t.size();
    }
    if (n.kind == Kind::cmp) {
      if (!r::is_comparison(n.op)) why = at + "comparison with a non-comparison opcode " + std::to_string(n.op);
      else if (n.attr >= schema.attributes) why = at + "attribute " + std::to_string(n.attr) + " out of range";
      else {
        const bool nominal = !schema.nominal.empty() && schema.nominal[n.attr];
        if (!contains(nominal ? g.nominal_ops : g.numeric_ops, n.op))
          why = at + std::string(r::opcode_name(n.op)) + " is not allowed on " + (nominal ? "nominal" : "numeric") +
                " attribute " + std::to_string(n.attr);
        else if (std::isnan(n.a) || (r::operand_count(n.op) == 2 && std::isnan(n.b))) why = at + "NaN value";
        else if (r::operand_count(n.op) == 2 && n.a > n.b) why = at + "interval bounds reversed";
      }
      return i + 1;
    }
    std::size_t e = i + 1;
    for (int c = 0; c < arity(n.kind); ++c) e = walk(e, n.kind, false);
    return e;
  };
  const std::size_t e = walk(0, Kind::cmp, true);
  if (!why.empty()) return why;
  if (e != t.size()) return "trailing nodes after the root's subtree (" + std::to_string(t.size() - e) + ")";
  const int d = depth(t), s = size(t);
  if (d > g.max_depth) return "depth " + std::to_string(d) + " exceeds the limit " + std::to_string(g.max_depth);
  if (g.max_nodes > 0 && s > g.max_nodes)
    return "size " + std::to_string(s) + " exceeds the limit " + std::to_string(g.max_nodes);
  const std::vector<std::uint32_t> tokens = encode(t);
  const std::string enc = r::check_expression(tokens.data(), tokens.size(), schema);
  if (!enc.empty()) return "encoding: " + enc;
  return "";
}

// ---- terminals and creation ----

Terminals::Terminals(const Dataset& data, const Grammar& g) : data_(&data), g_(g) {
  for (std::uint32_t c = 0; c < data.cols(); ++c) {
    if (data.attribute(c).is_nominal()) {
      if (!g.nominal_ops.empty()) nominal_.push_back(c);
    } else if (!g.numeric_ops.empty()) {
      numeric_.push_back(c);
    }
  }
  GPUDM_REQUIRE(!numeric_.empty() || !nominal_.empty(),
                "gp_rules: dataset '" + data.name() + "' has no attribute the algorithm's comparisons apply to");
}

float Terminals::sample_value(Rng& rng, std::uint32_t attr) const {
  const std::size_t n = data_->rows();
  if (n == 0) return 0.0f;
  const float* col = data_->column(attr);
  for (int tries = 0; tries < 16; ++tries) {
    const float v = col[rng.below(n)];
    if (!std::isnan(v)) return v;
  }
  return 0.0f;  // a (nearly) all-missing attribute: any constant is as good
}

Node Terminals::random_comparison(Rng& rng) const {
  Node n;
  n.kind = Kind::cmp;
  const std::size_t total = numeric_.size() + nominal_.size();
  const std::size_t k = rng.below(total);
  n.attr = k < numeric_.size() ? numeric_[k] : nominal_[k - numeric_.size()];
  const auto& ops = k < numeric_.size() ? g_.numeric_ops : g_.nominal_ops;
  n.op = ops[rng.below(ops.size())];
  n.a = sample_value(rng, n.attr);
  if (r::operand_count(n.op) == 2) {
    n.b = sample_value(rng, n.attr);
    if (n.a > n.b) std::swap(n.a, n.b);
  }
  return n;
}

namespace {

void grow_into(Rng& rng, const Terminals& terms, int budget, bool full, Kind parent, bool root, Tree& out) {
  const Grammar& g = terms.grammar();
  Kind funcs[3];
  int nf = 0;
  if (budget >= 3)
    for (Kind k : {Kind::and_, Kind::or_, Kind::not_})
      if (g.allows(k, parent, root)) funcs[nf++] = k;
  Kind pick = Kind::cmp;
  if (full) pick = nf > 0 ? funcs[rng.below(static_cast<std::uint64_t>(nf))] : Kind::cmp;
  else {
    const std::uint64_t c = rng.below(static_cast<std::uint64_t>(nf + 1));
    pick = c < static_cast<std::uint64_t>(nf) ? funcs[c] : Kind::cmp;
  }
  if (pick == Kind::cmp) {
    out.push_back(terms.random_comparison(rng));
    return;
  }
  Node n;
  n.kind = pick;
  out.push_back(n);
  for (int c = 0; c < arity(pick); ++c) grow_into(rng, terms, budget - 1, full, pick, false, out);
}

}  // namespace

Tree random_tree(Rng& rng, const Terminals& terms, int depth_limit, bool full) {
  Tree t;
  grow_into(rng, terms, std::max(2, depth_limit), full, Kind::cmp, true, t);
  return t;
}

std::vector<Tree> ramped_half_and_half(Rng& rng, const Terminals& terms, std::size_t n) {
  const Grammar& g = terms.grammar();
  const int lo = std::min(3, g.max_depth), hi = std::max(lo, g.max_depth);
  const int span = hi - lo + 1;
  std::vector<Tree> pop;
  pop.reserve(n);
  for (std::size_t i = 0; i < n; ++i) {
    const int d = lo + static_cast<int>(i % static_cast<std::size_t>(span));
    const bool full = (i / static_cast<std::size_t>(span)) % 2 == 0;
    Tree t = random_tree(rng, terms, d, full);
    for (int tries = 0; g.max_nodes > 0 && size(t) > g.max_nodes && tries < 16; ++tries) t = random_tree(rng, terms, d, false);
    if (g.max_nodes > 0 && size(t) > g.max_nodes) t = random_tree(rng, terms, 2, false);  // one comparison
    pop.push_back(std::move(t));
  }
  return pop;
}

// ---- operators ----

bool crossover(Rng& rng, const Grammar& g, const Tree& a, const Tree& b, Tree& child_a, Tree& child_b) {
  const Shape sa(a), sb(b);
  const int size_a = sa.sub_size.empty() ? 0 : sa.sub_size[0], size_b = sb.sub_size.empty() ? 0 : sb.sub_size[0];
  const auto parent_kind = [](const Tree& t, const Shape& s, std::size_t i) {
    return s.parent[i] < 0 ? Kind::cmp : t[static_cast<std::size_t>(s.parent[i])].kind;
  };
  std::vector<std::size_t> js;
  for (int tries = 0; tries < 8 && !a.empty() && !b.empty(); ++tries) {
    const std::size_t i = rng.below(a.size());
    const Kind pi = parent_kind(a, sa, i);
    const bool ri = sa.parent[i] < 0;
    js.clear();
    for (std::size_t j = 0; j < b.size(); ++j) {
      const bool rj = sb.parent[j] < 0;
      if (!g.allows(b[j].kind, pi, ri) || !g.allows(a[i].kind, parent_kind(b, sb, j), rj)) continue;
      if (sa.level[i] - 1 + sb.sub_depth[j] > g.max_depth || sb.level[j] - 1 + sa.sub_depth[i] > g.max_depth) continue;
      if (g.max_nodes > 0 && (size_a - sa.sub_size[i] + sb.sub_size[j] > g.max_nodes ||
                              size_b - sb.sub_size[j] + sa.sub_size[i] > g.max_nodes))
        continue;
      js.push_back(j);
    }
    if (js.empty()) continue;
    const std::size_t j = js[rng.below(js.size())];
    child_a.assign(a.begin(), a.begin() + static_cast<std::ptrdiff_t>(i));
    child_a.insert(child_a.end(), b.begin() + static_cast<std::ptrdiff_t>(j), b.begin() + static_cast<std::ptrdiff_t>(sb.end[j]));
    child_a.insert(child_a.end(), a.begin() + static_cast<std::ptrdiff_t>(sa.end[i]), a.end());
    child_b.assign(b.begin(), b.begin() + static_cast<std::ptrdiff_t>(j));
    child_b.insert(child_b.end(), a.begin() + static_cast<std::ptrdiff_t>(i), a.begin() + static_cast<std::ptrdiff_t>(sa.end[i]));
    child_b.insert(child_b.end(), b.begin() + static_cast<std::ptrdiff_t>(sb.end[j]), b.end());
    return true;
  }
  child_a = a;
  child_b = b;
  return false;
}

namespace {

// Comparisons of the same arity and attribute type as `op` that the grammar allows.
std::vector<std::uint8_t> op_alternatives(const Grammar& g, std::uint8_t op, bool nominal) {
  std::vector<std::uint8_t> out;
  for (std::uint8_t o : nominal ? g.nominal_ops : g.numeric_ops)
    if (o != op && r::operand_count(o) == r::operand_count(op)) out.push_back(o);
  return out;
}

enum class Part : std::uint8_t { op, attr, value_a, value_b, logical };

}  // namespace

bool mutate(Rng& rng, const Terminals& terms, Tree& t) {
  const Grammar& g = terms.grammar();
  if (t.empty()) return false;
  const Shape s(t);
  struct Pos {
    std::size_t node;
    Part part;
  };
  std::vector<Pos> pos;
  for (std::size_t i = 0; i < t.size(); ++i) {
    const Node& n = t[i];
    if (n.kind == Kind::cmp) {
      const bool nominal = terms.nominal(n.attr);
      if (!op_alternatives(g, n.op, nominal).empty()) pos.push_back({i, Part::op});
      if ((nominal ? terms.nominal_attrs() : terms.numeric()).size() >= 2) pos.push_back({i, Part::attr});
      pos.push_back({i, Part::value_a});
      if (r::operand_count(n.op) == 2) pos.push_back({i, Part::value_b});
    } else if (n.kind != Kind::not_) {
      // AND <-> OR when the other is allowed both in this position and above the children.
      const Kind other = n.kind == Kind::and_ ? Kind::or_ : Kind::and_;
      const Kind pk = s.parent[i] < 0 ? Kind::cmp : t[static_cast<std::size_t>(s.parent[i])].kind;
      bool ok = g.allows(other, pk, s.parent[i] < 0);
      const std::size_t c1 = i + 1, c2 = s.end[c1];
      ok = ok && g.allows(t[c1].kind, other, false) && g.allows(t[c2].kind, other, false);
      if (ok) pos.push_back({i, Part::logical});
    }
  }
  if (pos.empty()) return false;
  const Pos p = pos[rng.below(pos.size())];
  Node& n = t[p.node];
  switch (p.part) {
    case Part::logical: n.kind = n.kind == Kind::and_ ? Kind::or_ : Kind::and_; break;
    case Part::op: {
      const auto alt = op_alternatives(g, n.op, terms.nominal(n.attr));
      n.op = alt[rng.below(alt.size())];
      break;
    }
    case Part::attr: {
      const auto& same = terms.nominal(n.attr) ? terms.nominal_attrs() : terms.numeric();
      std::uint32_t a = n.attr;
      while (a == n.attr) a = same[rng.below(same.size())];
      n.attr = a;
      n.a = terms.sample_value(rng, a);
      if (r::operand_count(n.op) == 2) n.b = terms.sample_value(rng, a);
      break;
    }
    case Part::value_a: n.a = terms.sample_value(rng, n.attr); break;
    case Part::value_b: n.b = terms.sample_value(rng, n.attr); break;
  }
  if (n.kind == Kind::cmp && r::operand_count(n.op) == 2 && n.a > n.b) std::swap(n.a, n.b);
  return true;
}

}  // namespace gpudm::gp_rules
