// A GMT batch sample file (algorithms/gmt/batch_sample.cpp, read by replay_from): the binary
// reader (truncation, record types, the repair rule, tree shape through Tree::from_parts, the
// memory its trees need), then every batch it holds evaluated (repair rule included) by the
// sequential evaluator, which walks the compact trees' node arrays and model pools without bounds
// checks (as the CUDA one does): a tree of the wrong shape that got past the reader shows up here.
#include <cstdint>
#include <memory>

#include "algorithms/core/family.hpp"
#include "algorithms/gmt/batch_sample.hpp"
#include "algorithms/gmt/evaluator.hpp"
#include "tests/fuzz/fuzz_util.hpp"

namespace gpudm {
void register_gmt(Registry& r);  // backends/register_gmt.cpp
}

using namespace gpudm;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const std::shared_ptr<const Dataset> dataset = fuzz::gmt_dataset();
  static Registry registry = [] {
    Registry r;
    register_gmt(r);
    return r;
  }();
  static const std::unique_ptr<gmt::ModelTreeEvaluator> eval = [] {
    auto e = registry.create<gmt::ModelTreeEvaluator>("gmt", "sequential");
    e->prepare(*dataset);
    return e;
  }();
  const std::string path = fuzz::write_input("batch.bin", data, size);
  gmt::BatchSample s;
  try {
    s = gmt::read_batch_sample(path, std::size_t{64} << 20);  // within the fuzzer's RSS limit
  } catch (const Error&) {
    return 0;
  }
  if (s.cols != dataset->cols()) return 0;  // replay_from refuses a sample of other data
  (void)gmt::pick_batches(s, 8);
  PhaseTimer timer;
  for (const auto& batch : s.batches) {
    std::vector<gmt::Tree> copies;
    try {
      eval->evaluate(batch.batch(copies), timer);
    } catch (const Error&) {
    }
  }
  return 0;
}
