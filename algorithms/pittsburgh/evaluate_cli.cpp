#include "algorithms/pittsburgh/evaluate_cli.hpp"

#include <iostream>

#include "algorithms/core/stopwatch.hpp"

namespace gpudm::pittsburgh {

ojson evaluation_to_json(const Population& p, const EvaluationResult& r, const Dataset& d, const std::string& backend) {
  ojson j;
  j["family"] = kFamilyName;
  j["backend"] = backend;
  j["dataset"] = describe_dataset(d);
  j["gpops"] = r.gpops;
  j["gpops_definition"] = kGpopsDefinition;
  j["checksum"] = r.checksum();
  ojson inds = ojson::array();
  for (std::size_t i = 0; i < p.size(); ++i) {
    ojson ji;
    ji["individual"] = i;
    ji["default_class"] = p.individuals[i].default_class;
    ji["correct"] = r.correct[i];
    ji["accuracy"] = r.accuracy[i];
    ojson rules_j = ojson::array();
    for (std::size_t k = 0; k < p.individuals[i].rules.size(); ++k) {
      const auto& m = r.rule(i, k);
      const std::size_t g = r.individual_rule_begin[i] + k;
      rules_j.push_back({{"rule", k},
                         {"consequent", p.individuals[i].rules[k].consequent},
                         {"tp", m.tp},
                         {"tn", m.tn},
                         {"fp", m.fp},
                         {"fn", m.fn},
                         {"fitness", r.rule_fitness[g]}});
    }
    ji["rules"] = std::move(rules_j);
    inds.push_back(std::move(ji));
  }
  j["individuals"] = std::move(inds);
  return j;
}

int evaluate_cli(const std::string& population, const std::string& dataset, const std::string& backend,
                 DatasetProvider& datasets, const Registry& registry, const EvaluatorOptions& options) {
  return evaluate_cli(population, dataset, backend, datasets, registry, options, std::cout, std::cerr);
}

int evaluate_cli(const std::string& population, const std::string& dataset, const std::string& backend,
                 DatasetProvider& datasets, const Registry& registry, const EvaluatorOptions& options,
                 std::ostream& out, std::ostream& err) {
  try {
    const Population p = load_population(population);
    const auto data = datasets.get(dataset, nlohmann::json::object());
    if (!data) throw Error("dataset '" + dataset + "' could not be loaded");
    auto ev = registry.create<RuleSetEvaluator>(kFamilyName, backend.empty() ? "sequential" : backend);
    ev->configure(options);
    ev->prepare(*data);
    EvaluationResult r;
    Stopwatch sw;
    ev->evaluate(p, r);
    ojson j = evaluation_to_json(p, r, *data, ev->backend());
    j["seconds"] = sw.seconds();
    out << j.dump(2) << '\n';
    return 0;
  } catch (const std::exception& e) {
    err << "error: " << e.what() << '\n';
    return 1;
  }
}

}  // namespace gpudm::pittsburgh
