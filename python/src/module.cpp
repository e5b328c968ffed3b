// gpudm._gpudm: the Python package's one native module (nanobind). Thin: arrays in, the families'
// own code (registry backends, fit_model, the model file) out; the estimators are Python
// (python/gpudm/). Data cross as float32 columns (the Dataset's own type), NaN = missing.
#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/vector.h>

#include <cmath>
#include <cstdint>
#include <initializer_list>
#include <memory>
#include <string>
#include <tuple>
#include <vector>

#include <nlohmann/json.hpp>

#include "algorithms/core/dataset.hpp"
#include "algorithms/core/error.hpp"
#include "algorithms/core/progress.hpp"
#include "algorithms/core/registry.hpp"
#include "algorithms/gmt/params.hpp"
#include "algorithms/gmt/train.hpp"
#include "algorithms/gmt/tree.hpp"
#include "algorithms/gp_rules/classifier.hpp"
#include "algorithms/gp_rules/params.hpp"
#include "algorithms/gp_rules/report.hpp"
#include "algorithms/pittsburgh/ga.hpp"
#include "algorithms/pittsburgh/params.hpp"
#include "algorithms/pittsburgh/population.hpp"
#include "algorithms/rules/evaluator.hpp"
#include "algorithms/rules/expression.hpp"
#include "algorithms/rules/opcodes.hpp"
#include "algorithms/vfdt/online.hpp"
#include "backends/register.hpp"

namespace nb = nanobind;
using namespace gpudm;

namespace {

using Matrix = nb::ndarray<const float, nb::ndim<2>, nb::c_contig, nb::device::cpu>;
using Vector = nb::ndarray<const float, nb::ndim<1>, nb::c_contig, nb::device::cpu>;
// (name, nominal, category names): one attribute as the estimators describe a column.
using AttrSpec = std::tuple<std::string, bool, std::vector<std::string>>;

const Registry& registry() {
  static const Registry r = [] {
    Registry x;
    register_all(x);
    return x;
  }();
  return r;
}

using Labels = nb::ndarray<const std::int32_t, nb::ndim<1>, nb::c_contig, nb::device::cpu>;

// Rows of `x` (n x m, row-major; NaN = missing) as a Dataset with the attributes `specs`; `y`
// (regression targets) and `labels` (class indices into `classes`) hold n values where given.
Dataset make_dataset(const std::string& name, const float* x, std::size_t n, std::size_t m, const float* y,
                     const std::vector<AttrSpec>& specs, const std::vector<std::string>* classes = nullptr,
                     const std::int32_t* labels = nullptr) {
  GPUDM_REQUIRE(specs.size() == m, "gpudm: " + std::to_string(m) + " columns, " + std::to_string(specs.size()) + " attribute descriptions");
  std::vector<Attribute> attrs;
  for (const auto& [nm, nominal, values] : specs)
    attrs.push_back(Attribute{nm, nominal ? AttributeKind::nominal : AttributeKind::numeric, values});
  Dataset d = classes ? Dataset(name, Task::classification, n, std::move(attrs), *classes) : Dataset(name, Task::regression, n, std::move(attrs));
  for (std::size_t c = 0; c < m; ++c) {
    float* col = d.column(c);
    for (std::size_t r = 0; r < n; ++r) {
      const float v = x[r * m + c];
      if (std::isnan(v)) d.set_missing(r, c);
      else col[r] = v;
    }
  }
  if (y)
    for (std::size_t r = 0; r < n; ++r) d.set_target(r, y[r]);
  if (labels)
    for (std::size_t r = 0; r < n; ++r) d.set_label(r, labels[r]);
  return d;
}

Dataset make_dataset(const std::string& name, const Matrix& X, const Vector* y, const std::vector<AttrSpec>& specs,
                     const std::vector<std::string>* classes = nullptr, const Labels* labels = nullptr) {
  const std::size_t n = X.shape(0);
  GPUDM_REQUIRE(!y || y->shape(0) == n, "gpudm: X has " + std::to_string(n) + " rows, y " + std::to_string(y ? y->shape(0) : 0));
  GPUDM_REQUIRE(!labels || labels->shape(0) == n, "gpudm: X has " + std::to_string(n) + " rows, y " + std::to_string(labels ? labels->shape(0) : 0));
  return make_dataset(name, X.data(), n, X.shape(1), y ? y->data() : nullptr, specs, classes, labels ? labels->data() : nullptr);
}

// Class names for a model file that keeps only its class count ("class0", "class1", ...): the
// Dataset needs names, the predictions are class indices, which the estimator maps to its classes_.
std::vector<std::string> indexed_class_names(std::size_t count) {
  std::vector<std::string> classes(count);
  for (std::size_t k = 0; k < count; ++k) classes[k] = "class" + std::to_string(k);
  return classes;
}

// A result array built here and handed to numpy without a copy: numpy's array owns it once returned.
template <class T>
class NumpyOut {
 public:
  explicit NumpyOut(std::size_t n) : p_(new T[n]) {}
  T* data() { return p_.get(); }
  template <int D>
  nb::ndarray<nb::numpy, T, nb::ndim<D>> release(std::initializer_list<std::size_t> shape) {
    T* raw = p_.release();
    nb::capsule owner(raw, [](void* q) noexcept { delete[] static_cast<T*>(q); });
    return nb::ndarray<nb::numpy, T, nb::ndim<D>>(raw, shape, owner);
  }

