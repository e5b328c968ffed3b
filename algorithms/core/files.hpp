#pragma once
// Files, one home: a capped read of a file the user gave, and an atomic replace.
#include <cstddef>
#include <string>

namespace gpudm {

// "" when `path` is a regular file (symlinks followed), else why it cannot be read as one: "not
// found", "a folder, not a file", "a FIFO (a pipe), not a file; save the data to a file first", ...
// One wording for every reader (configs, includes, data files, models).
std::string file_problem(const std::string& path);

// Reads a file the user gave: only a regular file (a FIFO, a device or a folder is refused at
// once, never waited on), at most `max_bytes` and no more than the host memory available now;
// throws gpudm::Error "<what> <path>: cannot open ..." / "... N bytes, larger than the limit of M"
// / "... N bytes: needs about N MiB of host memory to read it; M MiB are available".
std::string read_capped_file(const std::string& path, std::size_t max_bytes, const std::string& what);

// The first `n` bytes of a regular file (all of a shorter one), refused like read_capped_file when
// the path is not a regular file: a format check before the whole file is read.
std::string read_file_head(const std::string& path, std::size_t n, const std::string& what);

// Writes `content` to `path`. A regular file (or an absent path) is replaced atomically: a temp
// file in the same folder, flushed, renamed over it; missing folders are created. A symlink to a
// file replaces that file and stays a link. A character device (/dev/null, a terminal) or a FIFO
// with a reader is written through, never replaced; a FIFO without a reader, a folder, a block
// device or a socket is an error. Throws gpudm::Error naming the file and the reason.
void write_file_atomic(const std::string& path, const std::string& content);

// The default model file of a training run: "<prefix>_<stem>.json" in the current folder, the stem
// being the dataset's base name without folders, ".gz" and extension, other characters than
// letters, digits, '.', '-' and '_' made '_' (a dataset given as "../data/my set.csv.gz" gives
// "<prefix>_my_set.json", never a path into the dataset's folders).
std::string default_model_path(const std::string& prefix, const std::string& dataset_name);

// Writes all of `data` to the open descriptor `fd` (EINTR retried); "" or the reason.
std::string write_all(int fd, const char* data, std::size_t size);

}  // namespace gpudm
