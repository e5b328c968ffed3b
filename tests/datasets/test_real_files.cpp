// Every file of shared/datasets listed in STATS.tsv loads with the rows, columns, classes and
// class counts STATS.tsv gives; the formulas behind 2dplanes/Fried and the poker rules hold on
// the published files; the catalog report finds all real datasets. Skips visibly without
// GPUDM_DATA_DIR (CI sets it).
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <ctime>
#include <cmath>
#include <fstream>
#include <map>
#include <sstream>

#include "datasets/catalog.hpp"
#include "datasets/generators.hpp"
#include "datasets/loaders.hpp"
#include "test_util.hpp"

using namespace gpudm;
using namespace gpudm::datasets;
using gpudm::datasets::test_support::shared_data_dir;

namespace {

struct StatsRow {
  std::string path, sha256;
  std::size_t rows = 0, cols = 0;
  int classes = 0;  // 0: regression
  std::map<std::string, std::size_t> class_counts;
};

std::vector<StatsRow> read_stats() {
  std::vector<StatsRow> out;
  const auto dir = shared_data_dir();
  if (!dir) return out;
  std::ifstream in(*dir + "/STATS.tsv");
  std::string line;
  std::getline(in, line);  // header
  while (std::getline(in, line)) {
    if (line.empty()) continue;
    std::vector<std::string> f;
    std::stringstream ss(line);
    std::string x;
    while (std::getline(ss, x, '\t')) f.push_back(x);
    if (f.size() < 7) continue;
    StatsRow r;
    r.path = f[0];
    r.sha256 = f[2];
    r.rows = std::stoul(f[3]);
    r.cols = std::stoul(f[4]);
    r.classes = f[5] == "-" ? 0 : std::stoi(f[5]);
    if (f[6] != "-") {
      std::stringstream cs(f[6]);
      std::string kv;
      while (cs >> kv) {
        const auto colon = kv.rfind(':');
        r.class_counts[kv.substr(0, colon)] = std::stoul(kv.substr(colon + 1));
      }
    }
    out.push_back(r);
  }
  return out;
}

// The first catalog variant whose path is this file.
std::pair<const nlohmann::ordered_json*, const nlohmann::ordered_json*> catalog_file(const std::string& path) {
  for (const auto& e : Catalog::builtin().json().at("datasets")) {
    if (!e.contains("files")) continue;
    for (const auto& f : e.at("files"))
      if (f.at("path") == path) return {&e, &f};
  }
  return {nullptr, nullptr};
}


#define REQUIRE_DATA_DIR()                                                                       \
  const auto data_dir = shared_data_dir();                                                       \
  if (!data_dir) GTEST_SKIP() << "GPUDM_DATA_DIR is not set (or holds no STATS.tsv): the real " \
                                 "dataset files are not available here"

}  // namespace

TEST(RealFiles, DataDirIsConfigured) {
  REQUIRE_DATA_DIR();
  const auto rows = read_stats();
  EXPECT_GE(rows.size(), 31u) << "STATS.tsv lists the staged files";
}

// Parameterised over the catalog's file paths (not over STATS.tsv), so the list of tests does not
// depend on GPUDM_DATA_DIR when ctest discovers them at build time.
std::vector<std::string> catalog_file_paths() {
  std::vector<std::string> out;
  for (const auto& e : Catalog::builtin().json().at("datasets")) {
    if (!e.contains("files")) continue;
    for (const auto& f : e.at("files")) {
      const std::string p = f.at("path").get<std::string>();
      if (std::find(out.begin(), out.end(), p) == out.end()) out.push_back(p);
    }
  }
  return out;
}

std::string path_name(const ::testing::TestParamInfo<std::string>& info) {
  std::string s = info.param;
  for (char& c : s)
    if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
  return s;
}

TEST(RealFiles, EveryStatsFileIsInTheCatalog) {
  REQUIRE_DATA_DIR();
  for (const auto& s : read_stats()) EXPECT_NE(catalog_file(s.path).first, nullptr) << s.path << " is in STATS.tsv but not in datasets/catalog.json";
}

class CatalogFile : public ::testing::TestWithParam<std::string> {};

