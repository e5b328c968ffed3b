#pragma once
// Small helpers shared by the generator sources (internal to datasets/).
#include <string>
#include <vector>

#include "algorithms/core/dataset.hpp"

namespace gpudm::datasets::detail {

// prefix + number, built with += (GCC 12 warns falsely about `"x" + std::to_string(i)`).
inline std::string indexed(const char* prefix, long long i) {
  std::string s(prefix);
  s += std::to_string(i);
  return s;
}

inline Attribute numeric_attribute(std::string name) {
  Attribute a;
  a.name = std::move(name);
  return a;
}

inline Attribute nominal_attribute(std::string name, std::vector<std::string> values) {
  Attribute a;
  a.name = std::move(name);
  a.kind = AttributeKind::nominal;
  a.values = std::move(values);
  return a;
}

}  // namespace gpudm::datasets::detail
