#include <gtest/gtest.h>

#include <cmath>

#include "algorithms/core/dataset.hpp"

using namespace gpudm;

static Dataset tiny() {
  std::vector<Attribute> attrs{{"x", AttributeKind::numeric, {}}, {"c", AttributeKind::nominal, {"a", "b"}}};
  Dataset d("tiny", Task::classification, 3, attrs, {"no", "yes"});
  for (int r = 0; r < 3; ++r) {
    d.at(r, 0) = float(r) * 1.5f;
    d.at(r, 1) = float(r % 2);
    d.set_label(r, r % 2);
  }
  return d;
}

TEST(Dataset, ColumnMajorPaddedLayout) {
  Dataset d = tiny();
  EXPECT_EQ(d.padded_rows(), 32u);
  EXPECT_EQ(d.features().size(), 64u);
  EXPECT_EQ(d.column(1) - d.column(0), 32);
  EXPECT_FLOAT_EQ(d.column(0)[2], 3.0f);
  EXPECT_NO_THROW(d.validate());
}

TEST(Dataset, ValidateNamesRowAndAttribute) {
  Dataset d = tiny();
  d.at(1, 0) = std::nanf("");
  try {
    d.validate();
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("row 2"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("'x'"), std::string::npos) << e.what();
  }
}

TEST(Dataset, MissingCellsAreAllowed) {
  Dataset d = tiny();
  d.set_missing(0, 0);
  EXPECT_TRUE(d.is_missing(0, 0));
  EXPECT_NO_THROW(d.validate());
}

TEST(Dataset, ClassOutOfRangeRejected) {
  Dataset d = tiny();
  d.set_label(2, 5);
  EXPECT_THROW(d.validate(), Error);
}

TEST(Dataset, SelectKeepsRowsAndMetadata) {
  Dataset d = tiny();
  Dataset s = d.select({2, 0});
  EXPECT_EQ(s.rows(), 2u);
  EXPECT_FLOAT_EQ(s.at(0, 0), 3.0f);
  EXPECT_EQ(s.label(1), 0);
  EXPECT_EQ(s.num_classes(), 2);
}

// slice() copies each column's range; it must equal select() of the same rows: values, missing
// cells (mask and NaN), labels and targets, at an offset and across the padding of both
static void expect_same(const Dataset& a, const Dataset& b) {
  ASSERT_EQ(a.rows(), b.rows());
  ASSERT_EQ(a.cols(), b.cols());
  EXPECT_EQ(a.has_missing(), b.has_missing());
  for (std::size_t c = 0; c < a.cols(); ++c)
    for (std::size_t r = 0; r < a.rows(); ++r) {
      EXPECT_EQ(a.is_missing(r, c), b.is_missing(r, c)) << r << "," << c;
      if (!a.is_missing(r, c)) EXPECT_EQ(a.at(r, c), b.at(r, c)) << r << "," << c;
      else EXPECT_TRUE(std::isnan(b.at(r, c)));
    }
  for (std::size_t r = 0; r < a.rows(); ++r) {
    if (a.task() == Task::classification) EXPECT_EQ(a.label(r), b.label(r));
    else EXPECT_EQ(a.target(r), b.target(r));
  }
}

TEST(Dataset, SliceEqualsSelectOfTheSameRows) {
  std::vector<Attribute> attrs{{"x", AttributeKind::numeric, {}}, {"y", AttributeKind::numeric, {}}};
  Dataset reg("reg", Task::regression, 100, attrs);
  Dataset cls("cls", Task::classification, 100, attrs, {"a", "b", "c"});
  for (std::size_t r = 0; r < 100; ++r) {
    for (Dataset* d : {&reg, &cls}) {
      d->at(r, 0) = float(r) * 0.5f;
      d->at(r, 1) = float(r % 7) - 3.0f;
    }
    reg.set_target(r, float(r) * 0.25f - 1.0f);
    cls.set_label(r, int(r % 3));
  }
  reg.set_missing(40, 1);
  reg.set_missing(70, 0);
  for (const Dataset* d : {&reg, &cls})
    for (auto [b, e] : {std::pair<std::size_t, std::size_t>{0, 100}, {33, 97}, {40, 41}, {50, 50}}) {
      std::vector<std::size_t> idx;
      for (std::size_t r = b; r < e; ++r) idx.push_back(r);
      SCOPED_TRACE(d->name() + " " + std::to_string(b) + ".." + std::to_string(e));
      expect_same(d->select(idx), d->slice(b, e));
    }
  // A missing cell filled in place (GMT's imputation) keeps its value through both, mask and all.
  reg.at(40, 1) = 2.5f;
  for (const Dataset& part : {reg.select({40, 41}), reg.slice(40, 42)}) {
    EXPECT_TRUE(part.is_missing(0, 1));
    EXPECT_EQ(part.at(0, 1), 2.5f);
  }
  EXPECT_TRUE(reg.slice(33, 97).has_missing());
  EXPECT_FALSE(reg.slice(0, 40).has_missing());
  EXPECT_THROW(reg.slice(60, 101), Error);
}
