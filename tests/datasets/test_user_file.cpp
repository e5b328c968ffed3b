// A user's own data file by path (datasets/user_file.hpp), and datasets larger than the host
// memory reported instead of std::bad_alloc.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "algorithms/core/text.hpp"
#include "datasets/catalog.hpp"
#include "datasets/loaders.hpp"
#include "datasets/user_file.hpp"
#include "test_util.hpp"

using namespace gpudm;
using namespace gpudm::datasets;
using gpudm::datasets::test_support::expect_error;
using gpudm::datasets::test_support::TempDir;

namespace {

const char* kHouses = "rooms,area,kind,price\n3,70,flat,1.5\n4,90,house,2.0\n2,45,flat,0.9\n";

void gzip_to(const std::string& path, const std::string& plain) {
  gzFile g = gzopen(path.c_str(), "wb9");
  gzwrite(g, plain.data(), static_cast<unsigned>(plain.size()));
  gzclose(g);
}

}  // namespace

TEST(UserFile, CsvWithHeaderTargetByNameOrNumber) {
  TempDir dir;
  const std::string p = dir.write("houses.csv", kHouses);
  Dataset d = load_user_file(p, {{"target", "kind"}});  // text values: classification
  EXPECT_EQ(d.task(), Task::classification);
  EXPECT_EQ(d.cols(), 3u);
  EXPECT_EQ(d.class_names(), (std::vector<std::string>{"flat", "house"}));
  EXPECT_EQ(d.attribute(2).name, "price");
  EXPECT_EQ(d.name(), p);
  EXPECT_EQ(d.source, "file");
  EXPECT_EQ(d.sha256.size(), 64u);
  d = load_user_file(p, {{"target", 2}, {"task", "regression"}});  // 1-based: "area"
  EXPECT_EQ(d.task(), Task::regression);
  EXPECT_FLOAT_EQ(d.target(1), 90.0f);
  EXPECT_EQ(load_user_file(p, {{"target", "price"}, {"task", "regression"}, {"rows", 2}}).rows(), 2u);
}

TEST(UserFile, ANumericTargetNeedsTheTask) {
  TempDir dir;
  const std::string p = dir.write("houses.csv", kHouses);
  expect_error([&] { load_user_file(p, nlohmann::json::object()); },
               {"target column holds numbers", "--task classification|regression"});
  expect_error([&] { load_user_file(p, {{"target", "prise"}, {"task", "regression"}}); },
               {"no column named 'prise'", "columns: rooms, area, kind, price"});
  expect_error([&] { load_user_file(p, {{"task", "regresion"}}); }, {"task must be"});
  expect_error([&] { load_user_file(p, {{"sep", ";"}}); }, {"unknown option 'sep'"});
  expect_error([&] { load_user_file(p, {{"target", 0}}); }, {"column number >= 1"});
}

