#include "algorithms/pittsburgh/evaluate_cli.hpp"

#include <iostream>

#include "algorithms/core/stopwatch.hpp"
#include "algorithms/pittsburgh/params.hpp"
#include "algorithms/pittsburgh/sharded.hpp"

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

namespace {

const char* kUsage =
    "usage: run_experiment --evaluate pittsburgh --population P.json --dataset NAME [--backend B]\n"
    "       [--path faithful|fast] [--devices N] [--threads N]";

int parse_int(const std::string& flag, const std::string& v) {
  std::size_t used = 0;
  long long x = 0;
  try {
    x = std::stoll(v, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used != v.size() || x < 0 || x > 1 << 20) throw Error(flag + " expects a non-negative integer, got '" + v + "'");
  return static_cast<int>(x);
}

}  // namespace

int evaluate_command(const std::vector<std::string>& args, const CommandEnv& env, std::ostream& out, std::ostream& err) {
  std::string population, dataset, backend;
  EvaluatorOptions options;
  nlohmann::json backend_params = nlohmann::json::object();  // read through the family's ParamTable
  try {
    for (std::size_t i = 0; i < args.size(); ++i) {
      const std::string& f = args[i];
      if (f == "-h" || f == "--help") {
        out << kUsage << '\n';
        return 0;
      }
      if (i + 1 >= args.size()) throw Error(f + " needs a value (" + std::string(kUsage) + ")");
      const std::string& v = args[++i];
      if (f == "--population") population = v;
      else if (f == "--dataset") dataset = v;
      else if (f == "--backend" || f == "-b") backend = v;
      else if (f == "--path") backend_params["path"] = v;
      else if (f == "--devices") backend_params["devices"] = parse_int(f, v);
      else if (f == "--threads") backend_params["threads"] = parse_int(f, v);
      else throw Error("unknown option '" + f + "' (" + std::string(kUsage) + ")");
    }
    if (population.empty()) throw Error("--evaluate pittsburgh needs --population P.json");
    if (dataset.empty()) throw Error("--evaluate pittsburgh needs --dataset NAME");
    options = params_table().read(backend_params).backend;
  } catch (const Error& e) {
    err << cli_error_line(UsageError(e.what())) << '\n';
    return 2;
  }
  try {
    const Population p = load_population(population);
    const auto data = env.datasets->get(dataset, nlohmann::json::object());
    if (!data) throw Error("dataset '" + dataset + "' could not be loaded");
    check_header(p, *data, population);
    auto ev = pittsburgh::across_ranks(env.registry->create<RuleSetEvaluator>(kFamilyName, backend.empty() ? env.registry->reference(kFamilyName) : backend));  // (rows split over MPI ranks)
    ev->configure(options);
    ev->prepare(*data);
    EvaluationResult r;
    PhaseTimer phases;
    Stopwatch sw;
    ev->evaluate(p, r, phases);
    ojson j = evaluation_to_json(p, r, *data, ev->name());
    j["seconds"] = sw.seconds();
    out << j.dump(2) << '\n';
    return 0;
  } catch (const std::exception& e) {
    err << cli_error_line(e) << '\n';
    return cli_exit_status(e);
  }
}

}  // namespace gpudm::pittsburgh
