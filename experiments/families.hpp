#pragma once
// The set of families a runner knows. The product binary builds it from the generated list
// gpudm/runnable_families.inc (product_families()); tests build their own with test-only
// families so those never appear in the product's list.
#include <memory>
#include <string>
#include <vector>

#include "algorithms/core/family.hpp"

namespace gpudm::experiments {

class FamilySet {
 public:
  void add(std::unique_ptr<Family> family);
  Family* find(const std::string& name) const;
  std::vector<std::string> names() const;
  bool empty() const { return families_.empty(); }

 private:
  std::vector<std::unique_ptr<Family>> families_;
};

// Every runnable family compiled into this build (algorithms/<f>/family_<f>.cpp).
FamilySet product_families();

}  // namespace gpudm::experiments
