#pragma once
// Reading a data file: raw bytes (for sha256) and its text, inflated when the bytes start with
// the gzip magic 1f 8b (detected by content, not by the file name).
#include <string>

namespace gpudm::datasets {

struct FileBytes {
  std::string path;
  std::string raw;     // bytes as stored
  std::string text;    // raw, or inflated raw when gzip
  bool gzip = false;
  std::string sha256;  // of raw
};

// Throws gpudm::Error "<who>: <path>: <reason>" on I/O or gzip errors.
FileBytes read_file_bytes(const std::string& path, const std::string& who);

bool is_gzip(const std::string& bytes);
std::string gunzip(const std::string& bytes, const std::string& what);

}  // namespace gpudm::datasets
