// vfdt_export: writes a catalog stream, encoded exactly as the vfdt learners see it (integer
// codes per attribute, label last), to CSV for peer libraries (scripts/peers/river_vfdt.py).
//   vfdt_export <dataset> '<options json>' <out.csv> [bins] [bin_warmup] [max_values]
#include <cstdio>
#include <fstream>
#include <iostream>

#include "algorithms/vfdt/forest.hpp"
#include "datasets/catalog.hpp"

int main(int argc, char** argv) {
  if (argc < 4) {
    std::cerr << "usage: vfdt_export <dataset> '<options json>' <out.csv> [bins] [bin_warmup] [max_values]\n";
    return 2;
  }
  try {
    gpudm::datasets::CatalogProvider provider;
    const auto data = provider.get(argv[1], nlohmann::json::parse(argv[2]));
    gpudm::vfdt::EncodingOptions eo;
    if (argc > 4) eo.bins = std::stoi(argv[4]);
    if (argc > 5) eo.bin_warmup = std::stoi(argv[5]);
    if (argc > 6) eo.max_values = std::stoi(argv[6]);
    const auto s = gpudm::vfdt::EncodedStream::encode(*data, eo);
    std::ofstream out(argv[3]);
    if (!out) throw gpudm::Error(std::string("cannot write ") + argv[3]);
    for (int a = 0; a < s.attributes; ++a) out << "a" << a << ",";
    out << "class\n";
    std::string line;
    for (std::size_t i = 0; i < s.rows; ++i) {
      line.clear();
      for (int a = 0; a < s.attributes; ++a) {
        line += std::to_string(s.code(i, a));
        line += ',';
      }
      line += std::to_string(s.labels[i]);
      line += '\n';
      out << line;
    }
    std::cerr << "vfdt_export: " << argv[1] << " " << s.rows << " rows x " << s.attributes << " attributes, "
              << s.classes << " classes" << (data->surrogate ? " (surrogate)" : "") << " -> " << argv[3] << "\n";
  } catch (const std::exception& e) {
    std::cerr << "vfdt_export: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
