#include "algorithms/gmt/train.hpp"

#include "algorithms/core/schema.hpp"

#include <algorithm>
#include <cstdio>
#include <cmath>
#include <limits>
#include <numeric>

#include "algorithms/core/progress.hpp"
#include "algorithms/core/stopwatch.hpp"
#include "algorithms/gmt/eval_steps.hpp"
#include "algorithms/gmt/leaf_stats.hpp"

namespace gpudm {
namespace gmt {

double PredictionBounds::clamp(int leaf, double v, bool* clamped) const {
  if (!on()) return v;
  const double v0 = v;
  const auto i = static_cast<std::size_t>(leaf);
  if (i < leaf_lo.size() && leaf_lo[i] <= leaf_hi[i]) {
    const double w = margin * (leaf_hi[i] - leaf_lo[i]);
    v = std::clamp(v, leaf_lo[i] - w, leaf_hi[i] + w);
  }
  const double w = margin * (hi - lo);
  v = std::clamp(v, lo - w, hi + w);
  if (clamped) *clamped = v != v0;
  return v;
}

PredictionBounds prediction_bounds(const Tree& tree, const Dataset& train, double margin) {
  PredictionBounds b;
  b.margin = margin;
  const double inf = std::numeric_limits<double>::infinity();
  b.leaf_lo.assign(static_cast<std::size_t>(tree.size()), inf);
  b.leaf_hi.assign(static_cast<std::size_t>(tree.size()), -inf);
  b.lo = inf;
  b.hi = -inf;
  for (std::size_t r = 0; r < train.rows(); ++r) {
    const double y = train.target(r);
    const auto l = static_cast<std::size_t>(tree.route(train, r));
    b.leaf_lo[l] = std::min(b.leaf_lo[l], y);
    b.leaf_hi[l] = std::max(b.leaf_hi[l], y);
    b.lo = std::min(b.lo, y);
    b.hi = std::max(b.hi, y);
  }
  if (train.rows() == 0) b.lo = b.hi = 0.0;
  return b;
}

double predict(const Tree& tree, const PredictionBounds* bounds, const Dataset& d, std::size_t row, bool* clamped) {
  if (clamped) *clamped = false;
  if (!bounds || !bounds->on()) return tree.predict(d, row);
  return bounds->clamp(tree.route(d, row), tree.predict(d, row), clamped);
}

NodeModels node_models(const Tree& tree, const Dataset& train, double rank_tol, double rows_per_param) {
  const auto nn = static_cast<std::size_t>(tree.size());
  NodeModels m;
  m.count.assign(nn, 0);
  m.attrs.assign(nn, {});
  m.coef.assign(nn, {});
  // Every node's rows (a row belongs to its leaf and each ancestor), in row order.
  std::vector<std::vector<std::size_t>> rows(nn);
  for (std::size_t r = 0; r < train.rows(); ++r)
    for (int i = tree.route(train, r); i >= 0; i = tree.node(i).parent) rows[static_cast<std::size_t>(i)].push_back(r);
  // The attributes a subtree uses (tests and leaf models), children before parents: the array is
  // breadth-first, so a reverse sweep meets every child before its parent.
  std::vector<std::vector<int>> used(nn);
  for (int i = tree.size() - 1; i >= 0; --i) {
    const TreeNode& n = tree.node(i);
    auto& u = used[static_cast<std::size_t>(i)];
    if (n.is_leaf()) {
      for (int a : tree.attrs(i)) u.push_back(a);
    } else {
      u = used[static_cast<std::size_t>(n.left)];
      u.insert(u.end(), used[static_cast<std::size_t>(n.right())].begin(), used[static_cast<std::size_t>(n.right())].end());
      u.push_back(n.attr);
      std::sort(u.begin(), u.end());
      u.erase(std::unique(u.begin(), u.end()), u.end());
    }
  }
  std::vector<double> s, coef;
  for (int i = 0; i < tree.size(); ++i) {
    const auto k = static_cast<std::size_t>(i);
    const auto& rs = rows[k];
    m.count[k] = static_cast<std::int64_t>(rs.size());
    if (tree.node(i).is_leaf()) {
      const auto c = tree.coef(i);
      if (!c.empty()) {
        m.attrs[k].assign(tree.attrs(i).begin(), tree.attrs(i).end());
        m.coef[k].assign(c.begin(), c.end());
      }
      continue;
    }
    if (rs.empty()) continue;  // (an internal node always has rows when its leaves have)
    // [1, x_a..., y] column-major, then the leaves' least squares and rank rule.
    const auto& a = used[k];
    const int p = static_cast<int>(a.size()) + 1;
    const auto n = static_cast<std::int64_t>(rs.size());
    s.assign(static_cast<std::size_t>(n) * static_cast<std::size_t>(p + 1), 0.0);
    for (std::int64_t t = 0; t < n; ++t) {
      const std::size_t r = rs[static_cast<std::size_t>(t)];
      s[static_cast<std::size_t>(t)] = 1.0;
      for (int j = 0; j < p - 1; ++j)
        s[static_cast<std::size_t>((j + 1) * n + t)] = static_cast<double>(train.at(r, static_cast<std::size_t>(a[static_cast<std::size_t>(j)])));
      s[static_cast<std::size_t>(p * n + t)] = static_cast<double>(train.target(r));
    }
    coef.assign(static_cast<std::size_t>(p), 0.0);
    double sse = 0.0;
    const int max_params =
        static_cast<int>(std::min<long long>(std::numeric_limits<int>::max(), leafstats::max_leaf_params(n, rows_per_param)));
    least_squares_rank_rule(s.data(), n, p, rank_tol, coef.data(), &sse, max_params);
    m.coef[k].push_back(coef[0]);
    for (int j = 0; j < p - 1; ++j)
      if (coef[static_cast<std::size_t>(j + 1)] != 0.0) {
        m.attrs[k].push_back(a[static_cast<std::size_t>(j)]);
        m.coef[k].push_back(coef[static_cast<std::size_t>(j + 1)]);
      }
  }
  return m;
}

Tree smoothed(const Tree& tree, const NodeModels& m, double k) {
  Tree out = tree;
  if (!(k > 0.0)) return out;
  GPUDM_REQUIRE(m.count.size() == static_cast<std::size_t>(tree.size()), "gmt: smoothing needs the models of this tree's nodes");
  int cols = 0;  // (m holds the leaves' own models too)
  for (const auto& a : m.attrs)
    for (int x : a) cols = std::max(cols, x + 1);
  std::vector<double> w(static_cast<std::size_t>(cols) + 1);
  auto add = [&](std::size_t node, double f) {
    const auto& c = m.coef[node];
    if (c.empty()) return;
    w[0] += f * c[0];
    for (std::size_t j = 0; j < m.attrs[node].size(); ++j) w[static_cast<std::size_t>(m.attrs[node][j]) + 1] += f * c[j + 1];
  };
  for (int l = 0; l < tree.size(); ++l) {
    if (!tree.node(l).is_leaf()) continue;
    std::fill(w.begin(), w.end(), 0.0);
    add(static_cast<std::size_t>(l), 1.0);
    for (int c = l, p = tree.node(l).parent; p >= 0; c = p, p = tree.node(p).parent) {
      const double n = static_cast<double>(m.count[static_cast<std::size_t>(c)]);
      for (double& v : w) v *= n / (n + k);
      add(static_cast<std::size_t>(p), k / (n + k));
    }
    std::vector<int> attrs;
    std::vector<double> coef{w[0]};
    for (int a = 0; a < cols; ++a)
      if (w[static_cast<std::size_t>(a) + 1] != 0.0) {
        attrs.push_back(a);
        coef.push_back(w[static_cast<std::size_t>(a) + 1]);
      }
    out.set_fit(l, attrs, coef, static_cast<int>(coef.size()));
  }
  return out;
}

Tree prediction_tree(const Tree& tree, const Dataset& train, double k, const EvalOptions& opt) {
  if (!(k > 0.0)) return tree;
  return smoothed(tree, node_models(tree, train, opt.rank_tol, opt.rows_per_param), k);
}

Scores score(const Tree& tree, const Dataset& d, double gross_threshold, const PredictionBounds* bounds) {
  Scores s;
  s.rows = static_cast<std::int64_t>(d.rows());
  double se = 0.0, ae = 0.0, se_rest = 0.0;
  for (std::size_t r = 0; r < d.rows(); ++r) {
    bool moved = false;
    const double e = static_cast<double>(d.target(r)) - predict(tree, bounds, d, r, &moved);
    s.clamped += moved ? 1 : 0;
    se += e * e;
    ae += std::fabs(e);
    s.max_abs_error = std::max(s.max_abs_error, std::fabs(e));
    if (gross_threshold > 0.0 && std::fabs(e) > gross_threshold) ++s.gross;
    else se_rest += e * e;
  }
  const double n = std::max<double>(1.0, static_cast<double>(d.rows()));
  s.rmse = std::sqrt(se / n);
  s.mae = ae / n;
  s.rmse_without_gross = std::sqrt(se_rest / std::max<double>(1.0, n - static_cast<double>(s.gross)));
  return s;
}

TrainResult train(const Dataset& data, const GmtParams& p, ModelTreeEvaluator& eval, bool progress) {
  TrainResult r;
  r.fitness_kind = p.fitness.kind;
  Stopwatch sw;
  { auto s = r.timer.scope(prepare_phase(eval)); eval.prepare(data); }
  GmtEA ea(p, eval, data, r.timer);
  std::unique_ptr<Progress> bar;
  if (progress) bar = std::make_unique<Progress>("gmt " + data.name() + " [" + eval.name() + "]", p.iterations, "it");
  r.best = ea.run([&](int it, const Individual&) {
    if (bar) bar->set(it);
  });
  if (bar) bar->finish();
  r.summary = ea.summary();
  r.thresholds_centered = center_thresholds(r.best.tree, data);
  r.seconds = sw.seconds();
  return r;
}

FittedModel fit_model(const Dataset& data, const std::vector<double>& impute, const GmtCase& c, std::uint64_t seed,
                      ModelTreeEvaluator& eval, const std::string& backend, bool progress) {
  GmtParams p = ea_params(c, data.rows());
  p.seed = seed;
  FittedModel f;
  f.result = train(data, p, eval, progress);
  f.root = prediction_tree(f.result.best.tree, data, c.smoothing, c.eval);
  f.bounds = prediction_bounds(f.root, data, c.clamp_margin);
  f.train = score(f.root, data, 0.0, &f.bounds);
  const nlohmann::ordered_json info = {{"backend", backend}, {"seed", seed}, {"iterations", f.result.summary.iterations},
                                       {"fitness", f.result.best.fitness}, {"train_rmse", f.train.rmse}};
  // The training means are stored even when training had no missing values: a scored row's
  // missing value then never depends on the other rows scored with it.
  f.model = model_json(f.root, data, info, impute.empty() ? column_means(data) : impute, &f.bounds, c.smoothing);
  return f;
}

std::vector<double> column_means(const Dataset& d) {
  std::vector<double> v(d.cols(), 0.0);
  for (std::size_t c = 0; c < d.cols(); ++c) {
    const float* col = d.column(c);
    double sum = 0.0;
    std::size_t n = 0;
    for (std::size_t r = 0; r < d.rows(); ++r)
      if (std::isfinite(col[r])) sum += col[r], ++n;
    v[c] = n ? sum / double(n) : 0.0;
  }
  return v;
}

std::vector<double> impute_missing(Dataset& d, const std::vector<double>* values) {
  if (values)
    GPUDM_REQUIRE(values->size() == d.cols(), "gmt: imputation values for " + std::to_string(values->size()) +
                                                  " attributes, dataset '" + d.name() + "' has " + std::to_string(d.cols()));
  const std::vector<double> v = values ? *values : column_means(d);
  for (std::size_t c = 0; c < d.cols(); ++c) {
    float* col = d.column(c);
    for (std::size_t r = 0; r < d.rows(); ++r)
      if (!std::isfinite(col[r])) col[r] = static_cast<float>(v[c]);
  }
  return v;
}

std::vector<double> model_imputation(const nlohmann::json& j) {
  std::vector<double> v;
  if (j.contains("impute_missing")) v = j["impute_missing"].get<std::vector<double>>();
  return v;
}

nlohmann::ordered_json model_json(const Tree& root, const Dataset& train, const nlohmann::ordered_json& info,
                                  const std::vector<double>& impute, const PredictionBounds* bounds, double smoothing) {
  nlohmann::ordered_json j;
  j["format"] = kModelFormat;
  j["version"] = kModelVersion;
  j["dataset"] = train.name();
  j["attributes"] = DataSchema::of(train).attributes_json();
  j["leaves"] = count_leaves(root);
  j["internal_nodes"] = count_internal(root);
  j["attributes_in_models"] = count_model_attributes(root);
  j["info"] = info;
  if (!impute.empty()) j["impute_missing"] = impute;
  if (smoothing > 0.0) j["smoothing"] = smoothing;
  j["tree"] = to_json(root, train);
  if (bounds && bounds->on()) {
    auto leaves = nlohmann::ordered_json::array();
    for (int i : root.preorder())
      if (root.node(i).is_leaf()) {
        const auto k = static_cast<std::size_t>(i);
        // a leaf no training row reached: null (only the overall range bounds it)
        if (bounds->leaf_lo[k] <= bounds->leaf_hi[k]) leaves.push_back({bounds->leaf_lo[k], bounds->leaf_hi[k]});
        else leaves.push_back(nullptr);
      }
    j["bounds"] = {{"margin", bounds->margin}, {"range", {bounds->lo, bounds->hi}}, {"leaves", leaves}};
  }
  return j;
}

PredictionBounds model_bounds(const nlohmann::json& j, const Tree& tree, const std::string& path) {
  PredictionBounds b;
  if (!j.contains("bounds")) return b;
  const auto& jb = j["bounds"];
  const std::string where = path + ": \"bounds\"";
  GPUDM_REQUIRE(jb.is_object() && jb.contains("margin") && jb["margin"].is_number() && jb.contains("range") &&
                    jb["range"].is_array() && jb["range"].size() == 2 && jb["range"][0].is_number() && jb["range"][1].is_number() &&
                    jb.contains("leaves") && jb["leaves"].is_array(),
                where + " needs \"margin\", \"range\": [lo, hi] and \"leaves\"");
  b.margin = jb["margin"].get<double>();
  b.lo = jb["range"][0].get<double>();
  b.hi = jb["range"][1].get<double>();
  GPUDM_REQUIRE(std::isfinite(b.margin) && std::isfinite(b.lo) && std::isfinite(b.hi) && b.lo <= b.hi,
                where + ": margin and range must be finite numbers with range[0] <= range[1]");
  const double inf = std::numeric_limits<double>::infinity();
  b.leaf_lo.assign(static_cast<std::size_t>(tree.size()), inf);
  b.leaf_hi.assign(static_cast<std::size_t>(tree.size()), -inf);
  std::size_t k = 0;
  for (int i : tree.preorder()) {
    if (!tree.node(i).is_leaf()) continue;
    GPUDM_REQUIRE(k < jb["leaves"].size(), where + ": fewer \"leaves\" entries than the tree has leaves");
    const auto& e = jb["leaves"][k++];
    if (e.is_null()) continue;
    GPUDM_REQUIRE(e.is_array() && e.size() == 2 && e[0].is_number() && e[1].is_number() && e[0].get<double>() <= e[1].get<double>(),
                  where + ": leaf " + std::to_string(k - 1) + " needs [lo, hi] with lo <= hi, or null");
    b.leaf_lo[static_cast<std::size_t>(i)] = e[0].get<double>();
    b.leaf_hi[static_cast<std::size_t>(i)] = e[1].get<double>();
  }
  GPUDM_REQUIRE(k == jb["leaves"].size(), where + ": more \"leaves\" entries than the tree has leaves");
  return b;
}

Tree model_from_json(const nlohmann::json& j, Dataset& d, const std::string& path) {
  GPUDM_REQUIRE(j.is_object() && j.value("format", "") == kModelFormat,
                path + ": not a gpudm GMT model (missing \"format\": \"gpudm-gmt-model\")");
  const auto version = j.contains("version") && j["version"].is_number_integer() ? j["version"].get<long long>() : 0;
  GPUDM_REQUIRE(version >= 1 && version <= kModelVersion,
                path + ": unsupported model version (this build reads versions 1 to " + std::to_string(kModelVersion) + ")");
  GPUDM_REQUIRE(j.contains("attributes") && j["attributes"].is_array() && j.contains("tree"),
                path + ": a model needs \"attributes\" and \"tree\"");
  // Version 1 lists names only; version 2 kinds and category names too. The data is re-coded to
  // the model by name (attributes in any order, categories by name, an unseen one missing).
  align_to_schema(DataSchema::from_json(j.at("attributes"), nullptr, path), d, path);
  return from_json(j.at("tree"), static_cast<int>(d.cols()), path);
}

void holdout_split(const Dataset& d, double test_fraction, std::uint64_t seed, Dataset* train, Dataset* test) {
  GPUDM_REQUIRE(test_fraction > 0 && test_fraction < 1, "gmt: test_fraction must be in (0, 1)");
  std::vector<std::size_t> idx(d.rows());
  std::iota(idx.begin(), idx.end(), std::size_t{0});
  Rng rng(seed ^ 0x5EEDF00Dull);
  for (std::size_t i = idx.size(); i > 1; --i) std::swap(idx[i - 1], idx[rng.below(i)]);
  const auto nt = static_cast<std::size_t>(std::llround(test_fraction * static_cast<double>(d.rows())));
  std::vector<std::size_t> te(idx.begin(), idx.begin() + static_cast<std::ptrdiff_t>(nt));
  std::vector<std::size_t> tr(idx.begin() + static_cast<std::ptrdiff_t>(nt), idx.end());
  std::sort(te.begin(), te.end());
  std::sort(tr.begin(), tr.end());
  *train = d.select(tr);
  *test = d.select(te);
  train->set_name(d.name() + "[train]");
  test->set_name(d.name() + "[test]");
}

std::vector<std::vector<std::size_t>> cv_folds(std::size_t rows, int folds, std::uint64_t seed) {
  GPUDM_REQUIRE(folds >= 2 && rows >= static_cast<std::size_t>(folds),
                "gmt: " + std::to_string(folds) + "-fold cross-validation needs K >= 2 and at least K rows (" + std::to_string(rows) + ")");
  std::vector<std::size_t> idx(rows);
  std::iota(idx.begin(), idx.end(), std::size_t{0});
  Rng rng(seed ^ 0xC0FFEEull);
  for (std::size_t i = idx.size(); i > 1; --i) std::swap(idx[i - 1], idx[rng.below(i)]);
  std::vector<std::vector<std::size_t>> out(static_cast<std::size_t>(folds));
  for (std::size_t i = 0; i < idx.size(); ++i) out[i % static_cast<std::size_t>(folds)].push_back(idx[i]);
  for (auto& f : out) std::sort(f.begin(), f.end());
  return out;
}

std::vector<std::size_t> rows_not_in(const std::vector<std::size_t>& fold, std::size_t rows) {
  std::vector<std::size_t> out;
  out.reserve(rows - std::min(rows, fold.size()));
  std::size_t j = 0;
  for (std::size_t r = 0; r < rows; ++r) {
    while (j < fold.size() && fold[j] < r) ++j;
    if (j < fold.size() && fold[j] == r) continue;
    out.push_back(r);
  }
  return out;
}

std::string rows_fingerprint(const std::vector<std::size_t>& rows) {
  std::uint64_t h = 0xcbf29ce484222325ull;
  for (std::size_t r : rows)
    for (int b = 0; b < 8; ++b) {
      h ^= (static_cast<std::uint64_t>(r) >> (8 * b)) & 0xFFu;
      h *= 0x100000001b3ull;
    }
  char hex[17];
  std::snprintf(hex, sizeof hex, "%016llx", static_cast<unsigned long long>(h));
  return hex;
}

}  // namespace gmt
}  // namespace gpudm
