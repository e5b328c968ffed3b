#include "algorithms/gmt/csv.hpp"

#include <cstdio>

#include "algorithms/core/error.hpp"

namespace gpudm {
namespace gmt {

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