 private:
  std::unique_ptr<T[]> p_;
};

// A one-row dataset with the columns `attrs` (and `classes`): what printing a model needs of its data.
Dataset schema_only(const std::vector<AttrSpec>& attrs, const std::vector<std::string>* classes) {
  // (from a host buffer: a schema needs no array object of Python's)
  const std::vector<float> none(attrs.size(), 0.0f);
  return make_dataset("python", none.data(), 1, attrs.size(), nullptr, attrs, classes);
}

std::string specs_json(const std::vector<ParamSpec>& specs);
template <class Table>
std::string params_json(const Table& table) {
  return specs_json(table.specs());
}

std::string specs_json(const std::vector<ParamSpec>& specs) {
  nlohmann::ordered_json out = nlohmann::ordered_json::array();
  for (const auto& p : specs) out.push_back({{"name", p.name}, {"type", p.type}, {"default", p.default_value}, {"doc", p.doc}});
  return out.dump();
}

// The params of `family` as JSON: [{name, type, default, doc}], the CLI's --help table.
std::string gmt_params() { return params_json(gmt::params_table()); }
std::string gp_params() { return params_json(gp_rules::case_params()); }
std::string vfdt_params() { return specs_json(vfdt::online_param_specs()); }
std::string pitt_params() { return params_json(pittsburgh::params_table()); }

// [(backend, available, reason)] of a family, in registration order (the reference first).
std::vector<std::tuple<std::string, bool, std::string>> backends(const std::string& family) {
  std::vector<std::tuple<std::string, bool, std::string>> out;
  for (const auto& b : registry().backends(family)) out.emplace_back(b.backend, b.available, b.reason);
  return out;
}

// Fits GMT as the learner CLI's train does (fit_model) and returns (model file JSON, run summary JSON).
std::tuple<std::string, std::string> gmt_fit(const Matrix& X, const Vector& y, const std::vector<AttrSpec>& attrs,
                                             const std::string& params_json, const std::string& backend,
                                             std::uint64_t seed, bool progress) {
  Dataset data = make_dataset("python", X, &y, attrs);
  data.validate();
  const gmt::GmtCase c = gmt::read_case(nlohmann::json::parse(params_json));
  std::vector<double> impute;
  if (data.has_missing()) impute = gmt::impute_missing(data, nullptr);
  auto eval = registry().create<gmt::ModelTreeEvaluator>("gmt", backend);
  eval->configure(c.eval);
  gmt::FittedModel f;
  {
    nb::gil_scoped_release release;  // the EA runs its own threads; Python may go on meanwhile
    Progress::set_quiet(!progress);
    f = gmt::fit_model(data, impute, c, seed, *eval, backend, progress);
  }
  nlohmann::ordered_json run = {{"backend", backend},
                                {"iterations", f.result.summary.iterations},
                                {"stop_reason", f.result.summary.stop_reason},
                                {"fitness", f.result.best.fitness},
                                {"induction_seconds", f.result.seconds},
                                {"train_rmse", f.train.rmse},
                                {"train_mae", f.train.mae},
                                {"breakdown", f.result.timer.to_json()}};
  return {f.model.dump(), run.dump()};
}

gmt::Tree tree_of(const nlohmann::json& j, Dataset& d) { return gmt::model_from_json(j, d, "model"); }

// Predictions of a model file's tree for X (bounded as the file says; missing values by the model's
// training means, else the scored data's own).
nb::ndarray<nb::numpy, double, nb::ndim<1>> gmt_predict(const std::string& model_json, const Matrix& X, const std::vector<AttrSpec>& attrs) {
  const nlohmann::json j = nlohmann::json::parse(model_json);
  Dataset d = make_dataset("python", X, nullptr, attrs);
  const gmt::Tree root = tree_of(j, d);
  const gmt::PredictionBounds bounds = gmt::model_bounds(j, root, "model");
  // A model file of the Python package always has the training means; an older CLI model without
  // them falls back to the scored data's own (as the CLI's --predict does).
  const std::vector<double> impute = gmt::model_imputation(j);
  if (d.has_missing()) gmt::impute_missing(d, impute.empty() ? nullptr : &impute);
  NumpyOut<double> out(d.rows());
  {
    nb::gil_scoped_release release;
    for (std::size_t r = 0; r < d.rows(); ++r) out.data()[r] = gmt::predict(root, &bounds, d, r);
  }
  return out.release<1>({d.rows()});
}

// The model's tree as text (the CLI's print), with the attribute names of the model file.
std::string gmt_text(const std::string& model_json, const std::vector<AttrSpec>& attrs) {
  const nlohmann::json j = nlohmann::json::parse(model_json);
  Dataset d = schema_only(attrs, nullptr);
  return gmt::to_text(tree_of(j, d), d);
}

// Fits a gp_rules classifier as the --train CLI does (fit_model): labels are class indices into
// `classes`. Returns (model file JSON, run summary JSON).
std::tuple<std::string, std::string> gp_fit(const Matrix& X, const Labels& y, const std::vector<std::string>& classes,
                                            const std::vector<AttrSpec>& attrs, const std::string& params, const std::string& backend,
                                            std::uint64_t seed, bool progress) {
  Dataset data = make_dataset("python", X, nullptr, attrs, &classes, &y);
  data.validate();
  const nlohmann::json pj = nlohmann::json::parse(params);
  const gp_rules::GpCase c = gp_rules::case_params().read(pj);
  auto engine = registry().create<rules::RuleEvaluator>("gp_rules", backend);
  engine->configure(c.engine);
  gp_rules::FittedModel f;
  {
    nb::gil_scoped_release release;
    Progress::set_quiet(!progress);
    f = gp_rules::fit_model(data, c.gp, seed, *engine, backend, pj);
  }
  nlohmann::ordered_json run = gp_rules::run_metrics(f.stats);
  run["backend"] = backend;
  run["run_seconds"] = f.seconds;
  run["train_accuracy"] = f.train.accuracy();
  return {f.file.dump(), run.dump()};
}

// Class indices (into the model file's "classes") the rule list predicts for X, evaluated by the
// family's reference backend: a model fitted on a GPU predicts anywhere.
nb::ndarray<nb::numpy, std::int32_t, nb::ndim<1>> gp_predict(const std::string& model, const Matrix& X, const std::vector<AttrSpec>& attrs) {
  const nlohmann::json j = nlohmann::json::parse(model);
  const std::vector<std::string> classes = j.at("classes").get<std::vector<std::string>>();
  Dataset d = make_dataset("python", X, nullptr, attrs, &classes);
  const gp_rules::Classifier c = gp_rules::model_from_json(j, d, "model");
  auto engine = registry().create<rules::RuleEvaluator>("gp_rules", registry().reference("gp_rules"));
  std::vector<int> pred;
  {
    nb::gil_scoped_release release;
    engine->prepare(d);
    PhaseTimer t;
    gp_rules::score(c, d, *engine, t, &pred);
  }
  NumpyOut<std::int32_t> out(pred.size());
  for (std::size_t i = 0; i < pred.size(); ++i) out.data()[i] = pred[i];
  return out.release<1>({pred.size()});
}

std::string gp_text(const std::string& model, const std::vector<AttrSpec>& attrs) {
  const nlohmann::json j = nlohmann::json::parse(model);
  const std::vector<std::string> classes = j.at("classes").get<std::vector<std::string>>();
  Dataset d = schema_only(attrs, &classes);
  return gp_rules::to_text(gp_rules::model_from_json(j, d, "model"), d);
}

// Fits a Pittsburgh decision list as the family's "learn" mode does (run_ga on the whole data; labels
// are class indices into `classes`). Returns (the best individual as a one-individual population
// file's JSON, the run's summary JSON).
std::tuple<std::string, std::string> pitt_fit(const Matrix& X, const Labels& y, const std::vector<std::string>& classes,
                                              const std::vector<AttrSpec>& attrs, const std::string& params,
                                              const std::string& backend, std::uint64_t seed, bool progress) {
  Dataset data = make_dataset("python", X, nullptr, attrs, &classes, &y);
  data.validate();
  const pittsburgh::CaseParams c = pittsburgh::params_table().read(nlohmann::json::parse(params));
  pittsburgh::GaParams gp = c.ga;
  gp.population = c.population;
  gp.init = c.rules;
  gp.seed = seed;
  auto ev = registry().create<pittsburgh::RuleSetEvaluator>(pittsburgh::kFamilyName, backend);
  ev->configure(c.backend);
  pittsburgh::GaResult r;
  {
    nb::gil_scoped_release release;
    Progress::set_quiet(!progress);
    ev->prepare(data);
    r = pittsburgh::run_ga(*ev, data, gp);
  }
  const rules::Schema schema = rules::Schema::of(data);
  const auto model = pittsburgh::population_to_json(pittsburgh::Population{{r.best}}, &schema);
  nlohmann::ordered_json run = {{"backend", backend},          {"generations", r.generations},
                                {"evaluations", r.evaluations}, {"gpops", r.gpops},
                                {"evaluation_seconds", r.evaluation_seconds},
                                {"best_fitness", r.best_fitness}, {"train_accuracy", r.train_accuracy}};
  return {model.dump(), run.dump()};
}

// Class indices the model's decision list gives X (the first rule whose antecedent covers the row,
// else the default class), interpreted on the host: a list learned on a GPU predicts anywhere.
nb::ndarray<nb::numpy, std::int32_t, nb::ndim<1>> pitt_predict(const std::string& model, const Matrix& X,
                                                              const std::vector<AttrSpec>& attrs) {
  const nlohmann::json j = nlohmann::json::parse(model);
  const pittsburgh::Population pop = pittsburgh::population_from_json(j, "model");
  GPUDM_REQUIRE(pop.size() == 1, "model: a Pittsburgh model holds one individual, this one " + std::to_string(pop.size()));
  const std::vector<std::string> classes = indexed_class_names(static_cast<std::size_t>(std::max<long long>(2, pop.declared_classes)));
  const Dataset d = make_dataset("python", X, nullptr, attrs, &classes);
  pittsburgh::validate(pop, rules::Schema::of(d));
  const pittsburgh::Individual& ind = pop.individuals[0];
  NumpyOut<std::int32_t> out(d.rows());
  {
    nb::gil_scoped_release release;
    for (std::size_t r = 0; r < d.rows(); ++r) {
      out.data()[r] = ind.default_class;
      for (const auto& rule : ind.rules)
        if (rules::evaluate(rule.tokens.data(), [&](std::uint32_t a) { return d.at(r, a); })) {
          out.data()[r] = rule.consequent;
          break;
        }
    }
  }
  return out.release<1>({d.rows()});
}

// The vfdt family's forest (or tree) learned online: each learn() predicts, then learns a chunk
// (class indices into `classes`), the first chunk fixing the coding; model() its trees as JSON.
class VfdtOnline {
 public:
  VfdtOnline(const std::string& params_json, const std::string& backend, std::uint64_t seed,
             const std::vector<std::string>& classes, const std::vector<AttrSpec>& attrs)
      : classes_(classes), attrs_(attrs),
        forest_(registry(), backend, vfdt::read_online_settings(nlohmann::json::parse(params_json)), seed) {}

