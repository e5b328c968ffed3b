#include "algorithms/core/files.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <memory>

#include "algorithms/core/error.hpp"

namespace gpudm {

namespace fs = std::filesystem;

std::string write_all(int fd, const char* data, std::size_t size) {
  std::size_t done = 0;
  while (done < size) {
    const ssize_t n = ::write(fd, data + done, size - done);
    if (n < 0) {
      if (errno == EINTR) continue;
      return std::strerror(errno);
    }
    done += static_cast<std::size_t>(n);
  }
  return "";
}

std::string read_capped_file(const std::string& path, std::size_t max_bytes, const std::string& what) {
  std::unique_ptr<std::FILE, int (*)(std::FILE*)> f(std::fopen(path.c_str(), "rb"), &std::fclose);
  if (!f) throw Error(what + " " + path + ": cannot open: " + std::strerror(errno));
  struct stat st {};
  const std::string limit = std::to_string(max_bytes >> 20) + " MiB";
  if (::fstat(fileno(f.get()), &st) == 0 && S_ISREG(st.st_mode) && static_cast<std::size_t>(st.st_size) > max_bytes)
    throw Error(what + " " + path + ": " + std::to_string(st.st_size) + " bytes, larger than the limit of " + limit);
  std::string out;
  char buf[1 << 16];
  std::size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, f.get())) > 0) {
    if (out.size() + n > max_bytes)
      throw Error(what + " " + path + ": larger than the limit of " + limit);
    out.append(buf, n);
  }
  if (std::ferror(f.get())) throw Error(what + " " + path + ": read error: " + std::strerror(errno));
  return out;
}

void write_file_atomic(const std::string& path, const std::string& content) {
  const fs::path target(path);
  std::error_code ec;
  if (target.has_parent_path()) {
    fs::create_directories(target.parent_path(), ec);
    if (ec) throw Error(target.parent_path().string() + ": cannot create folder: " + ec.message());
  }
  // The temp file lives in the target's folder so the rename stays on one file system.
  const std::string tmp = path + ".tmp." + std::to_string(::getpid());
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) throw Error(tmp + ": cannot create: " + std::strerror(errno));
  if (const std::string why = write_all(fd, content.data(), content.size()); !why.empty()) {
    ::close(fd);
    ::unlink(tmp.c_str());
    throw Error(tmp + ": write failed: " + why);
  }
  if (::fsync(fd) != 0 || ::close(fd) != 0) {
    const std::string why = std::strerror(errno);
    ::unlink(tmp.c_str());
    throw Error(tmp + ": cannot flush: " + why);
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    const std::string why = std::strerror(errno);
    ::unlink(tmp.c_str());
    throw Error(path + ": cannot replace: " + why);
  }
}

}  // namespace gpudm
