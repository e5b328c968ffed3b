#include "algorithms/gmt/train.hpp"

#include "algorithms/core/schema.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

#include "algorithms/core/progress.hpp"
#include "algorithms/core/stopwatch.hpp"

namespace gpudm {
namespace gmt {

Scores score(const Tree& tree, const Dataset& d, double gross_threshold) {
  Scores s;
  s.rows = static_cast<std::int64_t>(d.rows());
  double se = 0.0, ae = 0.0, se_rest = 0.0;
  for (std::size_t r = 0; r < d.rows(); ++r) {
    const double e = static_cast<double>(d.target(r)) - tree.predict(d, r);
    se += e * e;
    ae += std::fabs(e);
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

std::vector<double> impute_missing(Dataset& d, const std::vector<double>* values) {
  std::vector<double> v(d.cols(), 0.0);
  if (values) {
    GPUDM_REQUIRE(values->size() == d.cols(), "gmt: imputation values for " + std::to_string(values->size()) +
                                                  " attributes, dataset '" + d.name() + "' has " + std::to_string(d.cols()));
    v = *values;
  }
  for (std::size_t c = 0; c < d.cols(); ++c) {
    float* col = d.column(c);
    if (!values) {
      double sum = 0.0;
      std::size_t n = 0;
      for (std::size_t r = 0; r < d.rows(); ++r)
        if (std::isfinite(col[r])) sum += col[r], ++n;
      v[c] = n ? sum / double(n) : 0.0;
    }
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
                                  const std::vector<double>& impute) {
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
  j["tree"] = to_json(root, train);
  return j;
}

Tree model_from_json(const nlohmann::json& j, Dataset& d, const std::string& path) {
  GPUDM_REQUIRE(j.is_object() && j.value("format", "") == kModelFormat,
                path + ": not a gpudm GMT model (missing \"format\": \"gpudm-gmt-model\")");
  const auto version = j.contains("version") && j["version"].is_number_integer() ? j["version"].get<long long>() : 0;
  GPUDM_REQUIRE(version == 1 || version == kModelVersion,
                path + ": unsupported model version (this build reads versions 1 and " + std::to_string(kModelVersion) + ")");
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

}  // namespace gmt
}  // namespace gpudm
