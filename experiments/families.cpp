#include "experiments/families.hpp"

#include "algorithms/core/error.hpp"

namespace gpudm::experiments {

void FamilySet::add(std::unique_ptr<Family> family) {
  GPUDM_REQUIRE(family != nullptr, "FamilySet::add: null family");
  if (find(family->name())) throw Error("family '" + family->name() + "' registered twice");
  families_.push_back(std::move(family));
}

Family* FamilySet::find(const std::string& name) const {
  for (const auto& f : families_)
    if (f->name() == name) return f.get();
  return nullptr;
}

std::vector<std::string> FamilySet::names() const {
  std::vector<std::string> out;
  for (const auto& f : families_) out.push_back(f->name());
  return out;
}

}  // namespace gpudm::experiments
