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

namespace {
// 3 numeric attributes named a, b, c (a model file must name them), one missing value.
std::shared_ptr<const Dataset> small_dataset() {
  std::vector<Attribute> attrs{{"a", AttributeKind::numeric, {}}, {"b", AttributeKind::numeric, {}}, {"c", AttributeKind::numeric, {}}};
  auto d = std::make_shared<Dataset>("fuzz", Task::regression, 40, attrs);
  for (std::size_t i = 0; i < 40; ++i) {
    for (std::size_t c = 0; c < 3; ++c) d->at(i, c) = static_cast<float>((i * (c + 3)) % 11) - 5.0f;
    d->set_target(i, static_cast<float>(i % 9));
  }
  d->set_missing(3, 2);
  return d;
}
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static Registry registry = [] {
    Registry r;
    register_gmt(r);
    return r;
  }();
  static fuzz::OneDataset provider(small_dataset());
  fuzz::silence_stdout();
  const std::string path = fuzz::write_input("model.json", data, size);
  (void)gmt::predict_cli({path, "--dataset", "fuzz"}, gmt::CliEnv{&registry, &provider});
  return 0;
}
