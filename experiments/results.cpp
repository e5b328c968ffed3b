#include "experiments/results.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <memory>

#include "algorithms/core/error.hpp"
#include "algorithms/core/files.hpp"
#include "algorithms/core/json_limits.hpp"
#include "algorithms/core/text.hpp"
#include "algorithms/core/machine.hpp"
#include "gpudm/build_info.hpp"

namespace gpudm::experiments {

namespace fs = std::filesystem;

namespace {

// Runs a command, returns its stdout and whether it exited with 0.
bool capture(const std::string& cmd, std::string& out) {
  out.clear();
  FILE* p = popen(cmd.c_str(), "r");
  if (!p) return false;
  char buf[4096];
  std::size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, p)) > 0) out.append(buf, n);
  const int rc = pclose(p);
  return rc == 0;
}

std::string shell_quote(const std::string& s) {
  std::string q = "'";
  for (char c : s) {
    if (c == '\'') q += "'\\''";
    else q += c;
  }
  return q + "'";
}

std::vector<std::string> words(const std::string& s) {
  std::vector<std::string> out;
  std::string cur;
  for (char c : s) {
    if (std::isspace(static_cast<unsigned char>(c))) {
      if (!cur.empty()) out.push_back(cur);
      cur.clear();
    } else {
      cur += c;
    }
  }
  if (!cur.empty()) out.push_back(cur);
  return out;
}

bool has_digit(const std::string& s) {
  for (char c : s)
    if (std::isdigit(static_cast<unsigned char>(c))) return true;
  return false;
}

std::string alnum_only(const std::string& s) {
  std::string out;
  for (char c : s)
    if (std::isalnum(static_cast<unsigned char>(c))) out += c;
  return out;
}

}  // namespace

ojson git_state(const std::string& source_dir) {
  ojson j;
  std::string out;
  const std::string git = "git -C " + shell_quote(source_dir) + " ";
  // Retried: a concurrent git command (a commit updating HEAD) can make one call fail.
  bool have_sha = false;
  // A copy of the tree without .git (the GPU machine gets one) names its commit through the
  // environment: GPUDM_GIT_SHA and GPUDM_GIT_DIRTY (0/1), set by whoever made the copy.
  if (const char* env_sha = std::getenv("GPUDM_GIT_SHA"); env_sha && *env_sha) {
    j["git_sha"] = env_sha;
    const char* dirty = std::getenv("GPUDM_GIT_DIRTY");
    j["git_dirty"] = dirty ? nlohmann::json(std::string(dirty) == "1") : nlohmann::json(nullptr);
    j["git_source"] = "environment";
    return j;
  }
  for (int attempt = 0; attempt < 3 && !have_sha; ++attempt) {
    if (attempt) ::usleep(200000);
    have_sha = capture(git + "rev-parse HEAD 2>/dev/null", out) && !trim(out).empty();
  }
  if (have_sha) {
    j["git_sha"] = std::string(trim(out));
    // Untracked files count (CMake globs pick them up); the results folder itself does not.
    std::string status;
    if (capture(git + "status --porcelain -- . ':(exclude)results' 2>/dev/null", status))
      j["git_dirty"] = !trim(status).empty();
    else
      j["git_dirty"] = nullptr;
  } else {
    j["git_sha"] = "unknown";
    j["git_dirty"] = nullptr;
  }
  return j;
}

