// A GMT model file through `--predict` (algorithms/gmt/cli.cpp): size and depth limits, the
// model header, from_json (depth, attribute and threshold ranges), imputation values, then
// prediction over a small dataset with missing values.
#include <cstdint>
#include <memory>

#include "algorithms/core/family.hpp"
#include "algorithms/gmt/cli.hpp"
#include "tests/fuzz/fuzz_util.hpp"

namespace gpudm {
void register_gmt(Registry& r);  // backends/register_gmt.cpp
}

using namespace gpudm;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static Registry registry = [] {
    Registry r;
    register_gmt(r);
    return r;
  }();
  static fuzz::OneDataset provider(fuzz::gmt_dataset());
  fuzz::silence_stdout();
  const std::string path = fuzz::write_input("model.json", data, size);
  (void)gmt::predict_cli({path, "--dataset", "fuzz"}, gmt::CliEnv{&registry, &provider});
  return 0;
}
