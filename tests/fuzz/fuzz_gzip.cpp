// gunzip (datasets/file_bytes.cpp), then the CSV loader on the inflated text: truncated or
// corrupt streams, concatenated members, bombs within libFuzzer's memory limit.
#include <cstdint>
#include <string>

#include "algorithms/core/error.hpp"
#include "datasets/file_bytes.hpp"
#include "datasets/loaders.hpp"

using namespace gpudm;
using namespace gpudm::datasets;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string bytes(reinterpret_cast<const char*>(data), size);
  try {
    const std::string text = gunzip(bytes, "fuzz.gz");
    LoadOptions o;
    o.dataset = "fuzz";
    (void)load_text(text, "fuzz.gz", o);
  } catch (const Error&) {
  }
  return 0;
}
