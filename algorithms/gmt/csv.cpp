#include "algorithms/gmt/csv.hpp"

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <vector>

namespace gpudm {
namespace gmt {

bool is_csv_path(const std::string& name) { return name.size() > 4 && name.compare(name.size() - 4, 4, ".csv") == 0; }

namespace {
std::vector<std::string> split(const std::string& line) {
  std::vector<std::string> out;
  std::string cur;
  for (char ch : line) {
    if (ch == ',') {
      out.push_back(cur);
      cur.clear();
    } else if (ch != '\r' && ch != '"') {
      cur.push_back(ch);
    }
  }
  out.push_back(cur);
  for (auto& s : out) {
    const auto b = s.find_first_not_of(" \t");
    const auto e = s.find_last_not_of(" \t");
    s = b == std::string::npos ? "" : s.substr(b, e - b + 1);
  }
  return out;
}
}  // namespace

Dataset load_csv(const std::string& path) {
  std::ifstream in(path);
  GPUDM_REQUIRE(in.good(), "cannot open CSV file '" + path + "'");
  std::string line;
  GPUDM_REQUIRE(static_cast<bool>(std::getline(in, line)), path + ": empty file (expected a header row)");
  const std::vector<std::string> header = split(line);
  GPUDM_REQUIRE(header.size() >= 2, path + ": the header needs at least one attribute and the target");
  const std::size_t cols = header.size() - 1;
  std::vector<std::vector<float>> values;
  std::vector<float> targets;
  std::size_t line_no = 1;
  while (std::getline(in, line)) {
    ++line_no;
    if (line.empty() || line == "\r") continue;
    const auto cells = split(line);
    GPUDM_REQUIRE(cells.size() == header.size(), path + ": line " + std::to_string(line_no) + " has " +
                                                     std::to_string(cells.size()) + " columns, expected " +
                                                     std::to_string(header.size()));
    std::vector<float> row(cols);
    for (std::size_t c = 0; c <= cols; ++c) {
      const std::string& s = cells[c];
      float v = std::nanf("");
      if (!(s.empty() || s == "?")) {
        char* end = nullptr;
        errno = 0;
        v = std::strtof(s.c_str(), &end);
        GPUDM_REQUIRE(end && *end == '\0', path + ": line " + std::to_string(line_no) + ", column '" + header[c] +
                                               "': '" + s + "' is not a number");
      }
      if (c < cols) row[c] = v;
      else {
        GPUDM_REQUIRE(std::isfinite(v), path + ": line " + std::to_string(line_no) + ": the target '" + header[c] +
                                            "' is missing or not finite");
        targets.push_back(v);
      }
    }
    values.push_back(std::move(row));
  }
  std::vector<Attribute> attrs(cols);
  for (std::size_t c = 0; c < cols; ++c) attrs[c].name = header[c];
  std::string name = path;
  const auto slash = name.find_last_of('/');
  if (slash != std::string::npos) name = name.substr(slash + 1);
  Dataset d(name.substr(0, name.size() - 4), Task::regression, values.size(), attrs);
  for (std::size_t r = 0; r < values.size(); ++r) {
    for (std::size_t c = 0; c < cols; ++c) {
      if (std::isnan(values[r][c])) d.set_missing(r, c);
      else d.at(r, c) = values[r][c];
    }
    d.set_target(r, targets[r]);
  }
  d.source = "file";
  d.path = path;
  return d;
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
