#include "algorithms/gp_rules/cv.hpp"

#include <numeric>

#include "algorithms/core/error.hpp"
#include "algorithms/core/stopwatch.hpp"

namespace gpudm::gp_rules {

namespace {
constexpr std::uint64_t kCvSalt = 0xC0FFEEull;
}

std::vector<int> cv_folds(std::size_t rows, int k, std::uint64_t seed) {
  GPUDM_REQUIRE(k >= 2, "cross-validation needs k >= 2 folds");
  std::vector<std::size_t> idx(rows);
  std::iota(idx.begin(), idx.end(), std::size_t{0});
  Rng rng(seed ^ kCvSalt);
  for (std::size_t i = idx.size(); i > 1; --i) std::swap(idx[i - 1], idx[rng.below(i)]);
  std::vector<int> fold(rows, 0);
  for (std::size_t i = 0; i < rows; ++i) fold[idx[i]] = static_cast<int>(i % static_cast<std::size_t>(k));
  return fold;
}

double CvResult::mean_train_accuracy() const {
  double s = 0;
  for (const auto& f : folds) s += f.train.accuracy();
  return folds.empty() ? 0.0 : s / static_cast<double>(folds.size());
}
double CvResult::mean_rules() const {
  double s = 0;
  for (const auto& f : folds) s += static_cast<double>(f.rules);
  return folds.empty() ? 0.0 : s / static_cast<double>(folds.size());
}

CvResult cross_validate(const Dataset& data, const GpParams& p, std::uint64_t seed, int k,
                        const std::function<std::unique_ptr<rules::RuleEvaluator>()>& make_engine, RunStats& stats) {
  GPUDM_REQUIRE(data.rows() >= static_cast<std::size_t>(k),
                "cross-validation: dataset '" + data.name() + "' has fewer rows than the " + std::to_string(k) + " folds");
  const std::vector<int> fold = cv_folds(data.rows(), k, seed);
  CvResult out;
  for (int f = 0; f < k; ++f) {
    Stopwatch sw;
    std::vector<std::size_t> tr, te;
    for (std::size_t i = 0; i < data.rows(); ++i) (fold[i] == f ? te : tr).push_back(i);
    Dataset dtr = data.select(tr), dte = data.select(te);
    dtr.set_name(data.name());
    dte.set_name(data.name() + "[fold " + std::to_string(f) + "]");
    auto engine = make_engine();
    auto tester = make_engine();
    engine->prepare(dtr);
    tester->prepare(dte);
    RunStats st;
    const Classifier c = train(dtr, p, seed + static_cast<std::uint64_t>(f), *engine, st);
    FoldResult r;
    r.train = score(c, dtr, *engine, st.engine);
    r.test = score(c, dte, *tester, st.engine);
    r.rules = c.rules.size();
    r.seconds = sw.seconds();
    out.test_rows += r.test.rows;
    out.test_correct += r.test.correct;
    out.folds.push_back(r);
    stats.phases.merge(st.phases);
    stats.engine.merge(st.engine);
    stats.evaluations += st.evaluations;
    stats.planned_evaluations += st.planned_evaluations;
    stats.rules_evaluated += st.rules_evaluated;
    stats.gpops += st.gpops;
    stats.generations += st.generations;
    stats.trace.insert(stats.trace.end(), st.trace.begin(), st.trace.end());
  }
  return out;
}

}  // namespace gpudm::gp_rules
