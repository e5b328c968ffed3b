#pragma once
// This rank's block of a dataset's rows: shard() of the rows, 32-row aligned (so the
// coverage words of the blocks concatenate), and the dataset a rank's backend prepares: the whole
// dataset with one rank, else the block's slice (held here: the backend keeps a pointer to it).
#include <tuple>

#include "algorithms/core/comm.hpp"
#include "algorithms/core/dataset.hpp"

namespace gpudm {

struct RankRows {
  std::size_t begin = 0, end = 0;
  Dataset slice;
  const Dataset& of(const Dataset& data, const Comm& comm) {
    std::tie(begin, end) = shard(data.rows(), comm.rank(), comm.size(), 32);
    if (comm.size() == 1) return data;
    slice = data.slice(begin, end);
    return slice;
  }
};

}  // namespace gpudm
