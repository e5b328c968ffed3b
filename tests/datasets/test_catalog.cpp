#include <gtest/gtest.h>

#include <fstream>
#include <set>

#include "datasets/catalog.hpp"
#include "datasets/generators.hpp"
#include "datasets/sha256.hpp"
#include "test_util.hpp"

using namespace gpudm;
using namespace gpudm::datasets;
using gpudm::datasets::test_support::expect_error;
using gpudm::datasets::test_support::TempDir;

TEST(Catalog, HoldsEveryFixedName) {
  const Catalog& c = Catalog::builtin();
  const std::vector<std::string> fixed = {
      "iris", "new_thyroid", "ecoli", "contraceptive", "thyroid", "penbased", "shuttle", "connect4", "kddcup", "poker",
      "pol", "elevators", "cal_housing", "house16h", "house8l", "2dplanes", "fried", "mv", "elnino",
      "poker_full", "armchair", "armchair10k", "armchair50k", "armchair100k", "armchair500k", "armchair1m",
      "armchair5m", "armchair10m", "2dplanes_gen", "fried_gen", "mv_gen", "rt_vfml", "rt_moa", "covertype", "rec",
      "susy", "higgs", "kdd_full", "year_prediction_msd", "surrogate",
      // GMT Table 1 beyond the fixed list
      "layout", "colorhistogram", "colormoments", "cooctexture", "susy_regression"};
  for (const auto& n : fixed) EXPECT_TRUE(c.contains(n)) << n;
  std::size_t files = 0;
  for (const auto& e : c.json().at("datasets"))
    if (e.at("source") == "file") ++files;
  EXPECT_EQ(files, 20u);  // the 20 real datasets (19 paper datasets + the reduced PMLB ecoli)
}

TEST(Catalog, SurrogatesAreLabelledAndPaperTablesCovered) {
  const Catalog& c = Catalog::builtin();
  for (const char* n : {"covertype", "rec", "susy", "higgs", "kdd_full", "year_prediction_msd", "poker_full", "layout",
                        "armchair", "armchair1m"})
    EXPECT_TRUE(c.entry(n).at("surrogate").get<bool>()) << n;
  for (const char* n : {"iris", "kddcup", "rt_moa", "fried_gen"}) EXPECT_FALSE(c.entry(n).at("surrogate").get<bool>()) << n;
  // The flag reaches the Dataset (and so the results' dataset description).
  CatalogProvider p(c, {});
  EXPECT_TRUE(p.get("armchair10k", {{"rows", 100}})->surrogate);
  EXPECT_FALSE(p.get("fried_gen", {{"rows", 100}})->surrogate);
  // The subtree grid: the 10 GP/Pittsburgh sets + 5 large surrogates.
  std::size_t subtree = 0;
  for (const auto& e : c.json().at("datasets"))
    if (e.contains("papers") && e.at("papers").contains("subtree")) ++subtree;
  EXPECT_EQ(subtree, 15u);
}

TEST(Catalog, ArmchairEntryCarriesNoiseSdAndTheGeneratorsRegions) {
  const Catalog& c = Catalog::builtin();
  for (const char* n : {"armchair", "armchair10k", "armchair1m", "armchair10m"}) {
    const auto& e = c.entry(n);
    EXPECT_TRUE(e.at("reconstruction").get<bool>());
    EXPECT_DOUBLE_EQ(e.at("noise_sd").get<double>(), kArmchairNoiseSd);
    EXPECT_EQ(e.at("regions").size(), static_cast<std::size_t>(kArmchairRegionCount));
    for (int g = 0; g < kArmchairRegionCount; ++g) {
      const auto& j = e.at("regions")[static_cast<std::size_t>(g)];
      const ArmchairRegion& r = kArmchairRegions[g];
      EXPECT_EQ(j.at("name").get<std::string>(), r.name);
      EXPECT_EQ(j.at("x1")[0].get<float>(), r.x1_lo);
      EXPECT_EQ(j.at("x1")[1].get<float>(), r.x1_hi);
      EXPECT_EQ(j.at("x2")[0].get<float>(), r.x2_lo);
      EXPECT_EQ(j.at("x2")[1].get<float>(), r.x2_hi);
      EXPECT_EQ(j.at("y").at("c0").get<float>(), r.c0);
      EXPECT_EQ(j.at("y").at("c1").get<float>(), r.c1);
      EXPECT_EQ(j.at("y").at("c2").get<float>(), r.c2);
    }
    EXPECT_EQ(armchair_definition().size(), static_cast<std::size_t>(kArmchairRegionCount));
  }
}

TEST(Catalog, UnknownNameSuggestsTheNearest) {
  expect_error([] { Catalog::builtin().entry("iriss"); }, {"dataset 'iriss' is not in the catalog", "did you mean 'iris'"});
}