TEST(UserFile, FormatsFromTheExtensionGzipIncluded) {
  TempDir dir;
  // TSV without a header: target by number.
  Dataset d = load_user_file(dir.write("x.tsv", "1\t2\ta\n3\t4\tb\n"), {{"target", 3}});
  EXPECT_EQ(d.cols(), 2u);
  EXPECT_EQ(d.num_classes(), 2);
  // ARFF: the declaration decides the task.
  const std::string arff = "@relation r\n@attribute x numeric\n@attribute y numeric\n@attribute c {p,q}\n@data\n1,2,p\n3,4,q\n";
  EXPECT_EQ(load_user_file(dir.write("a.arff", arff), nlohmann::json::object()).task(), Task::classification);
  d = load_user_file(dir.write("b.arff", arff), {{"target", "y"}});
  EXPECT_EQ(d.task(), Task::regression);
  EXPECT_FLOAT_EQ(d.target(1), 4.0f);
  // KEEL .dat: @outputs names the target.
  const std::string keel =
      "@relation k\n@attribute a real [0, 9]\n@attribute cls {u, v}\n@attribute b real [0, 9]\n@inputs a, b\n@outputs cls\n"
      "@data\n1, u, 2\n3, v, 4\n";
  d = load_user_file(dir.write("k.dat", keel), nlohmann::json::object());
  EXPECT_EQ(d.class_names(), (std::vector<std::string>{"u", "v"}));
  // gzip, whatever the name ends with after .gz; empty cells are missing values.
  const std::string gz = dir.path() + "/h.csv.gz";
  gzip_to(gz, "a,b,y\n1,,0.5\n2,3,0.7\n");
  d = load_user_file(gz, {{"task", "regression"}});
  EXPECT_EQ(d.rows(), 2u);
  EXPECT_TRUE(d.is_missing(0, 1));
  expect_error([&] { load_user_file(dir.write("x.xlsx", "PK"), nlohmann::json::object()); }, {"cannot tell the format"});
  EXPECT_EQ(load_user_file(dir.write("x.xlsx2", "a b c\n1 2 x\n"), {{"format", "whitespace"}}).rows(), 1u);
}

TEST(UserFile, TheCatalogProviderLoadsAPathInsteadOfACatalogName) {
  TempDir dir;
  const std::string p = dir.write("d/houses.csv", kHouses);
  CatalogProvider provider(Catalog::builtin(), {});
  const auto d = provider.get(p, {{"target", "price"}, {"task", "regression"}});
  EXPECT_EQ(d->rows(), 3u);
  EXPECT_TRUE(is_user_file(p, false));
  EXPECT_TRUE(is_user_file("no/such/file.csv", false));  // a '/' says path, existing or not
  EXPECT_FALSE(is_user_file("iris", true));
  expect_error([&] { provider.get(dir.path() + "/missing.csv", nlohmann::json::object()); }, {"cannot open"});
}

TEST(DatasetSize, MoreRowsThanTheMachineHoldsSayWhatWasAskedAndWhatIsAvailable) {
  const std::vector<Attribute> attrs(10, Attribute{"x", AttributeKind::numeric, {}});
  expect_error([&] { Dataset d("big", Task::regression, 1000000000000ull, attrs); },
               {"dataset 'big': 1000000000000 rows x 10 attributes need 44.0 TB of host memory", "available"});
  expect_error([&] { Dataset d("huge", Task::regression, ~std::size_t{0} / 8, attrs); }, {"dataset 'huge'", "need"});
  EXPECT_GT(Dataset::available_host_memory(), 0u);
  Dataset small("small", Task::regression, 1000, attrs);  // below the threshold nothing is read
  EXPECT_EQ(small.rows(), 1000u);
}

// Inputs the fuzz campaign found (docs/reliability.md); each crashes a loader without the check tested.
TEST(FuzzFindings, ANominalColumnWithOnlyMissingValues) {
  LoadOptions o;
  o.dataset = "f";
  o.all_nominal = true;
  o.header = true;
  const Dataset d = load_text("a,b,y\n?,1,x\n?,2,y\n", "f.csv", o);
  EXPECT_TRUE(d.is_missing(0, 0));
  EXPECT_TRUE(d.is_missing(1, 0));
  EXPECT_TRUE(d.attribute(0).values.empty());
}

// One odd cell must not turn a numeric column into categories: the common spellings of a missing
// value are missing values, a non-finite number is an error naming line and column, and a
// column that does become categories although it is mostly numbers is said on stderr.
TEST(UserFile, MissingValueSpellingsKeepAColumnNumeric) {
  TempDir dir;
  for (const std::string na : {"NA", "N/A", "NULL", "null", "nan", "NaN", "None", "#N/A", "<null>", "?", ""}) {
    const std::string p = dir.write("m.csv", "x,y,price\n1," + na + ",1.5\n2,4,2.0\n3,5,2.5\n");
    const Dataset d = load_user_file(p, {{"task", "regression"}});
    SCOPED_TRACE(na);
    EXPECT_EQ(d.attribute(1).kind, AttributeKind::numeric);
    EXPECT_TRUE(d.is_missing(0, 1));
    EXPECT_FLOAT_EQ(d.at(1, 1), 4.0f);
  }
  // A missing target is no class "NA": the row is an error (or dropped when asked).
  expect_error([&] { load_user_file(dir.write("t.csv", "x,c\n1,a\n2,NA\n3,b\n"), nlohmann::json::object()); },
               {"t.csv:3:", "missing class label"});
}

