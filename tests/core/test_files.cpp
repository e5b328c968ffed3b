// The one output writer (algorithms/core/files.hpp), the default model file name, and the
// re-coding of a data file to a model's schema by name (algorithms/core/schema.hpp). Device
// nodes are made with mknod in a temporary folder, never the machine's own /dev/null or /dev/full.
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <cerrno>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "algorithms/core/error.hpp"
#include "algorithms/core/files.hpp"
#include "algorithms/core/json_limits.hpp"
#include "algorithms/core/schema.hpp"

namespace fs = std::filesystem;
using namespace gpudm;

namespace {

struct Tmp {
  fs::path dir;
  Tmp() {
    std::string t = (fs::temp_directory_path() / "gpudm_files_XXXXXX").string();
    dir = ::mkdtemp(t.data());
  }
  ~Tmp() {
    std::error_code ec;
    fs::remove_all(dir, ec);
  }
  std::string operator/(const std::string& name) const { return (dir / name).string(); }
};

std::string slurp(const std::string& p) {
  std::ifstream in(p);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST(WriteFile, ARegularFileIsReplacedAndASymlinkStaysALink) {
  Tmp t;
  write_file_atomic(t / "sub/a.json", "one");  // folders created
  EXPECT_EQ(slurp(t / "sub/a.json"), "one");
  write_file_atomic(t / "sub/a.json", "two");
  EXPECT_EQ(slurp(t / "sub/a.json"), "two");
  // A link to a file: the file gets the content, the link is still a link to it.
  fs::create_symlink(t / "sub/a.json", t / "link.json");
  write_file_atomic(t / "link.json", "three");
  EXPECT_TRUE(fs::is_symlink(t / "link.json"));
  EXPECT_EQ(slurp(t / "sub/a.json"), "three");
  // A dangling link: the file it names is created.
  fs::create_symlink(t / "made.json", t / "dangling.json");
  write_file_atomic(t / "dangling.json", "four");
  EXPECT_TRUE(fs::is_symlink(t / "dangling.json"));
  EXPECT_EQ(slurp(t / "made.json"), "four");
  // No temp file left behind.
  for (const auto& e : fs::directory_iterator(t.dir / "sub")) EXPECT_EQ(e.path().filename(), "a.json");
  EXPECT_NE(error_of([&] { write_file_atomic(t / "sub", "x"); }).find("is a folder"), std::string::npos);
}

TEST(WriteFile, DeviceNodesAreWrittenThroughNeverReplaced) {
  Tmp t;
  if (::mknod((t / "null").c_str(), S_IFCHR | 0666, makedev(1, 3)) != 0 ||
      ::mknod((t / "full").c_str(), S_IFCHR | 0666, makedev(1, 7)) != 0)
    GTEST_SKIP() << "mknod needs root: " << std::strerror(errno);
  struct stat before {};
  ASSERT_EQ(::stat((t / "null").c_str(), &before), 0);
  const std::string why = error_of([&] { write_file_atomic(t / "null", "anything"); });
  if (why.find("Permission denied") != std::string::npos || why.find("Operation not permitted") != std::string::npos)
    GTEST_SKIP() << "this file system does not open device nodes (nodev): " << why;
  EXPECT_EQ(why, "");
  struct stat after {};
  ASSERT_EQ(::stat((t / "null").c_str(), &after), 0);
  EXPECT_TRUE(S_ISCHR(after.st_mode));  // still the device, not a regular file
  EXPECT_EQ(after.st_rdev, before.st_rdev);
  // /dev/full: the write error is reported, not swallowed.
  EXPECT_NE(error_of([&] { write_file_atomic(t / "full", "x"); }).find("No space left"), std::string::npos);
}

TEST(WriteFile, AFifoIsWrittenThroughWhenReadAndRefusedWhenNot) {
  Tmp t;
  ASSERT_EQ(::mkfifo((t / "fifo").c_str(), 0600), 0);
  EXPECT_NE(error_of([&] { write_file_atomic(t / "fifo", "x"); }).find("nothing reads"), std::string::npos);
  std::string got;
  std::thread reader([&] {
    const int fd = ::open((t / "fifo").c_str(), O_RDONLY);
    char buf[64];
    ssize_t n;
    while ((n = ::read(fd, buf, sizeof buf)) > 0) got.append(buf, static_cast<std::size_t>(n));
    ::close(fd);
  });
  // The reader opens asynchronously: retry until it is there.
  std::string why;
  for (int i = 0; i < 500; ++i) {
    why = error_of([&] { write_file_atomic(t / "fifo", "through the fifo"); });
    if (why.empty()) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  reader.join();
  EXPECT_EQ(why, "");
  EXPECT_EQ(got, "through the fifo");
  struct stat st {};
  ASSERT_EQ(::stat((t / "fifo").c_str(), &st), 0);
  EXPECT_TRUE(S_ISFIFO(st.st_mode));
}

TEST(WriteFile, DefaultModelNamesAreTheDatasetsBaseName) {
  EXPECT_EQ(default_model_path("gmt", "../data/my set.csv.gz"), "gmt_my_set.json");
  EXPECT_EQ(default_model_path("gmt", "/abs/path/houses.csv"), "gmt_houses.json");
  EXPECT_EQ(default_model_path("gp_rules_falco", "iris"), "gp_rules_falco_iris.json");
  EXPECT_EQ(default_model_path("gmt", "data/.."), "gmt_data.json");
  EXPECT_EQ(default_model_path("gmt", "x/"), "gmt_data.json");
}

namespace {

Dataset shop(const std::vector<std::string>& kinds, const std::vector<std::string>& rows_kind, bool swap = false) {
  std::vector<Attribute> attrs = {{"size", AttributeKind::numeric, {}}, {"kind", AttributeKind::nominal, kinds}};
  if (swap) std::swap(attrs[0], attrs[1]);
  Dataset d("shop", Task::classification, rows_kind.size(), attrs, {"cheap", "dear"});
  for (std::size_t r = 0; r < rows_kind.size(); ++r) {
    const float code = static_cast<float>(std::find(kinds.begin(), kinds.end(), rows_kind[r]) - kinds.begin());
    d.at(r, swap ? 1 : 0) = static_cast<float>(r + 1);
    d.at(r, swap ? 0 : 1) = code;
    d.set_label(r, static_cast<int>(r % 2));
  }
  return d;
}

}  // namespace

TEST(Schema, CategoriesAndColumnsAreMatchedByName) {
  const Dataset train = shop({"flat", "house", "barn"}, {"flat", "house", "barn"});
  const DataSchema s = DataSchema::of(train);
  // Another file: its categories in another order, a subset, and its columns swapped.
  Dataset other = shop({"house", "flat"}, {"house", "flat", "house"}, true);
  const AlignReport rep = align_to_schema(s, other, "test");
  EXPECT_TRUE(rep.reordered);
  EXPECT_EQ(other.attribute(0).name, "size");
  EXPECT_EQ(other.attribute(1).values, (std::vector<std::string>{"flat", "house", "barn"}));
  EXPECT_EQ(other.at(0, 1), 1.0f);  // house is the schema's 1
  EXPECT_EQ(other.at(1, 1), 0.0f);  // flat 0
  EXPECT_EQ(other.at(2, 0), 3.0f);
  // An unseen category is a missing value, counted.
  Dataset unseen = shop({"flat", "tent"}, {"tent", "flat"});
  EXPECT_EQ(align_to_schema(s, unseen, "test").unseen_categories, 1u);
  EXPECT_TRUE(unseen.is_missing(0, 1));
  // Classes by name: the other order is re-coded.
  Dataset flipped = shop({"flat", "house", "barn"}, {"flat", "house"});
  flipped.set_class_names({"dear", "cheap"});
  align_to_schema(s, flipped, "test");
  EXPECT_EQ(flipped.label(0), 1);  // row 0 held "dear" (code 0 in its file)
  EXPECT_EQ(flipped.class_names(), (std::vector<std::string>{"cheap", "dear"}));
}

TEST(Schema, MismatchesAreErrorsAndOldModelsRefuseCategories) {
  const DataSchema s = DataSchema::of(shop({"flat", "house"}, {"flat", "house"}));
  Dataset renamed("x", Task::classification, 2, {{"area", AttributeKind::numeric, {}}, {"kind", AttributeKind::nominal, {"flat"}}},
                  {"cheap", "dear"});
  EXPECT_NE(error_of([&] { align_to_schema(s, renamed, "m.json"); }).find("no attribute 'size'"), std::string::npos);
  Dataset extra("x", Task::classification, 2,
                {{"size", AttributeKind::numeric, {}}, {"kind", AttributeKind::nominal, {"flat"}}, {"z", AttributeKind::numeric, {}}},
                {"cheap", "dear"});
  EXPECT_NE(error_of([&] { align_to_schema(s, extra, "m.json"); }).find("has 3 attributes, the model 2"), std::string::npos);
  Dataset other_class = shop({"flat", "house"}, {"flat", "house"});
  other_class.set_class_names({"cheap", "free"});
  EXPECT_NE(error_of([&] { align_to_schema(s, other_class, "m.json"); }).find("class 'free'"), std::string::npos);
  // A model file that lists names only (older format): numeric data is read, categories refused.
  const nlohmann::json names = nlohmann::json::array({"size", "kind"});
  const DataSchema old = DataSchema::from_json(names, nullptr, "old.json");
  EXPECT_FALSE(old.categories_known);
  Dataset with_categories = shop({"flat", "house"}, {"flat", "house"});
  with_categories.set_class_names({});
  EXPECT_NE(error_of([&] { align_to_schema(old, with_categories, "old.json"); }).find("records no category names"),
            std::string::npos);
  // The JSON form round-trips.
  const DataSchema back = DataSchema::from_json(nlohmann::json::parse(s.attributes_json().dump()), nullptr, "m");
  EXPECT_EQ(back.attributes[1].values, (std::vector<std::string>{"flat", "house"}));
  EXPECT_TRUE(back.categories_known);
}

// Inputs: only regular files are read. A FIFO used to block forever and /dev/zero to run until
// std::bad_alloc; both are refused at once, naming what the path is.
TEST(ReadFile, OnlyRegularFilesAreReadAndNothingWaits) {
  Tmp t;
  ASSERT_EQ(::mkfifo((t / "fifo").c_str(), 0600), 0);
  const std::string fifo = error_of([&] { read_capped_file(t / "fifo", 1 << 20, "data file"); });
  EXPECT_NE(fifo.find("data file " + (t / "fifo") + ": a FIFO (a pipe), not a file"), std::string::npos) << fifo;
  EXPECT_EQ(file_problem(t / "fifo"), "a FIFO (a pipe), not a file; save the data to a file first");
  EXPECT_EQ(file_problem(t / "absent"), "not found");
  EXPECT_EQ(file_problem(t.dir.string()), "a folder, not a file");
  if (::mknod((t / "zero").c_str(), S_IFCHR | 0666, makedev(1, 5)) == 0) {
    EXPECT_NE(error_of([&] { read_capped_file(t / "zero", 1 << 20, "model file"); }).find("not a regular file"),
              std::string::npos);
  }
  write_file_atomic(t / "small", "12345");
  EXPECT_EQ(read_capped_file(t / "small", 5, "x"), "12345");
  EXPECT_NE(error_of([&] { read_capped_file(t / "small", 4, "x"); }).find("5 bytes, larger than the limit"), std::string::npos);
}

// A file's head is read with the same checks as the whole file.
TEST(ReadFile, TheHeadOfAFileForAFormatCheck) {
  Tmp t;
  write_file_atomic(t / "small", "12345");
  EXPECT_EQ(read_file_head(t / "small", 3, "x"), "123");
  EXPECT_EQ(read_file_head(t / "small", 64, "x"), "12345");
  ASSERT_EQ(::mkfifo((t / "fifo").c_str(), 0600), 0);
  EXPECT_NE(error_of([&] { read_file_head(t / "fifo", 3, "data file"); }).find("a FIFO (a pipe), not a file"),
            std::string::npos);
}

// A JSON text the machine cannot hold parsed is refused before nlohmann parses it: a bad_alloc
// during the parse could unwind through its noexcept destructors and abort.
TEST(ReadFile, JsonThatCannotBeParsedInTheMemoryAvailableIsRefusedFirst) {
  const std::string text = "[" + std::string(1 << 20, '1') + "]";  // ~1 MiB: needs ~12 MiB parsed
  EXPECT_EQ(json_text_error(text, "m.json", 0), "");                  // unknown memory: parsed
  EXPECT_EQ(json_text_error(text, "m.json", std::size_t{64} << 20), "");
  const std::string why = json_text_error(text, "m.json", std::size_t{4} << 20);
  EXPECT_EQ(why, "m.json: 1048578 bytes of JSON: needs about 12 MiB of host memory to parse it; 4 MiB are available");
  EXPECT_NE(json_text_error("[[[1]]]", "d.json", 0, 2).find("d.json:1:3: JSON nested deeper than 2 levels"),
            std::string::npos);
}

// Every JSON file a user gives is read by one function: errors name what it is, the file, and the
// line and column, on one line.
TEST(ReadFile, JsonFilesNameTheFileAndThePlace) {
  Tmp t;
  write_file_atomic(t / "ok.json", "{\"a\": [1, 2]}");
  EXPECT_EQ(read_json_file(t / "ok.json", "model file").at("a").size(), 2u);
  write_file_atomic(t / "bad.json", "{\n  \"a\": [1,\n  ]\n}");
  EXPECT_EQ(error_of([&] { read_json_file(t / "bad.json", "model file"); }).rfind("model file " + (t / "bad.json") + ":3:3: syntax error", 0), 0u)
      << error_of([&] { read_json_file(t / "bad.json", "model file"); });
  write_file_atomic(t / "huge.json", "[1e999]");
  const std::string huge = error_of([&] { read_json_file(t / "huge.json", "population file"); });
  EXPECT_EQ(huge.rfind("population file " + (t / "huge.json") + ": number overflow", 0), 0u) << huge;
}
