#include "algorithms/core/json_limits.hpp"

#include <sys/stat.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>

#include "algorithms/core/error.hpp"

namespace gpudm {

std::string json_depth_error(std::string_view text, const std::string& source, std::size_t max_depth) {
  std::size_t depth = 0, line = 1, col = 0;
  bool in_string = false, escaped = false;
  for (const char c : text) {
    ++col;
    if (c == '\n') {
      ++line;
      col = 0;
    }
    if (in_string) {
      if (escaped) escaped = false;
      else if (c == '\\') escaped = true;
      else if (c == '"') in_string = false;
      continue;
    }
    if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      if (++depth > max_depth)
        return source + ":" + std::to_string(line) + ":" + std::to_string(col) + ": JSON nested deeper than " +
               std::to_string(max_depth) + " levels";
    } else if ((c == ']' || c == '}') && depth > 0) {
      --depth;
    }
  }
  return "";
}

void require_json_depth(std::string_view text, const std::string& source, std::size_t max_depth) {
  if (std::string why = json_depth_error(text, source, max_depth); !why.empty()) throw Error(why);
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

}  // namespace gpudm
