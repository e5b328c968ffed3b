#pragma once
// The columns a model was trained on, as its file records them, and the re-coding of another
// data file (a test file, a file to score) to them by name. Codes are positions: attribute c,
// category k of a nominal attribute, class k. Two files of the same data can give the same
// category other codes (another order of first appearance, a subset), so a model must never be
// applied to codes it did not see named.
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "algorithms/core/dataset.hpp"

namespace gpudm {

struct DataSchema {
  std::vector<Attribute> attributes;  // names, kinds and, for nominal ones, the category names
  std::vector<std::string> classes;   // classification: the class names; empty for regression
  bool categories_known = true;       // false for a model file written before categories were recorded

  static DataSchema of(const Dataset& d);
  // [{"name", "kind", "values" (nominal)}]
  nlohmann::ordered_json attributes_json() const;
  // The "attributes" array of a model file: objects as attributes_json writes, or (older files)
  // names or {"name", "kind"} objects without "values" (categories_known false then).
  static DataSchema from_json(const nlohmann::json& attributes, const nlohmann::json* classes, const std::string& where);
};

// What align_to_schema changed.
struct AlignReport {
  bool reordered = false;            // the data's attributes came in another order
  std::size_t unseen_categories = 0;  // cells whose category the schema lacks: now missing values
};

// Re-codes `data` to `schema` in place: the attributes matched by name and put in the schema's
// order, each nominal attribute's codes and the class labels re-coded by name. A category the
// schema lacks becomes a missing value; an attribute missing from the data or extra in it, a kind
// that differs, a class the schema lacks, or nominal data against a schema without category names
// is a gpudm::Error starting with `who`.
AlignReport align_to_schema(const DataSchema& schema, Dataset& data, const std::string& who);

}  // namespace gpudm
