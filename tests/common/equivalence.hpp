#pragma once
// One equivalence fixture for every family (in the spirit of Ginkgo's "IsEquivalentToRef"): a
// test body written once runs for every backend registered for the family, each compared with
// the family's reference backend (the oracle). A backend that cannot run here (not built, no GPU)
// skips visibly with the registry's reason. Instances are named after the backend
// ("AllBackends/SubtreeEquivalence.Coverage/cuda"), so gpudm_add_test(... GPU_PARAM) gives the
// "/cuda" instances the ctest label gpu.
//
//   struct SubtreeTraits {
//     using Interface = subtree::TreeInterpreter;
//     static constexpr const char* kFamily = "subtree";
//     static void register_backends(Registry& r) { register_subtree(r); }
//   };
//   using SubtreeEquivalence = gpudm::testing::IsEquivalentToRef<SubtreeTraits>;
//   TEST_P(SubtreeEquivalence, Coverage) { auto ref = reference(); auto got = backend(); ... }
//   GPUDM_INSTANTIATE_EQUIVALENCE(SubtreeEquivalence, SubtreeTraits);
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "algorithms/core/registry.hpp"

namespace gpudm::testing {

template <class Traits>
Registry traits_registry() {
  Registry r;
  Traits::register_backends(r);
  return r;
}

// Every backend registered for the family, the reference first (it must equal itself: a check of
// the test body), in registration order.
template <class Traits>
std::vector<std::string> all_backends() {
  const Registry r = traits_registry<Traits>();
  std::vector<std::string> out{r.reference(Traits::kFamily)};
  for (const auto& b : r.backends(Traits::kFamily))
    if (!b.reference) out.push_back(b.backend);
  return out;
}

template <class Traits>
class IsEquivalentToRef : public ::testing::TestWithParam<std::string> {
 protected:
  using Interface = typename Traits::Interface;

  void SetUp() override {
    registry_ = traits_registry<Traits>();
    const BackendInfo& info = registry_.info(Traits::kFamily, GetParam());
    if (!info.available) GTEST_SKIP() << Traits::kFamily << "/" << GetParam() << ": " << info.reason;
  }
  // The backend under test, and a fresh instance of the family's reference backend.
  std::unique_ptr<Interface> backend() const { return registry_.create<Interface>(Traits::kFamily, GetParam()); }
  std::unique_ptr<Interface> reference() const {
    return registry_.create<Interface>(Traits::kFamily, registry_.reference(Traits::kFamily));
  }
  const std::string& backend_name() const { return GetParam(); }
  bool is_reference() const { return registry_.is_reference(Traits::kFamily, GetParam()); }
  const Registry& registry() const { return registry_; }

 private:
  Registry registry_;
};

}  // namespace gpudm::testing

#define GPUDM_INSTANTIATE_EQUIVALENCE(Fixture, Traits)                                                        \
  INSTANTIATE_TEST_SUITE_P(AllBackends, Fixture, ::testing::ValuesIn(::gpudm::testing::all_backends<Traits>()), \
                           [](const ::testing::TestParamInfo<std::string>& i) { return i.param; })