  nb::ndarray<nb::numpy, std::int32_t, nb::ndim<1>> learn(const Matrix& X, const Labels& y) {
    const Dataset d = make_dataset("python", X, nullptr, attrs_, &classes_, &y);
    NumpyOut<std::int32_t> out(d.rows());
    {
      nb::gil_scoped_release release;
      forest_.learn(d, out.data());
    }
    return out.release<1>({d.rows()});
  }
  std::uint64_t seen() const { return forest_.seen(); }
  std::string model() const { return forest_.model().dump(); }

 private:
  std::vector<std::string> classes_;
  std::vector<AttrSpec> attrs_;
  vfdt::OnlineForest forest_;
};

// The trees' votes per class for X (rows x classes) from a forest model's JSON: no learning, on
// the host, so a forest learned on a GPU predicts anywhere.
nb::ndarray<nb::numpy, std::uint32_t, nb::ndim<2>> vfdt_votes(const std::string& model, const Matrix& X,
                                                             const std::vector<AttrSpec>& attrs) {
  const vfdt::ForestModel m = vfdt::forest_model_from_json(nlohmann::json::parse(model), "model");
  const std::vector<std::string> classes = indexed_class_names(static_cast<std::size_t>(m.schema.classes));
  const std::size_t n = X.shape(0), C = m.schema.classes;
  const std::vector<std::int32_t> zero(n, 0);  // labels the encoding requires, never read
  const Dataset d = make_dataset("python", X.data(), n, X.shape(1), nullptr, attrs, &classes, zero.data());
  NumpyOut<std::uint32_t> out(n * C);
  {
    nb::gil_scoped_release release;
    const vfdt::EncodedStream s = vfdt::EncodedStream::encode_like(d, m.schema);
    vfdt::snapshot_votes(m.trees, s, out.data());
  }
  return out.release<2>({n, C});
}

}  // namespace

