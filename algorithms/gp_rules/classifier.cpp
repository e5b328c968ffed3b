#include "algorithms/gp_rules/classifier.hpp"

#include "algorithms/core/schema.hpp"

#include <algorithm>
#include <bit>
#include <cstdio>
#include <numeric>

#include "algorithms/core/error.hpp"
#include "algorithms/core/json_limits.hpp"
#include "algorithms/rules/expression.hpp"

namespace gpudm::gp_rules {

rules::RulePopulation Classifier::population() const {
  rules::RulePopulation p;
  for (const RuleEntry& r : rules) p.add(r.tokens);
  return p;
}

namespace {

int majority(const std::vector<std::uint64_t>& n) {
  int best = 0;
  for (std::size_t c = 1; c < n.size(); ++c)
    if (n[c] > n[static_cast<std::size_t>(best)]) best = static_cast<int>(c);
  return best;
}

// First-match decision over coverage words: calls hit(row, rule) for every covered row of the
// first rule covering it and miss(row) for the rows no rule covers.
template <class Hit, class Miss>
void decide(const rules::RuleCounts& cov, std::size_t rules_n, Hit hit, Miss miss) {
  const std::size_t rows = cov.rows, words = cov.words_per_rule;
  for (std::size_t w = 0; w < words; ++w) {
    const std::size_t base = w * 32;
    std::uint32_t und = rows - base >= 32 ? 0xFFFFFFFFu : ((1u << (rows - base)) - 1u);
    for (std::size_t r = 0; r < rules_n && und; ++r) {
      std::uint32_t m = cov.coverage_of(r)[w] & und;
      und &= ~m;
      while (m) {
        hit(base + static_cast<std::size_t>(std::countr_zero(m)), r);
        m &= m - 1;
      }
    }
    while (und) {
      miss(base + static_cast<std::size_t>(std::countr_zero(und)));
      und &= und - 1;
    }
  }
}

}  // namespace

void finish_classifier(Classifier& c, const Dataset& train, rules::RuleEvaluator& engine, PhaseTimer& engine_phases) {
  const int classes = train.num_classes();
  rules::RuleCounts counts;
  engine.evaluate(c.population(), counts, engine_phases, rules::Want::counts_and_coverage);
  for (std::size_t i = 0; i < c.rules.size(); ++i) c.rules[i].train = counts.confusion(i, c.rules[i].consequent);
  // Laplace precision, highest first; ties: fewer words, then the order found.
  std::vector<std::size_t> order(c.rules.size());
  std::iota(order.begin(), order.end(), std::size_t{0});
  const auto laplace = [&](std::size_t i) {
    const auto& m = c.rules[i].train;
    return (static_cast<double>(m.tp) + 1.0) / (static_cast<double>(m.tp) + static_cast<double>(m.fp) + classes);
  };
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    const double la = laplace(a), lb = laplace(b);
    if (la != lb) return la > lb;
    return c.rules[a].tokens.size() < c.rules[b].tokens.size();
  });
  std::vector<RuleEntry> sorted;
  rules::RuleCounts reordered = counts;
  for (std::size_t k = 0; k < order.size(); ++k) {
    sorted.push_back(std::move(c.rules[order[k]]));
    std::copy(counts.coverage_of(order[k]), counts.coverage_of(order[k]) + counts.words_per_rule,
              reordered.coverage.begin() + static_cast<std::ptrdiff_t>(k * counts.words_per_rule));
  }
  c.rules = std::move(sorted);
  std::vector<std::uint64_t> uncovered(static_cast<std::size_t>(classes), 0);
  std::uint64_t n_uncovered = 0;
  decide(reordered, c.rules.size(), [](std::size_t, std::size_t) {},
         [&](std::size_t row) {
           ++uncovered[static_cast<std::size_t>(train.label(row))];
           ++n_uncovered;
         });
  c.default_class = n_uncovered > 0 ? majority(uncovered) : majority(counts.class_rows);
}

Score score(const Classifier& c, const Dataset& data, rules::RuleEvaluator& engine, PhaseTimer& engine_phases,
            std::vector<int>* predictions) {
  rules::RuleCounts counts;
  engine.evaluate(c.population(), counts, engine_phases, rules::Want::counts_and_coverage);
  GPUDM_REQUIRE(counts.rows == data.rows(), "gp_rules: the engine is prepared on another dataset than the one scored");
  Score s;
  s.rows = data.rows();
  if (predictions) predictions->assign(data.rows(), c.default_class);
  decide(counts, c.rules.size(),
         [&](std::size_t row, std::size_t r) {
           const int y = c.rules[r].consequent;
           s.correct += data.label(row) == y;
           if (predictions) (*predictions)[row] = y;
         },
         [&](std::size_t row) {
           ++s.by_default;
           s.correct += data.label(row) == c.default_class;
         });
  return s;
}

