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