TEST_P(CatalogFile, LoadsWithTheShapeAndClassCountsOfStatsTsv) {
  REQUIRE_DATA_DIR();
  const auto stats = read_stats();
  const auto it = std::find_if(stats.begin(), stats.end(), [&](const StatsRow& r) { return r.path == GetParam(); });
  ASSERT_NE(it, stats.end()) << GetParam() << " is in the catalog but not in STATS.tsv";
  const StatsRow& s = *it;
  const auto [entry, file] = catalog_file(s.path);
  ASSERT_NE(entry, nullptr);
  EXPECT_EQ(file->at("sha256").get<std::string>(), s.sha256);
  EXPECT_EQ(file->at("rows").get<std::size_t>(), s.rows);
  EXPECT_EQ(file->at("cols").get<std::size_t>(), s.cols);
  LoadOptions o = load_options_from_json(file->at("loader"), s.path);
  o.dataset = entry->at("name").get<std::string>();
  o.task = s.classes > 0 ? Task::classification : Task::regression;
  EXPECT_EQ(entry->at("task").get<std::string>(), s.classes > 0 ? "classification" : "regression");
  LoadInfo info;
  const auto t0 = std::chrono::steady_clock::now();
  const std::clock_t c0 = std::clock();
  const Dataset d = load_file(*data_dir + "/" + s.path, o, &info);
  const double cpu = static_cast<double>(std::clock() - c0) / CLOCKS_PER_SEC;
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::printf("%-45s %8zu rows in %.3f s (cpu %.3f s)\n", s.path.c_str(), d.rows(), secs, cpu);
  EXPECT_EQ(d.sha256, s.sha256);
  EXPECT_EQ(info.file_columns, s.cols);
  EXPECT_EQ(info.gzip, file->at("gzip").get<bool>());
  EXPECT_EQ(d.rows() + info.rows_dropped, s.rows);
  EXPECT_EQ(d.cols(), s.cols - 1 - o.drop_columns.size());
  EXPECT_NO_THROW(d.validate());
  if (s.classes > 0) {
    ASSERT_EQ(d.num_classes(), s.classes);
    std::map<std::string, std::size_t> counts;
    for (auto y : d.labels()) ++counts[d.class_names()[static_cast<std::size_t>(y)]];
    EXPECT_EQ(counts, s.class_counts);
  }
#ifdef NDEBUG
  // CPU time, so a busy shared CI machine does not make it flaky (kddcup: about 1 s).
  EXPECT_LT(cpu, 5.0) << "loading must stay fast (kddcup: 494,020 rows from 1.8 MB of gzip)";
#endif
}

INSTANTIATE_TEST_SUITE_P(SharedDatasets, CatalogFile, ::testing::ValuesIn(catalog_file_paths()), path_name);

TEST(RealFiles, PublishedFilesFollowTheGeneratorFormulas) {
  REQUIRE_DATA_DIR();
  CatalogProvider p(Catalog::builtin(), {*data_dir});
  for (const char* name : {"2dplanes", "fried"}) {
    const auto d = p.get(name, nullptr);
    double s = 0, s2 = 0;
    float x[10];
    for (std::size_t r = 0; r < d->rows(); ++r) {
      for (std::size_t c = 0; c < 10; ++c) x[c] = d->at(r, c);
      const double e = d->target(r) - (std::string(name) == "fried" ? fried_mean(x) : planes2d_mean(x));
      s += e;
      s2 += e * e;
    }
    const double n = static_cast<double>(d->rows());
    const double mean = s / n, sd = std::sqrt(s2 / n - mean * mean);
    // MANIFEST: residual mean -0.0042 / 0.0007, sd 0.9971 / 0.9973; the published noise is N(0, 1).
    EXPECT_NEAR(mean, 0.0, 0.02) << name;
    EXPECT_NEAR(sd, 1.0, 0.01) << name;
  }
  // The Torgo ARFF copy of Fried holds the same rows as PMLB's TSV.
  const auto a = p.get("fried", nullptr);
  const auto b = p.get("fried", {{"variant", "torgo"}});
  ASSERT_EQ(a->rows(), b->rows());
  for (std::size_t r = 0; r < a->rows(); r += 97) EXPECT_NEAR(a->target(r), b->target(r), 1e-4);
}

TEST(RealFiles, UciPokerLabelsFollowTheRules) {
  REQUIRE_DATA_DIR();
  CatalogProvider p(Catalog::builtin(), {*data_dir});
  const auto d = p.get("poker", nullptr);
  ASSERT_EQ(d->rows(), 25010u);
  std::size_t wrong = 0;
  for (std::size_t r = 0; r < d->rows(); ++r) {
    int s[5], k[5];
    for (int i = 0; i < 5; ++i) {
      s[i] = static_cast<int>(d->at(r, static_cast<std::size_t>(2 * i)));
      k[i] = static_cast<int>(d->at(r, static_cast<std::size_t>(2 * i + 1)));
    }
    const int want = std::stoi(d->class_names()[static_cast<std::size_t>(d->label(r))]);
    if (poker_hand_class(s, k) != want && wrong++ < 5)
      ADD_FAILURE() << "row " << r + 1 << ": rules give " << poker_hand_class(s, k) << ", UCI says " << want;
  }
  EXPECT_EQ(wrong, 0u);
}

TEST(RealFiles, CatalogReportFindsEveryRealDatasetWithItsShape) {
  REQUIRE_DATA_DIR();
  const auto rep = catalog_report(Catalog::builtin(), {*data_dir});
  std::size_t found = 0;
  for (const auto& r : rep.at("datasets")) {
    if (r.at("status") == "found") ++found;
    EXPECT_NE(r.at("status"), "missing") << r.dump();
    EXPECT_EQ(r.at("check"), "ok") << r.dump();
  }
  EXPECT_EQ(found, 20u);
  std::printf("%s", render_catalog_report(rep).c_str());
}