TEST(Catalog, RejectsMalformedCatalogs) {
  using ojson = nlohmann::ordered_json;
  expect_error([] { Catalog::from_json(ojson::object(), "c.json"); }, {"c.json", "'datasets' array"});
  ojson dup = {{"datasets",
                {{{"name", "a"}, {"task", "regression"}, {"rows", 1}, {"attributes", 1}, {"source", "generator"},
                  {"generator", {{"name", "fried"}}}},
                 {{"name", "a"}, {"task", "regression"}, {"rows", 1}, {"attributes", 1}, {"source", "generator"},
                  {"generator", {{"name", "fried"}}}}}}};
  expect_error([&] { Catalog::from_json(dup, "c.json"); }, {"dataset 'a' is listed twice"});
  ojson badgen = {{"datasets",
                   {{{"name", "a"}, {"task", "regression"}, {"rows", 1}, {"attributes", 1}, {"source", "generator"},
                     {"generator", {{"name", "frid"}}}}}}};
  expect_error([&] { Catalog::from_json(badgen, "c.json"); }, {"unknown generator 'frid'"});
  ojson badloader = {{"datasets",
                      {{{"name", "a"}, {"task", "regression"}, {"rows", 1}, {"attributes", 1}, {"source", "file"},
                        {"files", {{{"variant", "v"}, {"path", "a.csv"}, {"sha256", "x"}, {"cols", 2},
                                    {"loader", {{"format", "csv"}, {"labels", 1}}}}}}}}}};
  expect_error([&] { Catalog::from_json(badloader, "c.json"); }, {"unknown loader key 'labels'"});
}

TEST(CatalogProvider, GeneratedDatasetsAreCachedPerOptions) {
  CatalogProvider p(Catalog::builtin(), {});
  const auto a = p.get("fried_gen", {{"rows", 500}});
  const auto b = p.get("fried_gen", {{"rows", 500}});
  const auto c = p.get("fried_gen", {{"rows", 500}, {"seed", 2}});
  EXPECT_EQ(a.get(), b.get());
  EXPECT_NE(a.get(), c.get());
  EXPECT_EQ(p.cached(), 2u);
  EXPECT_EQ(a->rows(), 500u);
  EXPECT_EQ(a->name(), "fried_gen");
  EXPECT_EQ(c->seed, 2u);
  const auto arm = p.get("armchair10k", nullptr);
  EXPECT_EQ(arm->rows(), 10000u);
  EXPECT_EQ(arm->name(), "armchair10k");
  const auto poker = p.get("poker_full", {{"rows", 1000}});
  EXPECT_TRUE(poker->surrogate);
  const auto cov = p.get("covertype", {{"rows", 1000}, {"binary", true}});
  EXPECT_EQ(cov->cols(), 45u);
  p.clear();
  EXPECT_EQ(p.cached(), 0u);
}

TEST(CatalogProvider, OptionErrorsAndMissingFiles) {
  CatalogProvider p(Catalog::builtin(), {"/nonexistent-gpudm-dir"});
  expect_error([&] { p.get("fried_gen", {{"rwos", 5}}); }, {"dataset 'fried_gen'", "unknown parameter 'rwos'"});
  expect_error([&] { p.get("iris", {{"rwos", 5}}); }, {"dataset 'iris': unknown option 'rwos'", "variant"});
  expect_error([&] { p.get("iris", nlohmann::json::object()); },
               {"dataset 'iris': file iris/iris.tsv.gz not found in /nonexistent-gpudm-dir", "GPUDM_DATA_DIR"});
  expect_error([&] { p.get("iris", {{"variant", "kaggle"}}); }, {"unknown variant 'kaggle' (known: pmlb, uci)"});
}

namespace {
nlohmann::ordered_json toy_catalog(const std::string& sha, int rows) {
  using ojson = nlohmann::ordered_json;
  ojson file = {{"variant", "main"}, {"path", "toy/toy.csv"}, {"sha256", sha}, {"rows", 3}, {"cols", 3}, {"classes", 2},
                {"loader", {{"format", "csv"}}}};
  ojson toy = {{"name", "toy"}, {"task", "classification"}, {"rows", rows}, {"attributes", 2}, {"classes", 2},
               {"source", "file"}, {"surrogate", false}, {"files", ojson::array({file})}};
  ojson gen = {{"name", "gen"}, {"task", "regression"}, {"rows", 100}, {"attributes", 10}, {"source", "generator"},
               {"generator", {{"name", "fried"}, {"params", {{"rows", 100}}}}}};
  return {{"datasets", ojson::array({toy, gen})}};
}
}  // namespace

