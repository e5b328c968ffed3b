#pragma once
// SHA-256 (FIPS 180-4) of a byte buffer, as 64 lower-case hex digits. Small and dependency-free
// so dataset provenance does not pull in OpenSSL.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace gpudm::datasets {

class Sha256 {
 public:
  Sha256();
  void update(const void* data, std::size_t bytes);
  std::string hex_digest();  // finalises; the object must not be updated afterwards

 private:
  void block(const unsigned char* p);
  std::uint32_t h_[8];
  unsigned char buf_[64];
  std::size_t buf_len_ = 0;
  std::uint64_t total_bytes_ = 0;
};

std::string sha256_hex(const void* data, std::size_t bytes);
inline std::string sha256_hex(std::string_view s) { return sha256_hex(s.data(), s.size()); }

}  // namespace gpudm::datasets
