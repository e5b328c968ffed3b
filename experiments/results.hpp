#pragma once
// Results files (schema_version 1, docs/results-schema.md): provenance and environment blocks,
// the results folder's GPU tag, and atomic writes (temp file in the same folder, fsync, rename)
// so a crash or a kill never leaves a half-written file behind.
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "algorithms/core/files.hpp"

namespace gpudm::experiments {

using ojson = nlohmann::ordered_json;

inline constexpr int kSchemaVersion = 1;

// Git state of `source_dir`: {"git_sha": "...", "git_dirty": bool}; "unknown"/null when it is
// not a git checkout or git is missing.
ojson git_state(const std::string& source_dir);

// provenance: git sha + dirty flag, build type, compilers, CUDA version and architectures,
// argv, UTC time, hostname, gpudm version.
ojson make_provenance(const std::vector<std::string>& argv);

// environment: CPU model, logical cores, OpenMP threads, devices (machine::describe_gpus()).
ojson make_environment();

// The names of an environment block's devices, in device order.
ojson device_names(const ojson& environment);

// What every run of one invocation shares in its own provenance: the commit of the invocation's
// `provenance` block and the machine, {"git_sha", "git_dirty", "machine": {"host", "cpu_model",
// "cpu_threads" (the machine's logical CPUs), "gpus": [device names]}}. A results file can
// gather runs of several invocations (--resume), so each run names its own.
ojson run_origin(const ojson& provenance, const ojson& environment);
// A run record's "provenance": `origin` (run_origin) with "utc_time" now, the run having just
// finished, in the key order of docs/results-schema.md.
ojson run_provenance(const ojson& origin);

// `path` relative to the folder `root` ("configs/x.json") when it lies inside it, else "". Both
// are resolved from the current directory, symbolic links followed.
std::string path_in_repository(const std::string& path, const std::string& root);

// "NVIDIA H100 80GB HBM3" -> "h100", "NVIDIA H200" -> "h200", "NVIDIA A100-SXM4-80GB" -> "a100",
// "NVIDIA GeForce RTX 4090" -> "rtx4090". "" for an empty name.
std::string gpu_tag_from_name(const std::string& device_name);
// "Intel(R) Xeon(R) Platinum 8480+" -> "cpu-xeon-8480", "AMD EPYC 7763 64-Core Processor" ->
// "cpu-epyc-7763"; "cpu" when the model says nothing usable. Never contains the hostname.
std::string cpu_tag_from_model(const std::string& cpu_model);
// Tag of the machine from an environment block: the first device's tag, else the CPU's.
std::string machine_tag(const ojson& environment);

using ::gpudm::write_file_atomic;  // algorithms/core/files.hpp

// ordered_json indented to the fields of each run (2 spaces), each field's value on one line, and a
// trailing newline: readable diffs, a third smaller than full indentation. scripts/results_json.py
// writes the same layout.
std::string dump_results(const ojson& doc);

// An exclusive lock on one results file for the whole invocation that writes it (flock on
// `<json>.lock`, released by the kernel when the process dies, however it dies). The lock file
// names the holder; a second writer gets gpudm::Error "<json> is being written by pid P on host
// H since T (...)". Removed when released.
class ResultsLock {
 public:
  explicit ResultsLock(const std::string& json_path, const std::string& command = "");
  ~ResultsLock();
  ResultsLock(const ResultsLock&) = delete;
  ResultsLock& operator=(const ResultsLock&) = delete;
  const std::string& path() const { return path_; }

 private:
  std::string path_;
  int fd_ = -1;
};

// Removes `<dir>/<stem>.*.tmp.<pid>` files left by a process that no longer exists (a kill -9
// during an atomic write). Returns how many were removed.
int remove_stale_temp_files(const std::string& dir, const std::string& stem);

// The append-only journal of an invocation in progress, `<json>.journal` (JSON Lines): a header
// line {"journal": "gpudm-results-journal", "version": 1, "base": "file" | "none",
// "document": {the results document without "runs"}}, then one line per finished run. "base"
// says whether the runs of the results file beside it count (--resume) or not (a fresh run,
// which replaces the file only when it completes). Each run costs one append and one fdatasync,
// whatever the size of the results file.
class Journal {
 public:
  // Writes the header and `records` to a temp file, fsyncs and renames it over `path`.
  Journal(const std::string& path, const ojson& header, const std::vector<ojson>& records);
  ~Journal();
  Journal(const Journal&) = delete;
  Journal& operator=(const Journal&) = delete;
  void append(const ojson& record);
  // Closes and deletes the journal (after the results file was compacted from it).
  void remove();
  const std::string& path() const { return path_; }

 private:
  std::string path_;
  int fd_ = -1;
};

struct JournalContents {
  ojson header;
  std::vector<ojson> records;
  bool torn_tail = false;  // the last line was cut by a crash (ignored)
};
// Reads a journal; a torn last line is ignored, any other bad line throws gpudm::Error.
JournalContents read_journal(const std::string& path);

// UTC time as ISO 8601 ("2026-11-22T03:07:22Z").
std::string utc_now_iso8601();

}  // namespace gpudm::experiments
