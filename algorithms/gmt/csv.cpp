#include "algorithms/gmt/csv.hpp"

#include <cstdio>

#include "datasets/loaders.hpp"

namespace gpudm {
namespace gmt {

bool is_csv_path(const std::string& name) { return name.size() > 4 && name.compare(name.size() - 4, 4, ".csv") == 0; }

Dataset load_csv(const std::string& path) {
  // The file's stem names the dataset (messages, model files).
  std::string name = path.substr(path.find_last_of('/') + 1);
  if (is_csv_path(name)) name.resize(name.size() - 4);
  datasets::LoadOptions o;
  o.dataset = name;
  o.header = true;
  o.task = Task::regression;
  o.label_column = -1;
  o.missing = {"?", ""};
  return datasets::load_csv(path, o);
}

void write_csv(const Dataset& d, const std::string& path, const std::string& target_name) {
  GPUDM_REQUIRE(d.task() == Task::regression, "write_csv: dataset '" + d.name() + "' is not a regression dataset");
  std::FILE* f = std::fopen(path.c_str(), "w");
  GPUDM_REQUIRE(f != nullptr, "cannot write '" + path + "'");
  for (std::size_t c = 0; c < d.cols(); ++c) std::fprintf(f, "%s,", d.attribute(c).name.c_str());
  std::fprintf(f, "%s\n", target_name.c_str());
  for (std::size_t r = 0; r < d.rows(); ++r) {
    for (std::size_t c = 0; c < d.cols(); ++c) {
      if (d.is_missing(r, c)) std::fputs("?,", f);
      else std::fprintf(f, "%.9g,", static_cast<double>(d.at(r, c)));
    }
    std::fprintf(f, "%.9g\n", static_cast<double>(d.target(r)));
  }
  std::fclose(f);
}

}  // namespace gmt
}  // namespace gpudm
