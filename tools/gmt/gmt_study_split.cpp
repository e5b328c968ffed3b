// gmt_study_split NAME OUTDIR [--rows N] [--test-fraction F | --folds K] [--seed S] [--option key=value]...
// Writes OUTDIR/NAME_train.csv and OUTDIR/NAME_test.csv: a catalog dataset split by a seeded
// shuffle, so Weka (scripts/peers/) and gmt_learner see exactly the same rows. --folds K: the K
// folds of the learner's --cv K --seed S instead (cv_folds), as OUTDIR/NAME_f<k>_{train,test}.csv,
// and OUTDIR/NAME_folds.json with each fold's rows and test-row fingerprint (the --cv metrics
// record the same fingerprint).
#include <cstdio>
#include <string>

#include <nlohmann/json.hpp>

#include "algorithms/core/files.hpp"
#include "algorithms/core/json_limits.hpp"
#include "algorithms/gmt/csv.hpp"
#include "algorithms/gmt/train.hpp"
#include "datasets/catalog.hpp"

int main(int argc, char** argv) {
  try {
    if (argc < 3) {
      std::fprintf(stderr, "usage: gmt_study_split NAME OUTDIR [--rows N] [--test-fraction F | --folds K] [--seed S] [--option k=v]\n");
      return 2;
    }
    const std::string name = argv[1], out = argv[2];
    nlohmann::json opt = nlohmann::json::object();
    double frac = 1.0 / 3.0;
    int folds = 0;
    std::uint64_t seed = 1;
    for (int i = 3; i + 1 < argc; i += 2) {
      const std::string f = argv[i], v = argv[i + 1];
      if (f == "--rows") opt["rows"] = std::stoll(v);
      else if (f == "--test-fraction") frac = std::stod(v);
      else if (f == "--seed") seed = std::stoull(v);
      else if (f == "--folds") folds = std::stoi(v);
      else if (f == "--option") {
        const auto eq = v.find('=');
        GPUDM_REQUIRE(eq != std::string::npos, "--option expects key=value");
        opt[v.substr(0, eq)] = gpudm::cli_json_value(v.substr(eq + 1), "--option " + v.substr(0, eq));
      } else {
        throw gpudm::Error("unknown option " + f);
      }
    }
    gpudm::datasets::CatalogProvider provider;
    auto d = provider.get(name, opt);
    GPUDM_REQUIRE(d->task() == gpudm::Task::regression, "dataset '" + name + "' is not a regression dataset");
    if (folds > 0) {
      nlohmann::ordered_json manifest = {{"dataset", name}, {"rows", d->rows()}, {"folds", folds}, {"seed", seed},
                                         {"per_fold", nlohmann::ordered_json::array()}};
      const auto fr = gpudm::gmt::cv_folds(d->rows(), folds, seed);
      for (int k = 0; k < folds; ++k) {
        const auto& te = fr[static_cast<std::size_t>(k)];
        const std::string stem = out + "/" + name + "_f" + std::to_string(k);
        gpudm::gmt::write_csv(d->select(gpudm::gmt::rows_not_in(te, d->rows())), stem + "_train.csv");
        gpudm::gmt::write_csv(d->select(te), stem + "_test.csv");
        manifest["per_fold"].push_back({{"fold", k}, {"test_rows", te.size()}, {"test_rows_fingerprint", gpudm::gmt::rows_fingerprint(te)}});
      }
      gpudm::write_file_atomic(out + "/" + name + "_folds.json", manifest.dump(2) + "\n");
      std::printf("%s: %d folds of %zu rows, %zu attributes\n", name.c_str(), folds, d->rows(), d->cols());
      return 0;
    }
    gpudm::Dataset tr, te;
    gpudm::gmt::holdout_split(*d, frac, seed, &tr, &te);
    gpudm::gmt::write_csv(tr, out + "/" + name + "_train.csv");
    gpudm::gmt::write_csv(te, out + "/" + name + "_test.csv");
    std::printf("%s: %zu train + %zu test rows, %zu attributes%s\n", name.c_str(), tr.rows(), te.rows(), d->cols(),
                d->has_missing() ? " (has missing values)" : "");
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 1;
  }
}