TEST(UserFile, NonFiniteNumbersAreErrorsNamingLineAndColumn) {
  TempDir dir;
  for (const std::string bad : {"inf", "-Infinity", "1e309"}) {
    SCOPED_TRACE(bad);
    expect_error([&] { load_user_file(dir.write("n.csv", "x,y,price\n1,2,1.5\n2," + bad + ",2.0\n"), {{"task", "regression"}}); },
                 {"n.csv:3:", "('y')", bad});
  }
}

TEST(UserFile, AMostlyNumericColumnReadAsCategoriesIsSaid) {
  TempDir dir;
  const std::string p = dir.write("w.csv", "x,y,price\n1,2,1.5\n2,3,2.0\n3,oops,2.5\n4,5,3.0\n");
  testing::internal::CaptureStderr();
  const Dataset d = load_user_file(p, {{"task", "regression"}});
  const std::string err = testing::internal::GetCapturedStderr();
  EXPECT_EQ(d.attribute(1).kind, AttributeKind::nominal);
  EXPECT_NE(err.find("column 'y' is read as categories"), std::string::npos) << err;
  EXPECT_NE(err.find("'oops', line 4"), std::string::npos) << err;
  // A column of words is categories without a word said.
  testing::internal::CaptureStderr();
  load_user_file(dir.write("k.csv", "kind,price\nflat,1\nhouse,2\n"), {{"task", "regression"}});
  EXPECT_EQ(testing::internal::GetCapturedStderr(), "");
}

TEST(UserFile, HeaderDetectionAndNoDataRows) {
  TempDir dir;
  // A header whose cells include a number is still a header: "x1" is a word above numbers.
  Dataset d = load_user_file(dir.write("h.csv", "x1,2020,price\n1,2,1.5\n2,3,2.0\n"), {{"task", "regression"}});
  EXPECT_EQ(d.rows(), 2u);
  EXPECT_EQ(d.attribute(1).name, "2020");
  // The option overrides: the same file read as data fails on its words, not silently.
  EXPECT_EQ(load_user_file(dir.write("n.csv", "1,2,1.5\n2,3,2.0\n"), {{"task", "regression"}, {"header", false}}).rows(), 2u);
  // A header with no rows under it is an error, not a one-row dataset.
  expect_error([&] { load_user_file(dir.write("o.csv", "a,b,class\n"), nlohmann::json::object()); },
               {"no data rows", "only a header line"});
  expect_error([&] { load_user_file(dir.write("e.csv", "\n\n"), nlohmann::json::object()); }, {"no data rows"});
}

TEST(UserFile, BinaryFilesAndPipesAreRefusedBeforeParsing) {
  TempDir dir;
  expect_error([&] { load_user_file(dir.write("b.csv", std::string("a,b\n1,\0\0\x01\x02", 10)), nlohmann::json::object()); },
               {"not a text file", "NUL byte at offset 6"});
  const std::string fifo = dir.path() + "/p.csv";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  expect_error([&] { load_user_file(fifo, nlohmann::json::object()); }, {"a FIFO (a pipe), not a file"});
}

