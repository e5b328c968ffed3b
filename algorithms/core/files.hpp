#pragma once
// Files, one home: a capped read of a file the user gave, and an atomic replace.
#include <cstddef>
#include <string>

namespace gpudm {

// Reads a file the user gave, refusing one larger than `max_bytes`; throws gpudm::Error
// "<what> <path>: cannot open ..." / "... is N bytes; the limit is M".
std::string read_capped_file(const std::string& path, std::size_t max_bytes, const std::string& what);

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
