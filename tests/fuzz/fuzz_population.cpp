// A Pittsburgh population file through `--evaluate pittsburgh` (algorithms/pittsburgh/
// evaluate_cli.cpp): load_population, the header check, validation against the dataset's schema,
// and evaluation by the reference (sequential) backend on a small dataset with a nominal attribute.
#include <cstdint>
#include <memory>
#include <sstream>

#include "algorithms/core/family.hpp"
#include "algorithms/pittsburgh/evaluate_cli.hpp"
#include "tests/fuzz/fuzz_util.hpp"

namespace gpudm {
void register_pittsburgh(Registry& r);  // backends/register_pittsburgh.cpp
}

using namespace gpudm;

namespace {
// 4 attributes (the third nominal), 3 classes, a missing value, values up to 1e31.
std::shared_ptr<const Dataset> small_dataset() {
  std::vector<Attribute> attrs{{"a", AttributeKind::numeric, {}}, {"b", AttributeKind::numeric, {}},
                               {"c", AttributeKind::nominal, {"x", "y", "z"}}, {"d", AttributeKind::numeric, {}}};
  auto d = std::make_shared<Dataset>("fuzz", Task::classification, 50, attrs, std::vector<std::string>{"p", "q", "r"});
  for (std::size_t i = 0; i < 50; ++i) {
    d->at(i, 0) = static_cast<float>(i % 7) * 0.5f;
    d->at(i, 1) = static_cast<float>(i % 5) - 2.0f;
    d->at(i, 2) = static_cast<float>(i % 3);
    d->at(i, 3) = static_cast<float>(i) * 1e30f;
    d->set_label(i, static_cast<int>(i % 3));
  }
  d->set_missing(7, 1);
  return d;
}
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static Registry registry = [] {
    Registry r;
    register_pittsburgh(r);
    return r;
  }();
  static fuzz::OneDataset provider(small_dataset());
  const std::string path = fuzz::write_input("population.json", data, size);
  CommandEnv env{&registry, &provider};
  std::ostringstream out, err;
  (void)pittsburgh::evaluate_command({"--population", path, "--dataset", "fuzz", "--backend", "sequential"}, env, out, err);
  return 0;
}