std::string utc_now_iso8601() {
  const std::time_t t = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

ojson make_provenance(const std::vector<std::string>& argv) {
  ojson p;
  const ojson g = git_state(build_info::kSourceDir);
  p["git_sha"] = g["git_sha"];
  p["git_dirty"] = g["git_dirty"];
  p["gpudm_version"] = build_info::kVersion;
  p["build_type"] = build_info::kBuildType;
  p["compiler"] = build_info::kCxxCompiler;
  p["cuda_compiler"] = build_info::kHaveCuda ? ojson(build_info::kCudaCompiler) : ojson(nullptr);
  p["cuda_version"] = build_info::kHaveCuda ? ojson(std::string(trim(std::string(build_info::kCudaCompiler).substr(
                                                  std::string(build_info::kCudaCompiler).find(' ') + 1))))
                                            : ojson(nullptr);
  p["cuda_architectures"] = build_info::kHaveCuda ? ojson(build_info::kCudaArchitectures) : ojson(nullptr);
  p["openmp"] = build_info::kHaveOpenmp;
  p["argv"] = argv;
  p["utc_time"] = utc_now_iso8601();
  p["hostname"] = machine::hostname();
  return p;
}

ojson make_environment() { return machine::environment(); }


ojson device_names(const ojson& environment) {
  ojson names = ojson::array();
  if (const auto d = environment.find("devices"); d != environment.end() && d->is_array())
    for (const auto& dev : *d)
      if (dev.is_object() && dev.contains("name")) names.push_back(dev["name"]);
  return names;
}

ojson run_origin(const ojson& provenance, const ojson& environment) {
  ojson m;
  m["host"] = provenance.value("hostname", machine::hostname());
  m["cpu_model"] = environment.value("cpu_model", std::string("unknown"));
  // (the machine's logical CPUs as the environment block has them: the process's own affinity is
  // one CPU once OpenMP has bound its first thread to a place, OMP_PROC_BIND)
  m["cpu_threads"] = environment.value("cpu_cores", 0);
  m["gpus"] = device_names(environment);
  return {{"git_sha", provenance.value("git_sha", ojson("unknown"))},
          {"git_dirty", provenance.value("git_dirty", ojson(nullptr))},
          {"machine", std::move(m)}};
}

ojson run_provenance(const ojson& origin) {
  return {{"git_sha", origin["git_sha"]},
          {"git_dirty", origin["git_dirty"]},
          {"utc_time", utc_now_iso8601()},
          {"machine", origin["machine"]}};
}

std::string path_in_repository(const std::string& path, const std::string& root) {
  std::error_code ec;
  const fs::path p = fs::weakly_canonical(fs::absolute(path, ec), ec);
  if (ec) return "";
  const fs::path r = fs::weakly_canonical(fs::absolute(root, ec), ec);
  if (ec) return "";
  const fs::path rel = p.lexically_relative(r);
  if (rel.empty() || rel == "." || *rel.begin() == "..") return "";
  return rel.generic_string();
}

std::string gpu_tag_from_name(const std::string& device_name) {
  std::vector<std::string> tokens;
  for (const auto& w : words(lower(device_name))) {
    if (w == "nvidia" || w == "tesla" || w == "geforce" || w == "quadro" || w == "amd" || w == "radeon") continue;
    tokens.push_back(w);
  }
  std::string tag;
  for (const auto& t : tokens) {
    if (has_digit(t)) {
      // Model token: cut the form factor / memory suffix ("a100-sxm4-80gb" -> "a100").
      tag += alnum_only(t.substr(0, t.find('-')));
      break;
    }
    tag += alnum_only(t);  // a prefix such as "rtx"
  }
  if (tag.empty() && !tokens.empty()) tag = alnum_only(tokens.front());
  return tag;
}

std::string cpu_tag_from_model(const std::string& cpu_model) {
  static const char* kFamilies[] = {"xeon", "epyc", "ryzen", "threadripper", "core", "neoverse", "grace", "graviton"};
  const auto ws = words(lower(cpu_model));
  for (std::size_t i = 0; i < ws.size(); ++i) {
    const std::string w = alnum_only(ws[i].substr(0, ws[i].find('(')));
    for (const char* f : kFamilies) {
      if (w != f) continue;
      // The first following token with a digit is the model number ("Platinum 8480+" -> 8480).
      for (std::size_t k = i + 1; k < ws.size() && k < i + 4; ++k) {
        if (has_digit(ws[k]) && ws[k].find("core") == std::string::npos) {
          const std::string m = alnum_only(ws[k].substr(0, ws[k].find('@')));
          if (!m.empty()) return "cpu-" + w + "-" + m;
        }
      }
      return "cpu-" + w;
    }
  }
  return "cpu";
}

std::string machine_tag(const ojson& environment) {
  const auto it = environment.find("devices");
  if (it != environment.end() && it->is_array() && !it->empty()) {
    const auto& d = it->front();
    if (d.contains("name") && d["name"].is_string()) {
      const std::string t = gpu_tag_from_name(d["name"].get<std::string>());
      if (!t.empty()) return t;
    }
  }
  const auto cpu = environment.find("cpu_model");
  return cpu_tag_from_model(cpu != environment.end() && cpu->is_string() ? cpu->get<std::string>() : "");
}

namespace {

// Reasons may quote bytes from a bad data file: replace invalid UTF-8 rather than throw.
std::string compact(const ojson& j) { return j.dump(-1, ' ', false, ojson::error_handler_t::replace); }

std::string one_record_line(const ojson& j) { return compact(j) + "\n"; }

// Indented to kResultsIndentDepth levels (the document, its runs, each run's fields), compact below:
// one line per field of a run keeps diffs readable at two thirds of the fully indented size.
constexpr int kResultsIndentDepth = 3;

void write_indented(const ojson& v, int depth, std::string& out) {
  if (depth >= kResultsIndentDepth || !v.is_structured() || v.empty()) {
    out += compact(v);
    return;
  }
  const std::string pad(2 * (depth + 1), ' ');
  const bool object = v.is_object();
  out += object ? "{\n" : "[\n";
  bool first = true;
  for (auto it = v.begin(); it != v.end(); ++it) {
    if (!first) out += ",\n";
    first = false;
    out += pad;
    if (object) out += compact(ojson(it.key())) + ": ";
    write_indented(*it, depth + 1, out);
  }
  out += "\n" + std::string(2 * depth, ' ') + (object ? "}" : "]");
}

}  // namespace

std::string dump_results(const ojson& doc) {
  std::string out;
  write_indented(doc, 0, out);
  return out + "\n";
}

// ---- lock ------------------------------------------------------------------------------------

ResultsLock::ResultsLock(const std::string& json_path, const std::string& command) : path_(json_path + ".lock") {
  const fs::path parent = fs::path(json_path).parent_path();
  std::error_code ec;
  if (!parent.empty()) fs::create_directories(parent, ec);
  // The holder removes the file when it is done: a lock taken on a file that is no longer the
  // one at the path is worthless, so the inode is checked after locking and the lock retaken.
  for (int attempt = 0; attempt < 100; ++attempt) {
    fd_ = ::open(path_.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (fd_ < 0) throw Error(path_ + ": cannot create the lock file: " + std::strerror(errno));
    if (::flock(fd_, LOCK_EX | LOCK_NB) != 0) {
      const int err = errno;
      std::string holder;
      char buf[512];
      const ssize_t n = ::pread(fd_, buf, sizeof buf - 1, 0);
      if (n > 0) holder.assign(buf, static_cast<std::size_t>(n));
      while (!holder.empty() && (holder.back() == '\n' || holder.back() == ' ')) holder.pop_back();
      ::close(fd_);
      fd_ = -1;
      if (err != EWOULDBLOCK) throw Error(path_ + ": cannot lock: " + std::strerror(err));
      throw Error(json_path + " is being written by another run_experiment (" +
                  (holder.empty() ? std::string("holder unknown") : holder) +
                  "); wait for it to finish, or write elsewhere with --out DIR");
    }
    struct stat mine {}, now {};
    if (::fstat(fd_, &mine) == 0 && ::stat(path_.c_str(), &now) == 0 && mine.st_ino == now.st_ino && mine.st_dev == now.st_dev) {
      std::string who = "pid " + std::to_string(::getpid()) + " on host " + machine::hostname() + " since " + utc_now_iso8601();
      if (!command.empty()) who += ", " + command;
      who += "\n";
      if (::ftruncate(fd_, 0) != 0 || !write_all(fd_, who.data(), who.size()).empty()) {
        // The lock holds without the note; a second writer then says "holder unknown".
      }
      return;
    }
    ::close(fd_);
    fd_ = -1;
  }
  throw Error(path_ + ": cannot take the lock (the file keeps changing)");
}

ResultsLock::~ResultsLock() {
  if (fd_ < 0) return;
  ::unlink(path_.c_str());  // before the close: a waiter that locks the old file sees it is gone
  ::close(fd_);
}

int remove_stale_temp_files(const std::string& dir, const std::string& stem) {
  std::error_code ec;
  int removed = 0;
  for (const auto& e : fs::directory_iterator(dir, ec)) {
    const std::string name = e.path().filename().string();
    if (name.rfind(stem + ".", 0) != 0) continue;
    const std::size_t at = name.rfind(".tmp.");
    if (at == std::string::npos || at + 5 >= name.size()) continue;
    const std::string pid_text = name.substr(at + 5);
    if (pid_text.find_first_not_of("0123456789") != std::string::npos || pid_text.size() > 9) continue;
    const pid_t pid = static_cast<pid_t>(std::stol(pid_text));
    if (pid == ::getpid() || ::kill(pid, 0) == 0 || errno != ESRCH) continue;  // alive (or not ours to judge)
    std::error_code rm;
    if (fs::remove(e.path(), rm)) ++removed;
  }
  return removed;
}

// ---- journal -----------------------------------------------------------------------------------

Journal::Journal(const std::string& path, const ojson& header, const std::vector<ojson>& records) : path_(path) {
  std::string text = one_record_line(header);
  for (const auto& r : records) text += one_record_line(r);
  write_file_atomic(path_, text);
  fd_ = ::open(path_.c_str(), O_WRONLY | O_APPEND | O_CLOEXEC);
  if (fd_ < 0) throw Error(path_ + ": cannot open the journal: " + std::strerror(errno));
}

Journal::~Journal() {
  if (fd_ >= 0) ::close(fd_);
}

void Journal::append(const ojson& record) {
  const std::string line = one_record_line(record);
  // One write() of a whole line: a crash leaves at most a torn last line, which readers skip.
  if (const std::string why = write_all(fd_, line.data(), line.size()); !why.empty())
    throw Error(path_ + ": cannot append to the journal: " + why);
  if (::fdatasync(fd_) != 0) throw Error(path_ + ": cannot flush the journal: " + std::strerror(errno));
}

void Journal::remove() {
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
  ::unlink(path_.c_str());
}

JournalContents read_journal(const std::string& path) {
  std::string text;
  {
    std::unique_ptr<std::FILE, int (*)(std::FILE*)> f(std::fopen(path.c_str(), "rb"), &std::fclose);
    if (!f) throw Error(path + ": cannot open the journal: " + std::strerror(errno));
    char buf[1 << 16];
    std::size_t n;
    while ((n = std::fread(buf, 1, sizeof buf, f.get())) > 0) text.append(buf, n);
  }
  JournalContents out;
  std::size_t pos = 0, line_no = 0;
  while (pos < text.size()) {
    std::size_t nl = text.find('\n', pos);
    const bool last = nl == std::string::npos;
    if (last) nl = text.size();
    const std::string line = text.substr(pos, nl - pos);
    pos = nl + 1;
    ++line_no;
    if (line.empty()) continue;
    ojson j;
    std::string why = json_depth_error(line, path + ":" + std::to_string(line_no));
    if (why.empty()) {
      j = ojson::parse(line, nullptr, false);
      if (j.is_discarded() || !j.is_object()) why = path + ":" + std::to_string(line_no) + ": not a JSON object";
    }
    if (!why.empty()) {
      // Only the line being written when the process died may be cut short.
      if (last && line_no > 1) {
        out.torn_tail = true;
        break;
      }
      throw Error(why + " (the journal is damaged; move it away to start over)");
    }
    if (line_no == 1) {
      if (j.value("journal", std::string()) != "gpudm-results-journal" || j.value("version", 0) != 1 ||
          !j.contains("document") || !j["document"].is_object())
        throw Error(path + ": not a gpudm results journal (version 1); move it away to start over");
      out.header = std::move(j);
    } else {
      out.records.push_back(std::move(j));
    }
  }
  if (out.header.is_null()) throw Error(path + ": empty journal; move it away to start over");
  return out;
}

}  // namespace gpudm::experiments
