#pragma once
// Reading a data file: raw bytes (for sha256) and its text, inflated when the bytes start with
// the gzip magic 1f 8b (detected by content, not by the file name).
#include <cstddef>
#include <string>

namespace gpudm::datasets {

struct FileBytes {
  std::string path;
  std::string raw;     // bytes as stored when gzip (plain text: moved into text, raw empty)
  std::string text;    // raw, or inflated raw when gzip
  bool gzip = false;
  std::string sha256;  // of raw
};

// The most a data file may hold, as stored and inflated (32 GiB: the largest catalog file,
// KDDcup's full set, inflates to ~0.7 GiB; a gzip bomb stops here).
constexpr std::size_t kMaxDataFileBytes = std::size_t{32} << 30;

// Through core/files.hpp's capped reader. Throws gpudm::Error naming <who> and <path> on I/O
// errors, a file over the limit, or gzip errors.
FileBytes read_file_bytes(const std::string& path, const std::string& who);

bool is_gzip(const std::string& bytes);
std::string gunzip(const std::string& bytes, const std::string& what, std::size_t max_out = kMaxDataFileBytes);

}  // namespace gpudm::datasets