std::string to_text(const Classifier& c, const Dataset& d) {
  const auto cls = [&](int k) {
    return k >= 0 && k < d.num_classes() ? d.class_names()[static_cast<std::size_t>(k)] : std::to_string(k);
  };
  std::string out;
  char buf[160];
  for (std::size_t i = 0; i < c.rules.size(); ++i) {
    const RuleEntry& r = c.rules[i];
    std::snprintf(buf, sizeof buf, "   [tp %u fp %u fn %u tn %u]", r.train.tp, r.train.fp, r.train.fn, r.train.tn);
    out += std::to_string(i + 1) + ". IF " + rules::to_infix(r.tokens.data(), d) + " THEN " + cls(r.consequent) + buf + "\n";
  }
  out += (c.rules.empty() ? "IF TRUE THEN " : "ELSE ") + cls(c.default_class) + "\n";
  return out;
}

nlohmann::ordered_json model_json(const Classifier& c, const Dataset& train, const std::string& algorithm,
                                  const nlohmann::ordered_json& info) {
  nlohmann::ordered_json j;
  j["format"] = kModelFormat;
  j["version"] = kModelVersion;
  j["algorithm"] = algorithm;
  j["dataset"] = train.name();
  j["attributes"] = DataSchema::of(train).attributes_json();
  j["classes"] = train.class_names();
  auto rs = nlohmann::ordered_json::array();
  for (const RuleEntry& r : c.rules)
    rs.push_back({{"antecedent", rules::format_expression(r.tokens.data())},
                  {"consequent", r.consequent},
                  {"class", train.class_names().at(static_cast<std::size_t>(r.consequent))},
                  {"text", rules::to_infix(r.tokens.data(), train)},
                  {"fitness", r.fitness},
                  {"train", {{"tp", r.train.tp}, {"fp", r.train.fp}, {"tn", r.train.tn}, {"fn", r.train.fn}}}});
  j["rules"] = rs;
  j["default_class"] = c.default_class;
  j["default_class_name"] = train.class_names().at(static_cast<std::size_t>(c.default_class));
  j["info"] = info;
  return j;
}

Classifier model_from_json(const nlohmann::json& j, Dataset& data, const std::string& where) {
  GPUDM_REQUIRE(j.is_object() && j.value("format", std::string()) == kModelFormat,
                where + ": not a gp_rules model (\"format\" must be \"" + std::string(kModelFormat) + "\")");
  const int version = j.contains("version") && j["version"].is_number_integer() ? j["version"].get<int>() : 1;
  GPUDM_REQUIRE(version == 1 || version == kModelVersion,
                where + ": model version " + std::to_string(version) + "; this build reads versions 1 and " +
                    std::to_string(kModelVersion));
  GPUDM_REQUIRE(data.task() == Task::classification, where + ": dataset '" + data.name() + "' is not a classification dataset");
  GPUDM_REQUIRE(j.contains("attributes") && j.contains("classes") && j["classes"].is_array() && j.contains("rules") &&
                    j.contains("default_class"),
                where + ": a model needs \"attributes\", \"classes\" (array), \"rules\" and \"default_class\"");
  // The data re-coded to the model's attributes, categories and classes by name: the rules'
  // attribute and category indexes are the model's.
  const nlohmann::json& classes = j.at("classes");
  align_to_schema(DataSchema::from_json(j.at("attributes"), &classes, where), data, where);
  Classifier c;
  const rules::Schema schema = rules::Schema::of(data);
  const auto& rs = j.at("rules");
  GPUDM_REQUIRE(rs.is_array(), where + ": \"rules\" must be an array");
  for (std::size_t i = 0; i < rs.size(); ++i) {
    const std::string wr = where + ": rule " + std::to_string(i);
    RuleEntry e;
    GPUDM_REQUIRE(rs[i].is_object() && rs[i].contains("antecedent"), wr + ": needs \"antecedent\" (token array) and \"consequent\"");
    e.tokens = rules::parse_expression(rs[i]["antecedent"], wr);
    const std::string why = rules::check_expression(e.tokens.data(), e.tokens.size(), schema);
    GPUDM_REQUIRE(why.empty(), wr + ": " + why);
    GPUDM_REQUIRE(rs[i].contains("consequent"), wr + ": \"consequent\" (integer class) is required");
    e.consequent = static_cast<int>(json_int_in(rs[i]["consequent"], 0, data.num_classes() - 1, wr + ": \"consequent\""));
    if (rs[i].contains("class")) {  // optional, written for readers: must name the consequent's class
      const auto& cl = rs[i]["class"];
      const std::string& want = data.class_names().at(static_cast<std::size_t>(e.consequent));
      GPUDM_REQUIRE(cl.is_string() && cl.get<std::string>() == want,
                    wr + ": \"class\" " + cl.dump() + " contradicts \"consequent\" " + std::to_string(e.consequent) + " (class \"" +
                        want + "\")");
    }
    e.fitness = rs[i].value("fitness", 0.0);
    if (rs[i].contains("train")) {
      const auto& t = rs[i]["train"];
      e.train.tp = t.value("tp", 0u);
      e.train.fp = t.value("fp", 0u);
      e.train.tn = t.value("tn", 0u);
      e.train.fn = t.value("fn", 0u);
    }
    c.rules.push_back(std::move(e));
  }
  c.default_class = static_cast<int>(json_int_in(j["default_class"], 0, data.num_classes() - 1, where + ": \"default_class\""));
  return c;
}

}  // namespace gpudm::gp_rules
