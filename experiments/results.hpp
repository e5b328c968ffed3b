#pragma once
// Results files (schema_version 1, docs/results-schema.md): provenance and environment blocks,
// the results folder's GPU tag, and atomic writes (temp file in the same folder, fsync, rename)
// so a crash or a kill never leaves a half-written file behind.
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

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

// "NVIDIA H100 80GB HBM3" -> "h100", "NVIDIA H200" -> "h200", "NVIDIA A100-SXM4-80GB" -> "a100",
// "NVIDIA GeForce RTX 4090" -> "rtx4090". "" for an empty name.
std::string gpu_tag_from_name(const std::string& device_name);
// "Intel(R) Xeon(R) Platinum 8480+" -> "cpu-xeon-8480", "AMD EPYC 7763 64-Core Processor" ->
// "cpu-epyc-7763"; "cpu" when the model says nothing usable. Never contains the hostname.
std::string cpu_tag_from_model(const std::string& cpu_model);
// Tag of the machine from an environment block: the first device's tag, else the CPU's.
std::string machine_tag(const ojson& environment);

// Writes `content` to `path` atomically: the old file (if any) stays intact until the new one
// is complete on disk. Creates the parent folder. Throws gpudm::Error on failure.
void write_file_atomic(const std::string& path, const std::string& content);

// ordered_json with 2-space indent and a trailing newline (readable diffs).
std::string dump_results(const ojson& doc);

// UTC time as ISO 8601 ("2026-11-22T03:07:22Z").
std::string utc_now_iso8601();

}  // namespace gpudm::experiments
