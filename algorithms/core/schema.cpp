#include "algorithms/core/schema.hpp"

#include <algorithm>
#include <unordered_map>

#include "algorithms/core/error.hpp"

namespace gpudm {

DataSchema DataSchema::of(const Dataset& d) {
  DataSchema s;
  s.attributes = d.attributes();
  if (d.task() == Task::classification) s.classes = d.class_names();
  return s;
}

nlohmann::ordered_json DataSchema::attributes_json() const {
  auto out = nlohmann::ordered_json::array();
  for (const Attribute& a : attributes) {
    nlohmann::ordered_json j = {{"name", a.name}, {"kind", a.is_nominal() ? "nominal" : "numeric"}};
    if (a.is_nominal()) j["values"] = a.values;
    out.push_back(std::move(j));
  }
  return out;
}

DataSchema DataSchema::from_json(const nlohmann::json& attrs, const nlohmann::json* classes, const std::string& where) {
  GPUDM_REQUIRE(attrs.is_array(), where + ": \"attributes\" must be an array");
  DataSchema s;
  for (std::size_t i = 0; i < attrs.size(); ++i) {
    const auto& j = attrs[i];
    const std::string at = where + ": attribute " + std::to_string(i);
    Attribute a;
    if (j.is_string()) {  // names only: no kinds, no categories
      a.name = j.get<std::string>();
      s.categories_known = false;
    } else {
      GPUDM_REQUIRE(j.is_object() && j.contains("name") && j["name"].is_string(), at + ": needs a string \"name\"");
      a.name = j["name"].get<std::string>();
      const std::string kind = j.value("kind", std::string("numeric"));
      GPUDM_REQUIRE(kind == "numeric" || kind == "nominal", at + ": \"kind\" must be numeric or nominal, got '" + kind + "'");
      a.kind = kind == "nominal" ? AttributeKind::nominal : AttributeKind::numeric;
      if (j.contains("values")) {
        GPUDM_REQUIRE(j["values"].is_array(), at + ": \"values\" must be an array of category names");
        for (const auto& v : j["values"]) {
          GPUDM_REQUIRE(v.is_string(), at + ": category names must be strings, got " + v.dump());
          a.values.push_back(v.get<std::string>());
        }
      } else if (a.is_nominal()) {
        s.categories_known = false;
      }
    }
    s.attributes.push_back(std::move(a));
  }
  if (classes) {
    GPUDM_REQUIRE(classes->is_array(), where + ": \"classes\" must be an array");
    for (const auto& c : *classes) {
      GPUDM_REQUIRE(c.is_string(), where + ": class names must be strings, got " + c.dump());
      s.classes.push_back(c.get<std::string>());
    }
  }
  return s;
}

namespace {

std::string names_of(const std::vector<Attribute>& a) {
  std::string out;
  for (std::size_t i = 0; i < a.size() && i < 12; ++i) out += (i ? ", " : "") + a[i].name;
  if (a.size() > 12) out += ", ... (" + std::to_string(a.size()) + ")";
  return out;
}

}  // namespace

AlignReport align_to_schema(const DataSchema& schema, Dataset& data, const std::string& who) {
  AlignReport rep;
  const std::size_t n = schema.attributes.size();
  // Attributes by name.
  std::unordered_map<std::string, std::size_t> in_data;
  for (std::size_t c = 0; c < data.cols(); ++c) in_data.emplace(data.attribute(c).name, c);
  std::vector<std::size_t> from(n);
  for (std::size_t c = 0; c < n; ++c) {
    const auto it = in_data.find(schema.attributes[c].name);
    GPUDM_REQUIRE(it != in_data.end(), who + ": no attribute '" + schema.attributes[c].name + "' in dataset '" + data.name() +
                                           "' (the model's attributes: " + names_of(schema.attributes) +
                                           "; the dataset's: " + names_of(data.attributes()) + ")");
    from[c] = it->second;
    if (from[c] != c) rep.reordered = true;
  }
  GPUDM_REQUIRE(data.cols() == n, who + ": dataset '" + data.name() + "' has " + std::to_string(data.cols()) +
                                      " attributes, the model " + std::to_string(n) + " (the model's: " +
                                      names_of(schema.attributes) + "; the dataset's: " + names_of(data.attributes()) + ")");
  for (std::size_t c = 0; c < n; ++c) {
    const Attribute& want = schema.attributes[c];
    const Attribute& have = data.attribute(from[c]);
    if (!schema.categories_known && have.is_nominal())
      throw Error(who + ": the model records no category names, and attribute '" + have.name + "' of dataset '" +
                  data.name() + "' holds categories; train the model again with this version to score such data");
    if (schema.categories_known || want.is_nominal())
      GPUDM_REQUIRE(want.is_nominal() == have.is_nominal(),
                    who + ": attribute '" + want.name + "' is " + (want.is_nominal() ? "nominal" : "numeric") +
                        " in the model, " + (have.is_nominal() ? "nominal" : "numeric") + " in dataset '" + data.name() + "'");
  }
  const bool classification = data.task() == Task::classification;
  if (!schema.classes.empty() || classification)
    GPUDM_REQUIRE(classification == !schema.classes.empty(),
                  who + ": the model is for " + (schema.classes.empty() ? "regression" : "classification") + ", dataset '" +
                      data.name() + "' is a " + to_string(data.task()) + " dataset");

  // Codes of each nominal attribute: the data's category k -> the schema's index, or -1 (unseen).
  std::vector<std::vector<int>> recode(n);
  bool any_recode = false;
  for (std::size_t c = 0; c < n; ++c) {
    const Attribute& have = data.attribute(from[c]);
    if (!have.is_nominal()) continue;
    const auto& wv = schema.attributes[c].values;
    std::unordered_map<std::string, int> idx;
    for (std::size_t k = 0; k < wv.size(); ++k) idx.emplace(wv[k], static_cast<int>(k));
    recode[c].resize(have.values.size());
    for (std::size_t k = 0; k < have.values.size(); ++k) {
      const auto it = idx.find(have.values[k]);
      recode[c][k] = it == idx.end() ? -1 : it->second;
      if (recode[c][k] != static_cast<int>(k)) any_recode = true;
    }
    if (have.values.size() != wv.size()) any_recode = true;
  }
  std::vector<int> class_code;
  if (classification) {
    std::unordered_map<std::string, int> idx;
    for (std::size_t k = 0; k < schema.classes.size(); ++k) idx.emplace(schema.classes[k], static_cast<int>(k));
    for (const std::string& name : data.class_names()) {
      const auto it = idx.find(name);
      if (it == idx.end()) {
        // Only a class that some row holds matters.
        class_code.push_back(-1);
        continue;
      }
      class_code.push_back(it->second);
    }
    for (std::size_t r = 0; r < data.rows(); ++r)
      if (class_code[static_cast<std::size_t>(data.label(r))] < 0)
        throw Error(who + ": class '" + data.class_names()[static_cast<std::size_t>(data.label(r))] + "' of dataset '" +
                    data.name() + "' (row " + std::to_string(r + 1) + ") is none of the model's classes");
  }
  const bool classes_differ = classification && data.class_names() != schema.classes;
  if (!rep.reordered && !any_recode && !classes_differ) return rep;

  // A re-coded copy in the schema's order.
  Dataset out(data.name(), data.task(), data.rows(), schema.attributes, schema.classes);
  out.source = data.source;
  out.path = data.path;
  out.sha256 = data.sha256;
  out.seed = data.seed;
  out.surrogate = data.surrogate;
  for (std::size_t c = 0; c < n; ++c) {
    const std::size_t f = from[c];
    for (std::size_t r = 0; r < data.rows(); ++r) {
      if (data.is_missing(r, f)) {
        out.set_missing(r, c);
        continue;
      }
      const float v = data.at(r, f);
      if (recode[c].empty()) {
        out.at(r, c) = v;
        continue;
      }
      const int k = recode[c][static_cast<std::size_t>(v)];
      if (k < 0) {
        out.set_missing(r, c);
        ++rep.unseen_categories;
      } else {
        out.at(r, c) = static_cast<float>(k);
      }
    }
  }
  for (std::size_t r = 0; r < data.rows(); ++r) {
    if (classification) out.set_label(r, class_code[static_cast<std::size_t>(data.label(r))]);
    else out.set_target(r, data.target(r));
  }
  data = std::move(out);
  return rep;
}

}  // namespace gpudm
