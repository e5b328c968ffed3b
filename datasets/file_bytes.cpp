#include "datasets/file_bytes.hpp"

#include <zlib.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>
#include <string_view>

#include "algorithms/core/dataset.hpp"
#include "algorithms/core/error.hpp"
#include "algorithms/core/files.hpp"
#include "datasets/sha256.hpp"

namespace gpudm::datasets {

bool is_gzip(const std::string& bytes) {
  return bytes.size() >= 2 && static_cast<unsigned char>(bytes[0]) == 0x1f &&
         static_cast<unsigned char>(bytes[1]) == 0x8b;
}

std::string gunzip(const std::string& bytes, const std::string& what, std::size_t max_out) {
  z_stream zs{};
  // 15 + 32: zlib or gzip header detected automatically.
  if (inflateInit2(&zs, 15 + 32) != Z_OK) throw Error(what + ": cannot initialise zlib");
  std::string out;
  out.resize(std::max<std::size_t>(bytes.size() * 4, 1 << 16));
  zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(bytes.data()));
  zs.avail_in = static_cast<uInt>(bytes.size());
  std::size_t produced = 0;
  int rc = Z_OK;
  while (true) {
    if (produced == out.size()) {
      if (produced >= max_out) {
        inflateEnd(&zs);
        throw Error(what + ": inflates past the limit of " + std::to_string(max_out >> 20) + " MiB");
      }
      const std::size_t next = std::min(out.size() * 2, max_out);
      // A gzip bomb stops at the memory the machine has, not at std::bad_alloc.
      if (std::string why = Dataset::memory_shortfall(static_cast<double>(next - out.size()), Dataset::available_host_memory(),
                                                      "inflate it past " + std::to_string(produced >> 20) + " MiB");
          !why.empty()) {
        inflateEnd(&zs);
        throw Error(what + ": " + why);
      }
      out.resize(next);
    }
    zs.next_out = reinterpret_cast<Bytef*>(out.data() + produced);
    zs.avail_out = static_cast<uInt>(std::min<std::size_t>(out.size() - produced, 1u << 30));
    const uInt before = zs.avail_out;
    rc = inflate(&zs, Z_NO_FLUSH);
    produced += before - zs.avail_out;
    if (rc == Z_STREAM_END) {
      // Concatenated gzip members (gzip -c a b > c) are legal: continue with the next one.
      if (zs.avail_in > 0 && is_gzip(std::string(reinterpret_cast<const char*>(zs.next_in),
                                                 std::min<uInt>(zs.avail_in, 2)))) {
        inflateReset(&zs);
        continue;
      }
      break;
    }
    if (rc != Z_OK && rc != Z_BUF_ERROR) {
      const std::string msg = zs.msg ? zs.msg : "error " + std::to_string(rc);
      inflateEnd(&zs);
      throw Error(what + ": corrupt gzip data (" + msg + ")");
    }
    if (rc == Z_BUF_ERROR && zs.avail_in == 0) {
      inflateEnd(&zs);
      throw Error(what + ": truncated gzip data (unexpected end of file)");
    }
  }
  inflateEnd(&zs);
  out.resize(produced);
  return out;
}

FileBytes read_file_bytes(const std::string& path, const std::string& who) {
  FileBytes fb;
  fb.path = path;
  // A binary file (not gzip, NUL bytes among its first 64 KiB) is no data text: said from its head,
  // before the whole file is read.
  const std::string head = read_file_head(path, std::size_t{1} << 16, who + ": data file");
  if (!is_gzip(head)) {
    if (const std::size_t nul = head.find('\0'); nul != std::string::npos)
      throw Error(who + ": data file " + path + ": not a text file (a NUL byte at offset " + std::to_string(nul) +
                  "); data files are CSV, TSV, ARFF or KEEL text, optionally gzip");
  }
  fb.raw = read_capped_file(path, kMaxDataFileBytes, who + ": data file");
  fb.sha256 = sha256_hex(fb.raw);
  fb.gzip = is_gzip(fb.raw);
  if (fb.gzip) {
    fb.text = gunzip(fb.raw, who + ": " + path, kMaxDataFileBytes);
  } else {
    // Plain text is read once: the raw bytes are only needed for the hash, already taken.
    fb.text = std::move(fb.raw);
    fb.raw.clear();
  }
  return fb;
}

}  // namespace gpudm::datasets
