#pragma once
// Plain CSV regression files for the learner CLI and the Weka study: a header row of names,
// comma-separated numbers, the target in the last column; "?" or an empty cell is a missing
// attribute value (a missing target is an error). Read by the datasets loader
// (datasets/loaders.hpp: quoted fields, CRLF, gzip), written here.
#include <string>

#include "algorithms/core/dataset.hpp"

namespace gpudm {
namespace gmt {

Dataset load_csv(const std::string& path);
void write_csv(const Dataset& d, const std::string& path, const std::string& target_name = "target");
bool is_csv_path(const std::string& name);

}  // namespace gmt
}  // namespace gpudm
