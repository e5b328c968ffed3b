#include <gtest/gtest.h>

#include "algorithms/core/registry.hpp"

using namespace gpudm;

struct Thing {
  virtual ~Thing() = default;
  virtual int value() const = 0;
};
struct Seven : Thing {
  int value() const override { return 7; }
};

TEST(Registry, CreatesRegisteredBackend) {
  Registry r;
  r.add<Thing>("fam", "sequential", [] { return std::make_unique<Seven>(); });
  EXPECT_EQ(r.create<Thing>("fam", "sequential")->value(), 7);
}

TEST(Registry, UnavailableBackendThrowsWithReason) {
  Registry r;
  r.add_unavailable("fam", "cuda", "no GPU");
  try {
    r.create<Thing>("fam", "cuda");
    FAIL();
  } catch (const Unavailable& e) {
    EXPECT_NE(std::string(e.what()).find("no GPU"), std::string::npos);
  }
}

TEST(Registry, UnknownBackendListsKnownOnes) {
  Registry r;
  r.add<Thing>("fam", "sequential", [] { return std::make_unique<Seven>(); });
  try {
    r.create<Thing>("fam", "vulkan");
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("sequential"), std::string::npos);
  }
  ASSERT_EQ(r.backends("fam").size(), 1u);
}

TEST(Registry, NamesTheReferenceBackend) {
  Registry r;
  r.add<Thing>("fam", "openmp", [] { return std::make_unique<Seven>(); });
  EXPECT_THROW(r.reference("fam"), Error);
  r.add<Thing>("fam", "sequential", [] { return std::make_unique<Seven>(); }, Registry::Role::reference);
  EXPECT_EQ(r.reference("fam"), "sequential");
  EXPECT_TRUE(r.is_reference("fam", "sequential"));
  EXPECT_FALSE(r.is_reference("fam", "openmp"));
  EXPECT_TRUE(r.info("fam", "sequential").reference);
}