NB_MODULE(_gpudm, m) {
  m.doc() = "gpudm's native core: the families' backends and model files (use the gpudm package's estimators)";
  nb::register_exception_translator([](const std::exception_ptr& p, void*) {
    try {
      std::rethrow_exception(p);
    } catch (const Unavailable& e) {
      PyErr_SetString(PyExc_RuntimeError, e.what());
    } catch (const Error& e) {
      PyErr_SetString(PyExc_ValueError, e.what());
    }
  });
  m.def("backends", &backends, nb::arg("family"), "[(backend, available, reason)] of a family");
  m.def("gmt_params", &gmt_params, "GMT's params as JSON: [{name, type, default, doc}]");
  m.def("gmt_fit", &gmt_fit, nb::arg("X"), nb::arg("y"), nb::arg("attributes"), nb::arg("params_json"), nb::arg("backend"),
        nb::arg("seed"), nb::arg("progress") = false);
  m.def("gmt_predict", &gmt_predict, nb::arg("model_json"), nb::arg("X"), nb::arg("attributes"));
  m.def("gmt_text", &gmt_text, nb::arg("model_json"), nb::arg("attributes"));
  m.def("gp_params", &gp_params, "gp_rules' params as JSON: [{name, type, default, doc}]");
  m.def("gp_fit", &gp_fit, nb::arg("X"), nb::arg("y"), nb::arg("classes"), nb::arg("attributes"), nb::arg("params_json"),
        nb::arg("backend"), nb::arg("seed"), nb::arg("progress") = false);
  m.def("gp_predict", &gp_predict, nb::arg("model_json"), nb::arg("X"), nb::arg("attributes"));
  m.def("gp_text", &gp_text, nb::arg("model_json"), nb::arg("attributes"));
  m.def("pitt_params", &pitt_params, "pittsburgh's params as JSON: [{name, type, default, doc}]");
  m.def("pitt_fit", &pitt_fit, nb::arg("X"), nb::arg("y"), nb::arg("classes"), nb::arg("attributes"), nb::arg("params_json"),
        nb::arg("backend"), nb::arg("seed"), nb::arg("progress") = false);
  m.def("pitt_predict", &pitt_predict, nb::arg("model_json"), nb::arg("X"), nb::arg("attributes"));
  m.def("vfdt_params", &vfdt_params, "vfdt's params as JSON: [{name, type, default, doc}]");
  nb::class_<VfdtOnline>(m, "VfdtOnline")
      .def(nb::init<const std::string&, const std::string&, std::uint64_t, const std::vector<std::string>&,
                    const std::vector<AttrSpec>&>(),
           nb::arg("params_json"), nb::arg("backend"), nb::arg("seed"), nb::arg("classes"), nb::arg("attributes"))
      .def("learn", &VfdtOnline::learn, nb::arg("X"), nb::arg("y"), "predict, then learn a chunk; the predictions")
      .def("seen", &VfdtOnline::seen)
      .def("model", &VfdtOnline::model);
  m.def("vfdt_votes", &vfdt_votes, nb::arg("model_json"), nb::arg("X"), nb::arg("attributes"));
}