// The format is checked before the whole file is read: a 40 GiB sparse file (over the 32 GiB cap)
// that is binary, or whose name says no format, is refused from its name or its first 64 KiB
// (the whole-file checks used to come first: "larger than the limit").
TEST(UserFile, TheFormatIsCheckedBeforeTheWholeFileIsRead) {
  TempDir dir;
  const auto sparse = [&](const std::string& name, const std::string& head) {
    const std::string p = dir.write(name, head);
    EXPECT_EQ(::truncate(p.c_str(), static_cast<off_t>(std::size_t{40} << 30)), 0);
    return p;
  };
  expect_error([&] { load_user_file(sparse("big.csv", "a,b\n1,2\n"), nlohmann::json::object()); },
               {"not a text file", "NUL byte at offset 8"});
  expect_error([&] { load_user_file(sparse("big.xyz", "a,b\n1,2\n"), nlohmann::json::object()); },
               {"cannot tell the format from the extension '.xyz'"});
  // The same file with a format it can have reaches the size check.
  expect_error([&] { load_user_file(sparse("big.data", std::string(70000, 'a')), nlohmann::json::object()); },
               {"larger than the limit"});
}

// Each column's bookkeeping used to cost ~1.2 KB (an empty std::deque allocates), so two million
// columns of two rows needed 2.6 GB. What a parse needs is checked before the columns exist.
TEST(UserFile, WideFilesLoadAndWhatAParseNeedsIsCheckedFirst) {
  TempDir dir;
  std::string text;
  const int columns = 20000;
  for (int r = 0; r < 3; ++r) {
    for (int c = 0; c < columns; ++c) text += (r == 0 ? "x" + std::to_string(c) : std::to_string((c * 7 + r) % 13)) + ",";
    text += r == 0 ? "y\n" : std::to_string(r) + "\n";
  }
  const Dataset d = load_user_file(dir.write("wide.csv", text), {{"task", "regression"}});
  EXPECT_EQ(d.cols(), static_cast<std::size_t>(columns));
  EXPECT_EQ(d.rows(), 2u);
  EXPECT_EQ(Dataset::memory_shortfall(100.0 * 1048576, 0, "read it"), "");  // unknown: taken as fitting
  EXPECT_EQ(Dataset::memory_shortfall(100.0 * 1048576, std::size_t{200} << 20, "read it"), "");
  EXPECT_EQ(Dataset::memory_shortfall(300.0 * 1048576, std::size_t{200} << 20, "read 7 columns of about 9 rows"),
            "needs about 300 MiB of host memory to read 7 columns of about 9 rows; 200 MiB are available");
}

// JSON holds UTF-8 only: a Latin-1 header used to fail the results write after the whole run.
TEST(UserFile, NamesThatAreNotUtf8AreRefusedOrEscapedBeforeTheRun) {
  TempDir dir;
  expect_error([&] { load_user_file(dir.write("l.csv", "caf\xE9,price\n1,2\n3,4\n"), {{"task", "regression"}}); },
               {"the attribute name 'caf\\xE9' is not UTF-8 text (byte 0xE9 at offset 3)", "save the file as UTF-8"});
  expect_error([&] { load_user_file(dir.write("c.csv", "x,kind\n1,caf\xE9\n2,tea\n"), nlohmann::json::object()); },
               {"the class name 'caf\\xE9' is not UTF-8"});
  // A file name in Latin-1 loads; the dataset's name escapes the byte.
  const Dataset d = load_user_file(dir.write("d\xE9.csv", "x,price\n1,2\n3,4\n"), {{"task", "regression"}});
  EXPECT_NE(d.name().find("d\\xE9.csv"), std::string::npos) << d.name();
  EXPECT_EQ(utf8_error_at(d.name()), std::string::npos);
  EXPECT_EQ(utf8_escaped("caf\xC3\xA9"), "caf\xC3\xA9");  // well-formed UTF-8 is unchanged
  EXPECT_EQ(utf8_error_at("\xED\xA0\x80"), 0u);          // a surrogate
  EXPECT_EQ(utf8_error_at("ok\xE2\x82"), 2u);            // cut short
}
