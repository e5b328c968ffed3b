#pragma once
// Helpers for the dataset tests: a private temp folder and the data folder from GPUDM_DATA_DIR.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string>
#include <unistd.h>

#include "algorithms/core/error.hpp"

namespace gpudm::datasets::test_support {

class TempDir {
 public:
  TempDir() {
    std::string tmpl = (std::filesystem::temp_directory_path() / "gpudm_ds_XXXXXX").string();
    if (!mkdtemp(tmpl.data())) throw std::runtime_error("mkdtemp failed");
    path_ = tmpl;
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  std::string write(const std::string& name, const std::string& bytes) const {
    const auto p = path_ / name;
    std::filesystem::create_directories(p.parent_path());
    std::ofstream(p, std::ios::binary) << bytes;
    return p.string();
  }
  std::string path() const { return path_.string(); }

 private:
  std::filesystem::path path_;
};

// First GPUDM_DATA_DIR entry that holds STATS.tsv.
inline std::optional<std::string> shared_data_dir() {
  const char* env = std::getenv("GPUDM_DATA_DIR");
  if (!env) return std::nullopt;
  std::string s = env;
  std::size_t start = 0;
  while (start <= s.size()) {
    const std::size_t end = std::min(s.find(':', start), s.size());
    const std::string d = s.substr(start, end - start);
    if (!d.empty() && std::filesystem::exists(std::filesystem::path(d) / "STATS.tsv")) return d;
    start = end + 1;
  }
  return std::nullopt;
}

// Runs f, expects gpudm::Error whose message contains every fragment; returns the message.
template <typename F>
std::string expect_error(F&& f, std::initializer_list<std::string> fragments) {
  try {
    f();
  } catch (const gpudm::Error& e) {
    const std::string msg = e.what();
    for (const auto& frag : fragments) EXPECT_NE(msg.find(frag), std::string::npos) << "message: " << msg << "\nmissing: " << frag;
    return msg;
  }
  ADD_FAILURE() << "expected gpudm::Error";
  return {};
}

}  // namespace gpudm::datasets::test_support
