#include "algorithms/pittsburgh/population.hpp"

#include "algorithms/core/files.hpp"
#include "algorithms/core/json_limits.hpp"

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <limits>

namespace gpudm::pittsburgh {

namespace {
std::string rule_where(std::size_t ind, std::size_t r) {
  return "individual " + std::to_string(ind) + ", rule " + std::to_string(r);
}
}  // namespace

FlatPopulation flatten(const Population& p, const rules::Schema& schema) { return flatten(p, schema, 0, p.size()); }

FlatPopulation flatten(const Population& p, const rules::Schema& schema, std::size_t begin, std::size_t end) {
  if (begin > end || end > p.size())
    throw Error("population: flatten range [" + std::to_string(begin) + ", " + std::to_string(end) +
                ") outside the " + std::to_string(p.size()) + " individuals");
  FlatPopulation f;
  f.individual_rule_begin.reserve(end - begin + 1);
  f.individual_word_begin.reserve(end - begin + 1);
  f.default_class.reserve(end - begin);
  for (std::size_t i = begin; i < end; ++i) {
    const Individual& ind = p.individuals[i];
    if (schema.classes > 0 && (ind.default_class < 0 || ind.default_class >= schema.classes))
      throw Error("population: individual " + std::to_string(i) + ": default class " +
                  std::to_string(ind.default_class) + " out of range [0, " + std::to_string(schema.classes) + ")");
    f.individual_rule_begin.push_back(static_cast<std::uint32_t>(f.rule_consequent.size()));
    f.individual_word_begin.push_back(static_cast<std::uint32_t>(f.antecedents.words.size()));
    f.default_class.push_back(ind.default_class);
    for (std::size_t r = 0; r < ind.rules.size(); ++r) {
      const Rule& rule = ind.rules[r];
      if (schema.classes > 0 && (rule.consequent < 0 || rule.consequent >= schema.classes))
        throw Error("population: " + rule_where(i, r) + ": consequent class " + std::to_string(rule.consequent) +
                    " out of range [0, " + std::to_string(schema.classes) + ")");
      rules::ExpressionInfo info;
      const std::string msg = rules::check_expression(rule.tokens.data(), rule.tokens.size(), schema, &info);
      if (!msg.empty()) throw Error("population: " + rule_where(i, r) + ": " + msg);
      if (static_cast<std::size_t>(info.words) != rule.tokens.size())
        throw Error("population: " + rule_where(i, r) + ": " + std::to_string(rule.tokens.size() - info.words) +
                    " words after END");
      f.antecedents.words.insert(f.antecedents.words.end(), rule.tokens.begin(), rule.tokens.end());
      f.antecedents.rule_begin.push_back(static_cast<std::uint32_t>(f.antecedents.words.size()));
      f.rule_consequent.push_back(rule.consequent);
      f.rule_primitives.push_back(static_cast<std::uint32_t>(info.primitives));
      f.primitives += static_cast<std::uint64_t>(info.primitives);
      f.max_depth = std::max(f.max_depth, info.max_depth);
    }
    f.max_rules = std::max(f.max_rules, static_cast<int>(ind.rules.size()));
    if (f.antecedents.words.size() > std::numeric_limits<std::uint32_t>::max() / 2)
      throw Error("population: more than 2^31 words in total; split the population");
  }
  f.individual_rule_begin.push_back(static_cast<std::uint32_t>(f.rule_consequent.size()));
  f.individual_word_begin.push_back(static_cast<std::uint32_t>(f.antecedents.words.size()));
  for (std::size_t i = 0; i + 1 < f.individual_word_begin.size(); ++i)
    f.max_individual_words = std::max(f.max_individual_words,
                                      static_cast<int>(f.individual_word_begin[i + 1] - f.individual_word_begin[i]));
  return f;
}

void validate(const Population& p, const rules::Schema& schema) { (void)flatten(p, schema); }

namespace {
void only_keys(const nlohmann::json& j, std::initializer_list<const char*> known, const std::string& where) {
  for (auto it = j.begin(); it != j.end(); ++it)
    if (std::find_if(known.begin(), known.end(), [&](const char* k) { return it.key() == k; }) == known.end()) {
      std::string list;
      for (const char* k : known) list += (list.empty() ? "" : ", ") + std::string(k);
      throw Error(where + ": unknown key \"" + it.key() + "\" (known: " + list + ")");
    }
}
}  // namespace

void check_header(const Population& p, const Dataset& d, const std::string& source) {
  if (p.declared_attributes >= 0 && static_cast<std::size_t>(p.declared_attributes) != d.cols())
    throw Error(source + ": the header declares " + std::to_string(p.declared_attributes) + " attributes, dataset '" +
                d.name() + "' has " + std::to_string(d.cols()));
  if (p.declared_classes >= 0 && p.declared_classes != d.num_classes())
    throw Error(source + ": the header declares " + std::to_string(p.declared_classes) + " classes, dataset '" + d.name() +
                "' has " + std::to_string(d.num_classes()));
}

Population population_from_json(const nlohmann::json& j, const std::string& source) {
  if (!j.is_object()) throw Error(source + ": a population must be a JSON object with \"individuals\"");
  if (j.contains("format") && j["format"] != "gpudm-pittsburgh-population")
    throw Error(source + ": format is " + j["format"].dump() + ", expected \"gpudm-pittsburgh-population\"");
  if (j.contains("version") && j["version"] != 1)
    throw Error(source + ": version " + j["version"].dump() + " is not supported (expected 1)");
  for (auto it = j.begin(); it != j.end(); ++it) {
    static const char* known[] = {"format", "version", "attributes", "classes", "individuals", "generator", "gpops_definition"};
    if (std::find(std::begin(known), std::end(known), it.key()) == std::end(known))
      throw Error(source + ": unknown key \"" + it.key() + "\" (known: format, version, attributes, classes, individuals)");
  }
  if (!j.contains("individuals") || !j["individuals"].is_array())
    throw Error(source + ": \"individuals\" must be an array");
  Population p;
  if (j.contains("attributes"))
    p.declared_attributes = json_int_in(j["attributes"], 1, rules::kMaxAttribute + 1ll, source + ": \"attributes\"");
  if (j.contains("classes")) p.declared_classes = json_int_in(j["classes"], 1, INT32_MAX, source + ": \"classes\"");
  const auto& inds = j["individuals"];
  p.individuals.reserve(inds.size());
  for (std::size_t i = 0; i < inds.size(); ++i) {
    const auto& ji = inds[i];
    const std::string wi = source + ": individual " + std::to_string(i);
    if (!ji.is_object()) throw Error(wi + ": must be an object with \"rules\" and \"default_class\"");
    only_keys(ji, {"default_class", "rules"}, wi);
    Individual ind;
    if (!ji.contains("default_class") || !ji["default_class"].is_number_integer())
      throw Error(wi + ": \"default_class\" (integer) is required");
    ind.default_class = static_cast<std::int32_t>(json_int_in(ji["default_class"], 0, INT32_MAX, wi + ": \"default_class\""));
    if (ji.contains("rules")) {
      if (!ji["rules"].is_array()) throw Error(wi + ": \"rules\" must be an array");
      for (std::size_t r = 0; r < ji["rules"].size(); ++r) {
        const auto& jr = ji["rules"][r];
        const std::string wr = wi + ", rule " + std::to_string(r);
        if (!jr.is_object() || !jr.contains("antecedent") || !jr.contains("consequent") ||
            !jr["consequent"].is_number_integer())
          throw Error(wr + ": needs \"antecedent\" (token array) and \"consequent\" (integer class)");
        only_keys(jr, {"antecedent", "consequent"}, wr);
        Rule rule;
        rule.tokens = rules::parse_expression(jr["antecedent"], wr);
        rule.consequent = static_cast<std::int32_t>(json_int_in(jr["consequent"], 0, INT32_MAX, wr + ": \"consequent\""));
        ind.rules.push_back(std::move(rule));
      }
    }
    p.individuals.push_back(std::move(ind));
  }
  return p;
}

nlohmann::ordered_json population_to_json(const Population& p, const rules::Schema* schema) {
  nlohmann::ordered_json j;
  j["format"] = "gpudm-pittsburgh-population";
  j["version"] = 1;
  if (schema) {
    j["attributes"] = schema->attributes;
    j["classes"] = schema->classes;
  }
  nlohmann::ordered_json inds = nlohmann::ordered_json::array();
  for (const auto& ind : p.individuals) {
    nlohmann::ordered_json ji;
    ji["default_class"] = ind.default_class;
    ji["rules"] = nlohmann::ordered_json::array();
    for (const auto& r : ind.rules) {
      nlohmann::ordered_json jr;
      jr["antecedent"] = rules::format_expression(r.tokens.data());
      jr["consequent"] = r.consequent;
      ji["rules"].push_back(std::move(jr));
    }
    inds.push_back(std::move(ji));
  }
  j["individuals"] = std::move(inds);
  return j;
}

Population load_population(const std::string& path) {
  const nlohmann::json j = read_json_file(path, "population file");
  // The header ("attributes", "classes") is checked against the dataset at evaluation
  // (check_header), the rules against the dataset's schema when they are flattened.
  return population_from_json(j, path);
}

void save_population(const Population& p, const std::string& path, const rules::Schema* schema) {
  write_file_atomic(path, population_to_json(p, schema).dump(2) + "\n");
}

nlohmann::ordered_json RandomRuleSpec::to_json() const {
  return {{"rules_per_individual", rules_per_individual == 0 ? nlohmann::ordered_json("classes")
                                                            : nlohmann::ordered_json(rules_per_individual)},
          {"conditions", "uniform in [1, min(max_conditions_cap, 2 * attributes)]"},
          {"max_conditions_cap", max_conditions_cap},
          {"join", "left-deep, OR with p_or else AND"},
          {"p_or", p_or},
          {"p_not", p_not},
          {"p_interval", p_interval},
          {"thresholds", "uniform between the column's min and max"}};
}

namespace {
struct ColumnRange {
  float lo, hi;
};
std::vector<ColumnRange> column_ranges(const Dataset& d) {
  std::vector<ColumnRange> r(d.cols(), ColumnRange{0.0f, 1.0f});
  for (std::size_t c = 0; c < d.cols(); ++c) {
    const float* x = d.column(c);
    float lo = std::numeric_limits<float>::infinity(), hi = -lo;
    for (std::size_t i = 0; i < d.rows(); ++i) {
      if (x[i] != x[i]) continue;
      lo = std::min(lo, x[i]);
      hi = std::max(hi, x[i]);
    }
    if (lo <= hi) r[c] = {lo, hi};
  }
  return r;
}

Rule random_rule_impl(const Dataset& d, const std::vector<ColumnRange>& ranges, const RandomRuleSpec& spec, Rng& rng) {
  using namespace rules;
  Rule rule;
  const int cap = std::max(1, std::min(spec.max_conditions_cap, static_cast<int>(2 * d.cols())));
  const int k = 1 + rng.below_int(cap);
  for (int c = 0; c < k; ++c) {
    const auto a = static_cast<std::uint32_t>(rng.below(d.cols()));
    const Attribute& at = d.attribute(a);
    if (at.is_nominal() && !at.values.empty()) {
      rule.tokens.push_back(make_word(rng.bernoulli(0.5) ? kEq : kNe, a));
      rule.tokens.push_back(float_as_word(static_cast<float>(rng.below(at.values.size()))));
    } else if (rng.bernoulli(spec.p_interval)) {
      float u = static_cast<float>(rng.uniform(ranges[a].lo, ranges[a].hi));
      float v = static_cast<float>(rng.uniform(ranges[a].lo, ranges[a].hi));
      if (u > v) std::swap(u, v);
      rule.tokens.push_back(make_word(rng.bernoulli(0.5) ? kIn : kOut, a));
      rule.tokens.push_back(float_as_word(u));
      rule.tokens.push_back(float_as_word(v));
    } else {
      rule.tokens.push_back(make_word(kGt + static_cast<std::uint32_t>(rng.below(4)), a));
      rule.tokens.push_back(float_as_word(static_cast<float>(rng.uniform(ranges[a].lo, ranges[a].hi))));
    }
    if (rng.bernoulli(spec.p_not)) rule.tokens.push_back(make_word(kNot));
    if (c > 0) rule.tokens.push_back(make_word(rng.bernoulli(spec.p_or) ? kOr : kAnd));
  }
  rule.tokens.push_back(make_word(kEnd));
  const int classes = std::max(1, d.num_classes());
  rule.consequent = rng.below_int(classes);
  return rule;
}
}  // namespace

Rule random_rule(const Dataset& d, const RandomRuleSpec& spec, Rng& rng) {
  return random_rule_impl(d, column_ranges(d), spec, rng);
}

Population random_population(const Dataset& d, std::size_t individuals, const RandomRuleSpec& spec,
                             std::uint64_t seed) {
  GPUDM_REQUIRE(d.cols() > 0, "random_population: dataset '" + d.name() + "' has no attributes");
  const auto ranges = column_ranges(d);
  const int classes = std::max(1, d.num_classes());
  const int nrules = spec.rules_per_individual > 0 ? spec.rules_per_individual : classes;
  const Rng root(seed);
  Population p;
  p.individuals.resize(individuals);
  for (std::size_t i = 0; i < individuals; ++i) {
    Rng rng = root.split(i);
    Individual& ind = p.individuals[i];
    for (int r = 0; r < nrules; ++r) ind.rules.push_back(random_rule_impl(d, ranges, spec, rng));
    ind.default_class = rng.below_int(classes);
  }
  return p;
}

}  // namespace gpudm::pittsburgh
