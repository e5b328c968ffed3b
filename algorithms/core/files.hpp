#pragma once
// Files, one home: a capped read of a file the user gave, and an atomic replace.
#include <cstddef>
#include <string>

namespace gpudm {

// Reads a file the user gave, refusing one larger than `max_bytes`; throws gpudm::Error
// "<what> <path>: cannot open ..." / "... is N bytes; the limit is M".
std::string read_capped_file(const std::string& path, std::size_t max_bytes, const std::string& what);

// Replaces `path` with `content` atomically (a temp file in the same folder, flushed, renamed);
// creates missing folders. Throws gpudm::Error naming the file and the reason.
void write_file_atomic(const std::string& path, const std::string& content);

// Writes all of `data` to the open descriptor `fd` (EINTR retried); "" or the reason.
std::string write_all(int fd, const char* data, std::size_t size);

}  // namespace gpudm