TEST(CatalogProvider, FindsFilesInDataDirsInOrderAndChecksSha256) {
  TempDir a, b;
  const std::string text = "1,2,x\n3,4,y\n5,6,x\n";
  b.write("toy/toy.csv", text);
  const Catalog cat = Catalog::from_json(toy_catalog(sha256_hex(text), 3), "toy.json");
  {
    CatalogProvider p(cat, {a.path(), b.path()});
    const auto d = p.get("toy", nullptr);
    EXPECT_EQ(d->rows(), 3u);
    EXPECT_EQ(d->path, b.path() + "/toy/toy.csv");
    EXPECT_EQ(d->sha256, sha256_hex(text));
    EXPECT_EQ(d->source, "file");
    EXPECT_EQ(p.get("toy", {{"rows", 2}})->rows(), 2u);
    // replicate: the (first `rows`) rows K times over, in order, the file's provenance kept
    const auto r = p.get("toy", {{"rows", 2}, {"replicate", 3}});
    ASSERT_EQ(r->rows(), 6u);
    for (std::size_t i = 0; i < 6; ++i) {
      EXPECT_EQ(r->at(i, 0), d->at(i % 2, 0)) << i;
      EXPECT_EQ(r->label(i), d->label(i % 2)) << i;
    }
    EXPECT_EQ(r->name(), "toy");
    EXPECT_EQ(r->sha256, d->sha256);
    EXPECT_EQ(r->path, d->path);
    expect_error([&] { p.get("toy", {{"replicate", 0}}); }, {"dataset 'toy': option replicate must be in [1, 1000]"});
  }
  // A different file earlier in the search path wins, and its bytes do not match the catalog.
  a.write("toy/toy.csv", "1,2,x\n3,4,y\n5,7,x\n");
  CatalogProvider p(cat, {a.path(), b.path()});
  expect_error([&] { p.get("toy", nullptr); }, {"dataset 'toy': " + a.path() + "/toy/toy.csv: sha256", "verify_sha256=false"});
  EXPECT_EQ(p.get("toy", {{"verify_sha256", false}})->at(2, 1), 7.0f);
}

TEST(CatalogReport, StatusAndShapeChecks) {
  TempDir a;
  const std::string text = "1,2,x\n3,4,y\n5,6,x\n";
  // Missing file.
  {
    const Catalog cat = Catalog::from_json(toy_catalog(sha256_hex(text), 3), "toy.json");
    const auto rep = catalog_report(cat, {a.path()});
    ASSERT_EQ(rep.at("datasets").size(), 2u);
    EXPECT_EQ(rep.at("datasets")[0].at("status"), "missing");
    EXPECT_EQ(rep.at("datasets")[1].at("status"), "generated");
    EXPECT_EQ(rep.at("datasets")[1].at("check"), "ok");
    const std::string md = render_catalog_report(rep);
    EXPECT_NE(md.find("| name | task | rows x cols (classes) | status | check |"), std::string::npos) << md;
    EXPECT_NE(md.find("| toy | classification | 3 x 2 (2) | missing (toy/toy.csv) | - |"), std::string::npos) << md;
    EXPECT_NE(md.find("| gen | regression | 100 x 10 | generated (fried) | ok |"), std::string::npos) << md;
    EXPECT_NE(md.find("2 datasets: 0 found, 1 generated, 1 missing; 0 with"), std::string::npos) << md;
  }
  a.write("toy/toy.csv", text);
  {
    const Catalog cat = Catalog::from_json(toy_catalog(sha256_hex(text), 3), "toy.json");
    const auto rep = catalog_report(cat, {a.path()});
    EXPECT_EQ(rep.at("datasets")[0].at("status"), "found");
    EXPECT_EQ(rep.at("datasets")[0].at("check"), "ok");
    EXPECT_NE(render_catalog_report(rep).find("found (" + a.path() + "/toy/toy.csv)"), std::string::npos);
  }
  {
    const Catalog cat = Catalog::from_json(toy_catalog(sha256_hex(text), 4), "toy.json");
    const auto rep = catalog_report(cat, {a.path()});
    EXPECT_EQ(rep.at("datasets")[0].at("check"), "mismatch");
    const std::string md = render_catalog_report(rep);
    EXPECT_NE(md.find("- toy: mismatch: rows 3 (catalog 4)"), std::string::npos) << md;
  }
}

TEST(CatalogReport, BuiltinGeneratedEntriesMatchTheirShapes) {
  // No data folders: every generated entry must still check out (columns, classes, rows).
  const auto rep = catalog_report(Catalog::builtin(), {});
  for (const auto& r : rep.at("datasets")) {
    if (r.at("status") != "generated") {
      EXPECT_EQ(r.at("status"), "missing");
      continue;
    }
    EXPECT_EQ(r.at("check"), "ok") << r.dump();
  }
}

namespace gpudm::datasets::detail {
extern const char* const kEmbeddedCatalog;
}

TEST(Catalog, EmbeddedCopyEqualsTheSourceFile) {
  std::ifstream in(std::string(GPUDM_SOURCE_DIR) + "/datasets/catalog.json");
  ASSERT_TRUE(in.good());
  const auto on_disk = nlohmann::ordered_json::parse(in);
  const auto embedded = nlohmann::ordered_json::parse(detail::kEmbeddedCatalog);
  EXPECT_EQ(on_disk, embedded) << "rebuild: the compiled-in catalog is stale";
  EXPECT_NO_THROW(Catalog::from_json(embedded, "embedded"));
}
