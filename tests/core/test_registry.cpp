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

namespace {
// A backend that reports fixed capabilities.
struct Caps : Backend {
  explicit Caps(Capabilities c) : c_(std::move(c)) {}
  std::string name() const override { return "caps"; }
  Capabilities capabilities() const override { return c_; }
  Capabilities c_;
};
std::unique_ptr<Backend> make_caps(Placement where, bool threads) {
  Capabilities c;
  c.placement = where;
  c.threads = threads;
  return std::make_unique<Caps>(c);
}
}  // namespace

TEST(Registry, PicksABackendByCapabilitiesNotByName) {
  Registry r;
  r.add<Backend>("fam", "one", [] { return make_caps(Placement::host, false); }, Registry::Role::reference);
  r.add<Backend>("fam", "two", [] { return make_caps(Placement::device, false); });
  r.add_unavailable("fam", "three", "not built");
  auto pool = [](const Capabilities& c) { return c.host() && c.threads; };
  auto device = [](const Capabilities& c) { return c.device(); };
  EXPECT_EQ(r.first_available("fam", pool), "one");  // none matches: the reference
  EXPECT_EQ(r.first_available("fam", device), "two");
  EXPECT_FALSE(r.capabilities("fam", "three").has_value());
  EXPECT_FALSE(r.capabilities("fam", "nope").has_value());
  r.add<Backend>("fam", "four", [] { return make_caps(Placement::host, true); });
  EXPECT_EQ(r.first_available("fam", pool), "four");
  ASSERT_TRUE(r.capabilities("fam", "two").has_value());
  EXPECT_TRUE(r.capabilities("fam", "two")->device());
  // Interfaces that are no Backend have no capabilities to ask.
  r.add<Thing>("other", "sequential", [] { return std::make_unique<Seven>(); }, Registry::Role::reference);
  EXPECT_FALSE(r.capabilities("other", "sequential").has_value());
  EXPECT_EQ(r.first_available("other", pool), "sequential");
}
