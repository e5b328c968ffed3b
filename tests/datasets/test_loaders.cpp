#include <gtest/gtest.h>
#include <zlib.h>

#include <charconv>
#include <cmath>

#include "algorithms/core/rng.hpp"
#include "datasets/file_bytes.hpp"
#include "datasets/loaders.hpp"
#include "test_util.hpp"

using namespace gpudm;
using namespace gpudm::datasets;
using gpudm::datasets::test_support::expect_error;
using gpudm::datasets::test_support::TempDir;

namespace {

LoadOptions csv(const std::string& name = "t") {
  LoadOptions o;
  o.dataset = name;
  o.format = "csv";
  return o;
}

std::string gzip_bytes(const std::string& plain, const TempDir& dir) {
  const std::string p = dir.path() + "/tmp.gz";
  gzFile g = gzopen(p.c_str(), "wb9");
  gzwrite(g, plain.data(), static_cast<unsigned>(plain.size()));
  gzclose(g);
  std::ifstream in(p, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

}  // namespace

TEST(LabelOrder, NumericAwareThenText) {
  std::vector<std::string> v = {"b", "10", "a", "2", "1.5", "-3", "B"};
  std::sort(v.begin(), v.end(), [](const std::string& x, const std::string& y) { return label_less(x, y); });
  EXPECT_EQ(v, (std::vector<std::string>{"-3", "1.5", "2", "10", "B", "a", "b"}));
}

TEST(CsvLoader, UciDataCrlfTrailingBlankLinesStringLabelsFirstColumn) {
  TempDir dir;
  const std::string p = dir.write("x.data", "virginica,1.0,2.5\r\nsetosa,3,4\r\nversicolor,5,-6e-1\r\n\r\n\r\n");
  LoadOptions o = csv();
  o.label_column = 0;
  const Dataset d = load_file(p, o);
  ASSERT_EQ(d.rows(), 3u);
  ASSERT_EQ(d.cols(), 2u);
  EXPECT_EQ(d.class_names(), (std::vector<std::string>{"setosa", "versicolor", "virginica"}));
  EXPECT_EQ(d.label(0), 2);
  EXPECT_EQ(d.label(1), 0);
  EXPECT_EQ(d.label(2), 1);
  EXPECT_FLOAT_EQ(d.at(2, 1), -0.6f);
  EXPECT_EQ(d.source, "file");
  EXPECT_EQ(d.path, p);
  EXPECT_EQ(d.sha256.size(), 64u);
  EXPECT_EQ(d.padded_rows(), 32u);
}

TEST(CsvLoader, TsvHeaderNumericLabelsSortedByValue) {
  TempDir dir;
  const std::string p = dir.write("x.tsv", "a\tb\ttarget\n1\t2\t10\n3\t4\t2\n5\t6\t1\n");
  LoadOptions o = csv();
  o.format = "tsv";
  o.header = true;
  const Dataset d = load_file(p, o);
  EXPECT_EQ(d.attribute(0).name, "a");
  EXPECT_EQ(d.attribute(1).name, "b");
  EXPECT_EQ(d.class_names(), (std::vector<std::string>{"1", "2", "10"}));
  EXPECT_EQ(d.label(0), 2);
  EXPECT_EQ(d.label(2), 0);
}

TEST(CsvLoader, Utf8ByteOrderMarkIsIgnored) {
  TempDir dir;
  const std::string p = dir.write("bom.csv", "\xEF\xBB\xBF" "a,b,class\n1,2,x\n");
  LoadOptions o = csv();
  o.header = true;
  const Dataset d = load_file(p, o);
  EXPECT_EQ(d.attribute(0).name, "a");
}

TEST(CsvLoader, GzipDetectedByMagicBytesNotName) {
  TempDir dir;
  const std::string plain = "1,2,x\n3,4,y\n";
  const std::string p = dir.write("looks_plain.csv", gzip_bytes(plain, dir));
  LoadInfo info;
  const Dataset d = load_file(p, csv(), &info);
  EXPECT_TRUE(info.gzip);
  EXPECT_EQ(d.rows(), 2u);
  EXPECT_FLOAT_EQ(d.at(1, 1), 4.0f);
  // sha256 is of the stored (compressed) bytes.
  const Dataset plain_d = load_file(dir.write("p.csv", plain), csv());
  EXPECT_NE(d.sha256, plain_d.sha256);
}

TEST(CsvLoader, TruncatedGzipIsAnError) {
  TempDir dir;
  std::string gz = gzip_bytes(std::string(5000, '1') + ",2\n", dir);
  gz.resize(gz.size() / 2);
  const std::string p = dir.write("cut.gz", gz);
  expect_error([&] { load_file(p, csv("cut")); }, {"dataset 'cut'", p, "gzip"});
}

TEST(CsvLoader, GzipInflatingPastTheLimitIsAnError) {  // a gzip bomb stops at the cap, named
  TempDir dir;
  const std::string gz = gzip_bytes(std::string(1 << 22, 'a'), dir);  // 4 MiB of 'a': ~4 KB stored
  EXPECT_EQ(gunzip(gz, "bomb.gz", std::size_t{4} << 20).size(), std::size_t{1} << 22);  // exactly at the cap: fine
  expect_error([&] { gunzip(gz, "bomb.gz", std::size_t{1} << 20); }, {"bomb.gz", "inflates past the limit of 1 MiB"});
}

TEST(CsvLoader, KeelHeaderlessVariantWithTrailingSpacesInLabels) {
  TempDir dir;
  // ecoli_336.dat: ", " separators, CRLF, trailing spaces on some labels, no final newline.
  const std::string p = dir.write("ecoli.dat", "0.49, 0.29, cp  \r\n0.07, 0.40, cp\r\n0.56, 0.40, imL   \r\n0.1, 0.2, pp");
  const Dataset d = load_file(p, csv());
  EXPECT_EQ(d.rows(), 4u);
  EXPECT_EQ(d.class_names(), (std::vector<std::string>{"cp", "imL", "pp"}));
  EXPECT_EQ(d.label(0), d.label(1));
}

TEST(CsvLoader, WhitespaceMissingTokensAndDroppedColumns) {
  TempDir dir;
  const std::string p = dir.write("e.dat", "1 80 . 7.5 26.1\n2 80 3.5 . 25.0\n3 80 1 2 .\n4 81 1 2 3\n");
  LoadOptions o = csv();
  o.format = "whitespace";
  o.task = Task::regression;
  o.missing = {"."};
  o.drop_columns = {0};
  o.drop_missing_target = true;
  LoadInfo info;
  const Dataset d = load_file(p, o, &info);
  EXPECT_EQ(d.rows(), 3u);
  EXPECT_EQ(d.cols(), 3u);
  EXPECT_EQ(info.rows_dropped, 1u);
  EXPECT_EQ(info.file_columns, 5u);
  EXPECT_TRUE(d.is_missing(0, 1));
  EXPECT_TRUE(std::isnan(d.at(0, 1)));
  EXPECT_TRUE(d.is_missing(1, 2));
  EXPECT_FALSE(d.is_missing(0, 2));
  EXPECT_FLOAT_EQ(d.target(1), 25.0f);
  EXPECT_FLOAT_EQ(d.target(2), 3.0f);
  EXPECT_NO_THROW(d.validate());
  o.drop_incomplete = true;
  LoadInfo info2;
  const Dataset c = load_file(p, o, &info2);
  EXPECT_EQ(c.rows(), 1u);
  EXPECT_EQ(info2.rows_dropped, 3u);
  EXPECT_FALSE(c.has_missing());
  // Without drop_missing_target a missing target is an error naming the line.
  o.drop_missing_target = false;
  o.drop_incomplete = false;
  expect_error([&] { load_file(p, o); }, {p + ":3: column 5: missing target value"});
}

TEST(CsvLoader, NominalTextColumnsAndMaxRows) {
  TempDir dir;
  const std::string p = dir.write("c4.data", "x,o,b,win\nb,b,x,loss\no,x,x,draw\nx,x,x,win\n");
  LoadOptions o = csv();
  o.all_nominal = true;
  o.max_rows = 3;
  const Dataset d = load_file(p, o);
  EXPECT_EQ(d.rows(), 3u);
  EXPECT_TRUE(d.attribute(0).is_nominal());
  EXPECT_EQ(d.attribute(0).values, (std::vector<std::string>{"b", "o", "x"}));
  EXPECT_FLOAT_EQ(d.at(0, 0), 2.0f);  // x
  EXPECT_EQ(d.class_names(), (std::vector<std::string>{"draw", "loss", "win"}));
}

// Quoted values with doubled quotes are unescaped into a per-row buffer that the next row reuses;
// the open nominal values kept from them must survive that (with the shared tokenizer's buffer
// a heap-use-after-free here, found by fuzz_dataset_csv).
TEST(CsvLoader, EscapedQuotedNominalValuesOutliveTheRow) {
  LoadOptions o = csv();
  o.header = false;
  o.all_nominal = true;
  const Dataset d = load_text("\"a\"\"1\",p\n\"zzzzzzzzzzzzzzzzzzzzzzzzz\"\"q\",q\n\"a\"\"1\",p\nplain,q\n",
                              "t.csv", o);
  ASSERT_EQ(d.rows(), 4u);
  EXPECT_EQ(d.attribute(0).values, (std::vector<std::string>{"a\"1", "plain", "zzzzzzzzzzzzzzzzzzzzzzzzz\"q"}));
  EXPECT_FLOAT_EQ(d.at(0, 0), 0.0f);
  EXPECT_FLOAT_EQ(d.at(1, 0), 2.0f);
  EXPECT_FLOAT_EQ(d.at(2, 0), 0.0f);
  EXPECT_FLOAT_EQ(d.at(3, 0), 1.0f);
}

TEST(CsvLoaderErrors, RaggedRowNamesFileLineAndCounts) {
  TempDir dir;
  const std::string p = dir.write("poker.data", "1,2,3\n4,5,6\n7,8\n");
  expect_error([&] { load_file(p, csv("poker")); }, {"dataset 'poker': " + p + ":3: 2 columns, expected 3"});
}

TEST(CsvLoaderErrors, NaNIsRejected) {
  TempDir dir;
  const std::string p = dir.write("n.csv", "a,b,c\n1,2,x\n1,nan,y\n");
  LoadOptions o = csv("n");
  o.header = true;
  expect_error([&] { load_file(p, o); }, {p + ":3: column 2 ('b'): 'nan' is not a finite number"});
}

TEST(CsvLoaderErrors, TextInNumericColumn) {
  TempDir dir;
  const std::string p = dir.write("t.csv", "1,2,x\n1,abc,y\n");
  expect_error([&] { load_file(p, csv("t")); }, {p + ":2: column 2: expected a number, found 'abc'"});
}

TEST(CsvLoaderErrors, EmptyFile) {
  TempDir dir;
  const std::string p = dir.write("e.csv", "");
  expect_error([&] { load_file(p, csv("e")); }, {"dataset 'e': " + p + ": empty file"});
  const std::string q = dir.write("blank.csv", "\n\r\n  \n");
  expect_error([&] { load_file(q, csv("e")); }, {"empty file"});
  const std::string h = dir.write("header_only.csv", "a,b,class\n");
  LoadOptions o = csv("e");
  o.header = true;
  expect_error([&] { load_file(h, o); }, {"no data rows"});
}

TEST(CsvLoaderErrors, MissingClassLabel) {
  TempDir dir;
  const std::string p = dir.write("m.csv", "1,2,a\n3,4,?\n");
  expect_error([&] { load_file(p, csv("m")); }, {p + ":2: column 3: missing class label"});
  const std::string q = dir.write("m2.csv", "1,2,a\n3,4,\n");
  expect_error([&] { load_file(q, csv("m")); }, {q + ":2: column 3: missing class label"});
}

TEST(CsvLoaderErrors, WrongClassCount) {
  TempDir dir;
  const std::string p = dir.write("w.csv", "1,a\n2,b\n3,c\n");
  LoadOptions o = csv("w");
  o.expected_classes = 2;
  expect_error([&] { load_file(p, o); }, {"dataset 'w': " + p + ": 3 classes found (a, b, c), expected 2"});
}

TEST(CsvLoaderErrors, MissingFileAndBadOptions) {
  expect_error([&] { load_file("/nonexistent/x.csv", csv("x")); }, {"dataset 'x'", "/nonexistent/x.csv"});
  TempDir dir;
  const std::string p = dir.write("o.csv", "1,2\n");
  LoadOptions o = csv("o");
  o.label_column = 5;
  expect_error([&] { load_file(p, o); }, {"label_column 5 is out of range for 2 columns"});
  o = csv("o");
  o.format = "xlsx";
  expect_error([&] { load_file(p, o); }, {"unknown loader format 'xlsx'"});
  expect_error([&] { load_options_from_json({{"fromat", "csv"}}, "here"); }, {"here", "unknown loader key 'fromat'"});
}

TEST(ArffLoader, NumericNominalMissingQuotedNamesComments) {
  TempDir dir;
  const std::string p = dir.write("a.arff",
                                  "% a comment\n"
                                  "@RELATION test\n"
                                  "\n"
                                  "@attribute 'sepal length' numeric\n"
                                  "@attribute colour {red, 'dark blue', green}\n"
                                  "@ATTRIBUTE n INTEGER\n"
                                  "@attribute class {yes,no}\n"
                                  "@data\n"
                                  "% comment inside data\n"
                                  "5.1,red,3,no\n"
                                  "?,'dark blue',4,yes\n"
                                  "4.9,green,?,no\n");
  LoadOptions o;
  o.dataset = "a";
  o.format = "arff";
  const Dataset d = load_file(p, o);
  ASSERT_EQ(d.rows(), 3u);
  ASSERT_EQ(d.cols(), 3u);
  EXPECT_EQ(d.attribute(0).name, "sepal length");
  EXPECT_TRUE(d.attribute(1).is_nominal());
  EXPECT_EQ(d.attribute(1).values, (std::vector<std::string>{"red", "dark blue", "green"}));
  EXPECT_FLOAT_EQ(d.at(1, 1), 1.0f);
  EXPECT_TRUE(d.is_missing(1, 0));
  EXPECT_TRUE(d.is_missing(2, 2));
  EXPECT_FLOAT_EQ(d.at(0, 2), 3.0f);
  // Declared class order is kept.
  EXPECT_EQ(d.class_names(), (std::vector<std::string>{"yes", "no"}));
  EXPECT_EQ(d.label(0), 1);
  EXPECT_EQ(d.label(1), 0);
}

TEST(ArffLoader, RegressionTargetLast) {
  TempDir dir;
  const std::string p = dir.write("r.arff", "@relation r\n@attribute x real\n@attribute class real\n@data\n1,2.5\n2,3.5\n");
  LoadOptions o;
  o.task = Task::regression;
  const Dataset d = load_arff(p, o);
  EXPECT_EQ(d.task(), Task::regression);
  EXPECT_FLOAT_EQ(d.target(1), 3.5f);
}

TEST(ArffLoaderErrors, BadHeader) {
  TempDir dir;
  LoadOptions o;
  o.dataset = "bad";
  o.format = "arff";
  const std::string p = dir.write("b1.arff", "@relation r\n@attribute x nmeric\n@attribute c {a,b}\n@data\n1,a\n");
  expect_error([&] { load_file(p, o); }, {"dataset 'bad': " + p + ":2: @attribute 'x': expected a type", "found 'nmeric'"});
  const std::string q = dir.write("b2.arff", "@relation r\n@attribute x numeric\n@attribute c {a,b}\n1,a\n");
  expect_error([&] { load_file(q, o); }, {q + ":4: expected @relation, @attribute or @data"});
  const std::string s = dir.write("b3.arff", "@relation r\n@attribute x numeric\n@attribute c {a,b}\n");
  expect_error([&] { load_file(s, o); }, {"no @data line"});
  const std::string t = dir.write("b4.arff", "@relation r\n@attribute x string\n@attribute c {a,b}\n@data\n");
  expect_error([&] { load_file(t, o); }, {":2: @attribute 'x': type 'string' is not supported"});
  const std::string u = dir.write("b5.arff", "@relation r\n@attribute x numeric\n@attribute c {a,b}\n@data\n1,c\n");
  expect_error([&] { load_file(u, o); }, {u + ":5: column 2 ('c'): 'c' is not one of the declared values {a, b}"});
  const std::string v = dir.write("b6.arff", "@relation r\n@attribute x numeric\n@attribute c {a,b\n@data\n1,a\n");
  expect_error([&] { load_file(v, o); }, {v + ":3: @attribute: expected a value list"});
  const std::string w = dir.write("b7.arff", "@relation r\n@attribute x numeric\n@attribute c {a,b}\n@data\n{0 1, 1 a}\n");
  expect_error([&] { load_file(w, o); }, {w + ":5: sparse ARFF rows"});
}

TEST(KeelLoader, HeaderWithInputsOutputs) {
  TempDir dir;
  const std::string p = dir.write("k.dat",
                                  "@relation ecoli\r\n"
                                  "@attribute Mcg real [0.0, 0.89]\r\n"
                                  "@attribute Site {cp, im, pp}\r\n"
                                  "@attribute Gvh real [0.16, 1.0]\r\n"
                                  "@inputs Mcg, Gvh\r\n"
                                  "@outputs Site\r\n"
                                  "@data\r\n"
                                  "0.49, pp, 0.29\r\n"
                                  "0.07, cp, <null>\r\n");
  const Dataset d = load_keel(p, LoadOptions{});
  ASSERT_EQ(d.cols(), 2u);
  EXPECT_EQ(d.attribute(1).name, "Gvh");
  EXPECT_EQ(d.class_names(), (std::vector<std::string>{"cp", "im", "pp"}));
  EXPECT_EQ(d.label(0), 2);
  EXPECT_TRUE(d.is_missing(1, 1));
}

TEST(CsvLoader, NumbersEqualFromChars) {
  // The loader's fast path for short decimals must give exactly what std::from_chars gives.
  std::vector<std::string> tokens = {"0", "-0", "7", "007", "181", "1234567", "12345678", "0.5", "-0.25", ".5", "5.",
                                     "0.00", "0.0001234", "0.00001234", "3.14159", "-2.718281828", "1e5", "-1.5E-3",
                                     "8.325200080871582", "16777217", "9999999", "0.1", "0.3", "123.4567"};
  gpudm::Rng rng(3);
  for (int i = 0; i < 3000; ++i) {
    const int digits = 1 + rng.below_int(8);
    std::string t = rng.bernoulli(0.3) ? "-" : "";
    const int dot = rng.below_int(digits + 1);
    for (int k = 0; k < digits; ++k) {
      if (k == dot && k > 0) t += '.';
      t += static_cast<char>('0' + rng.below_int(10));
    }
    tokens.push_back(t);
  }
  std::string text;
  for (const auto& t : tokens) text += t + ",c\n";
  TempDir dir;
  const Dataset d = load_file(dir.write("n.csv", text), csv());
  ASSERT_EQ(d.rows(), tokens.size());
  for (std::size_t r = 0; r < tokens.size(); ++r) {
    float want = 0;
    std::from_chars(tokens[r].data(), tokens[r].data() + tokens[r].size(), want);
    EXPECT_EQ(d.at(r, 0), want) << tokens[r];
  }
}
