// The one tokenizer of delimited text (datasets/fields.hpp): data-file and RFC 4180 syntax.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "datasets/fields.hpp"

using namespace gpudm::datasets;

namespace {
struct Split {
  FieldsStatus status;
  std::vector<std::string> fields;
};
Split split(std::string_view line, const FieldSyntax& s) {
  std::vector<std::string_view> f;
  std::string scratch;
  const FieldsStatus st = split_fields(line, s, f, scratch);
  return {st, std::vector<std::string>(f.begin(), f.end())};
}
using V = std::vector<std::string>;
}  // namespace

TEST(Fields, DataFilesTrimUnwrapBothQuotesAndKeepStrayQuotes) {
  const FieldSyntax csv = FieldSyntax::data(',');
  EXPECT_EQ(split(" a , 'b c' ,\"d, e\" ,", csv).fields, (V{"a", "b c", "d, e", ""}));
  EXPECT_EQ(split("", csv).fields, (V{""}));
  // A doubled quote inside quotes stands for one (an RFC 4180 header written by a spreadsheet).
  EXPECT_EQ(split("\"say \"\"hi\"\"\",'it''s',\"\"", csv).fields, (V{"say \"hi\"", "it's", ""}));
  // Quotes that do not wrap a whole field are data, as they stand.
  Split s = split("5\"3,\"ab\"c,\"open", csv);
  EXPECT_EQ(s.fields, (V{"5\"3", "\"ab\"c", "\"open"}));
  EXPECT_EQ(s.status, FieldsStatus::open_quote);
  EXPECT_EQ(split("1\t'a b'\t\t2", FieldSyntax::data('\t')).fields, (V{"1", "a b", "", "2"}));
}

TEST(Fields, RunsOfBlanks) {
  const FieldSyntax ws = FieldSyntax::data(0);
  EXPECT_EQ(split("  1  2.5\t'x y'   \"q\"\"r\" ", ws).fields, (V{"1", "2.5", "x y", "q\"r"}));
  EXPECT_EQ(split("   ", ws).fields, V{});
}

TEST(Fields, Rfc4180KeepsBlanksAndReportsStrayQuotes) {
  const FieldSyntax rfc = FieldSyntax::rfc4180();
  Split s = split(" a ,'b',\"c, \"\"d\"\"\"", rfc);
  EXPECT_EQ(s.status, FieldsStatus::ok);
  EXPECT_EQ(s.fields, (V{" a ", "'b'", "c, \"d\""}));
  EXPECT_EQ(split("a,b\"c", rfc).status, FieldsStatus::stray_quote);
  EXPECT_EQ(split("\"a\" ,b", rfc).status, FieldsStatus::stray_quote);
  EXPECT_EQ(split("a,\"b", rfc).status, FieldsStatus::open_quote);
}

TEST(Fields, ViewsIntoScratchStayValidForTheWholeLine) {
  // Many unescaped fields on one line: the scratch buffer must not move under earlier views.
  std::string line;
  V expect;
  for (int i = 0; i < 200; ++i) {
    std::string v = std::to_string(i);
    v.insert(v.begin(), 'v');
    if (i) line += ',';
    line += '"';
    line += v;
    line += "\"\"\"";
    v += '"';
    expect.push_back(v);
  }
  EXPECT_EQ(split(line, FieldSyntax::data(',')).fields, expect);
}
