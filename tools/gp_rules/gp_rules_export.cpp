// gp_rules_export: a catalog classification dataset as CSV with the cross-validation fold of
// every row (gp_rules::cv_folds, the folds of `--cv K` and of the family's folds param):
//   gp_rules_export <dataset> '<options json>' <out.csv> <folds> <seed>
// Columns: a0..a{n-1} (float values; missing: nan), class (index), fold.
#include <cmath>
#include <cstdio>
#include <fstream>
#include <iostream>

#include "algorithms/gp_rules/cv.hpp"
#include "datasets/catalog.hpp"

int main(int argc, char** argv) {
  if (argc < 6) {
    std::cerr << "usage: gp_rules_export <dataset> '<options json>' <out.csv> <folds> <seed>\n";
    return 2;
  }
  try {
    gpudm::datasets::CatalogProvider provider;
    const auto d = provider.get(argv[1], nlohmann::json::parse(argv[2]));
    if (d->task() != gpudm::Task::classification) throw gpudm::Error(std::string(argv[1]) + " is not a classification dataset");
    const int k = std::stoi(argv[4]);
    const auto fold = gpudm::gp_rules::cv_folds(d->rows(), k, std::stoull(argv[5]));
    std::ofstream out(argv[3]);
    if (!out) throw gpudm::Error(std::string("cannot write ") + argv[3]);
    for (std::size_t a = 0; a < d->cols(); ++a) out << "a" << a << ",";
    out << "class,fold\n";
    std::string line;
    char buf[32];
    for (std::size_t i = 0; i < d->rows(); ++i) {
      line.clear();
      for (std::size_t a = 0; a < d->cols(); ++a) {
        const float v = d->at(i, a);
        if (std::isnan(v)) line += "nan";
        else {
          std::snprintf(buf, sizeof buf, "%.9g", static_cast<double>(v));
          line += buf;
        }
        line += ',';
      }
      line += std::to_string(d->label(i)) + "," + std::to_string(fold[i]) + "\n";
      out << line;
    }
    std::cerr << "gp_rules_export: " << argv[1] << " " << d->rows() << " rows x " << d->cols() << " attributes, "
              << d->num_classes() << " classes, " << k << " folds -> " << argv[3] << "\n";
  } catch (const std::exception& e) {
    std::cerr << "gp_rules_export: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
