#pragma once
// Plain CSV regression files for the learner CLI and the Weka study: a header row of names,
// comma-separated numbers, the target in the last column; "?" or an empty cell is a missing
// attribute value. Written here; read by the datasets layer (tools/gmt/gmt_learner.cpp's
// provider, through datasets/loaders.hpp: quoted fields, CRLF, gzip).
#include <string>

#include "algorithms/core/dataset.hpp"

namespace gpudm {
namespace gmt {

void write_csv(const Dataset& d, const std::string& path, const std::string& target_name = "target");

}  // namespace gmt
}  // namespace gpudm
