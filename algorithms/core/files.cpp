#include "algorithms/core/files.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <memory>

#include "algorithms/core/dataset.hpp"
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

namespace {

std::string kind_problem(const struct stat& st) {
  if (S_ISREG(st.st_mode)) return "";
  if (S_ISDIR(st.st_mode)) return "a folder, not a file";
  if (S_ISFIFO(st.st_mode)) return "a FIFO (a pipe), not a file; save the data to a file first";
  return "not a regular file (a device or a socket); save the data to a file first";
}

}  // namespace

std::string file_problem(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return errno == ENOENT || errno == ENOTDIR ? "not found" : std::strerror(errno);
  return kind_problem(st);
}

namespace {

using FilePtr = std::unique_ptr<std::FILE, int (*)(std::FILE*)>;

// Opens a file the user gave for reading, only a regular one. O_NONBLOCK: opening a FIFO must not
// wait for a writer (a FIFO or a device such as /dev/zero has no size to check and may never end).
FilePtr open_regular(const std::string& path, const std::string& what, struct stat& st) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) throw Error(what + " " + path + ": cannot open: " + std::strerror(errno));
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    throw Error(what + " " + path + ": " + kind_problem(st));
  }
  ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) & ~O_NONBLOCK);
  FilePtr f(::fdopen(fd, "rb"), &std::fclose);
  if (!f) {
    ::close(fd);
    throw Error(what + " " + path + ": cannot open: " + std::strerror(errno));
  }
  return f;
}

}  // namespace

std::string read_file_head(const std::string& path, std::size_t n, const std::string& what) {
  struct stat st {};
  const FilePtr f = open_regular(path, what, st);
  std::string out(std::min<std::size_t>(n, static_cast<std::size_t>(st.st_size)), '\0');
  out.resize(std::fread(out.data(), 1, out.size(), f.get()));
  if (std::ferror(f.get())) throw Error(what + " " + path + ": read error: " + std::strerror(errno));
  return out;
}

std::string read_capped_file(const std::string& path, std::size_t max_bytes, const std::string& what) {
  struct stat st {};
  const FilePtr f = open_regular(path, what, st);
  const std::string limit = std::to_string(max_bytes >> 20) + " MiB";
  const auto size = static_cast<std::size_t>(st.st_size);
  if (size > max_bytes)
    throw Error(what + " " + path + ": " + std::to_string(size) + " bytes, larger than the limit of " + limit);
  if (std::string why = Dataset::memory_shortfall(static_cast<double>(size), Dataset::available_host_memory(), "read it");
      !why.empty())
    throw Error(what + " " + path + ": " + std::to_string(size) + " bytes: " + why);
  std::string out;
  out.reserve(size);
  char buf[1 << 16];
  std::size_t got;
  while ((got = std::fread(buf, 1, sizeof buf, f.get())) > 0) {
    if (out.size() + got > max_bytes)
      throw Error(what + " " + path + ": larger than the limit of " + limit);
    out.append(buf, got);
  }
  if (std::ferror(f.get())) throw Error(what + " " + path + ": read error: " + std::strerror(errno));
  return out;
}

std::string default_model_path(const std::string& prefix, const std::string& dataset_name) {
  std::string stem = dataset_name;
  if (const std::size_t slash = stem.find_last_of('/'); slash != std::string::npos) stem = stem.substr(slash + 1);
  if (stem.size() > 3 && stem.compare(stem.size() - 3, 3, ".gz") == 0) stem.resize(stem.size() - 3);
  if (const std::size_t dot = stem.find_last_of('.'); dot != std::string::npos && dot > 0) stem.resize(dot);
  for (char& c : stem) {
    const unsigned char u = static_cast<unsigned char>(c);
    if (!(std::isalnum(u) || c == '.' || c == '-' || c == '_')) c = '_';
  }
  if (stem.empty() || stem == "." || stem == "..") stem = "data";
  return prefix + "_" + stem + ".json";
}

namespace {

// Writes through an existing non-regular file (a character device, a FIFO with a reader, the
// pipe behind /dev/stdout): there is no file to replace, and renaming over it would remove the
// device node. O_NONBLOCK: a FIFO nobody reads fails at once (ENXIO) instead of blocking forever.
// `create`: a dangling symlink, whose target file is created through it.
void write_through(const std::string& path, const std::string& content, bool fifo, bool create = false) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CLOEXEC | (fifo ? O_NONBLOCK : 0) | (create ? O_CREAT | O_TRUNC : 0), 0644);
  if (fd < 0) {
    if (fifo && errno == ENXIO) throw Error(path + ": a FIFO that nothing reads; start its reader first");
    throw Error(path + ": cannot open for writing: " + std::strerror(errno));
  }
  if (fifo) ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) & ~O_NONBLOCK);
  const std::string why = write_all(fd, content.data(), content.size());
  if (::close(fd) != 0 && why.empty()) throw Error(path + ": write failed: " + std::strerror(errno));
  if (!why.empty()) throw Error(path + ": write failed: " + why);
}

}  // namespace

void write_file_atomic(const std::string& path_in, const std::string& content) {
  std::string path = path_in;
  struct stat st {};
  if (::stat(path.c_str(), &st) == 0) {
    if (S_ISDIR(st.st_mode)) throw Error(path + ": is a folder, not a file");
    if (S_ISCHR(st.st_mode) || S_ISFIFO(st.st_mode)) return write_through(path, content, S_ISFIFO(st.st_mode));
    if (!S_ISREG(st.st_mode)) throw Error(path + ": not a regular file, a character device or a FIFO; refusing to write");
    // A symlink to a file: the file it names is replaced; the link stays.
    struct stat lst {};
    if (::lstat(path.c_str(), &lst) == 0 && S_ISLNK(lst.st_mode)) {
      std::error_code ec;
      const fs::path real = fs::canonical(path, ec);
      if (ec) throw Error(path + ": cannot resolve the symbolic link: " + ec.message());
      path = real.string();
    }
  } else {
    struct stat lst {};
    // A dangling symlink: the file it names is created through it.
    if (::lstat(path.c_str(), &lst) == 0 && S_ISLNK(lst.st_mode)) return write_through(path, content, false, true);
  }
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
