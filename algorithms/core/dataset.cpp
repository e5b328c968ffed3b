#include "algorithms/core/dataset.hpp"

#include "algorithms/core/text.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <limits>
#include <string>

namespace gpudm {

namespace {

std::string bytes_text(double b) {
  const char* units[] = {"B", "KB", "MB", "GB", "TB", "PB", "EB"};
  int u = 0;
  while (b >= 1000.0 && u < 6) {
    b /= 1000.0;
    ++u;
  }
  char buf[48];
  std::snprintf(buf, sizeof buf, u == 0 ? "%.0f %s" : "%.1f %s", b, units[u]);
  return buf;
}

// A number from a one-line sysfs/procfs file; 0 when absent or "max".
std::size_t read_number_file(const char* path) {
  std::ifstream in(path);
  std::string s;
  if (!(in >> s) || s == "max") return 0;
  try {
    return static_cast<std::size_t>(std::stoull(s));
  } catch (const std::exception&) {
    return 0;
  }
}

}  // namespace

std::size_t Dataset::available_host_memory() {
  std::size_t avail = 0;
  std::ifstream in("/proc/meminfo");
  std::string key;
  std::size_t kb = 0;
  std::string unit;
  while (in >> key >> kb >> unit)
    if (key == "MemAvailable:") {
      avail = kb * 1024;
      break;
    }
  // A container's cgroup (v2) limit may be far below the host's free memory.
  const std::size_t limit = read_number_file("/sys/fs/cgroup/memory.max");
  const std::size_t used = read_number_file("/sys/fs/cgroup/memory.current");
  if (limit > 0 && limit > used && (avail == 0 || limit - used < avail)) avail = limit - used;
  return avail;
}

std::string Dataset::memory_shortfall(double need, std::size_t available, const std::string& doing) {
  if (available == 0 || need <= static_cast<double>(available)) return "";
  const auto mib = [](double b) { return std::to_string(static_cast<unsigned long long>(b / 1048576.0 + 0.5)); };
  return "needs about " + mib(need) + " MiB of host memory to " + doing + "; " + mib(static_cast<double>(available)) +
         " MiB are available";
}

std::size_t Dataset::padded_checked(const std::string& name, std::size_t rows, std::size_t cols) {
  // Features (padded, float) + labels or targets (4 bytes a row); below 256 MB nothing is read.
  const double r = static_cast<double>(rows);
  const double need = ((r + static_cast<double>(kRowPad)) * static_cast<double>(cols) + r) * 4.0;
  if (need < 256e6) return padded(rows);
  const std::size_t avail = available_host_memory();
  const bool too_big = need > static_cast<double>(std::numeric_limits<std::size_t>::max()) / 2;
  if (too_big || (avail > 0 && need > static_cast<double>(avail)))
    throw Error("dataset '" + name + "': " + std::to_string(rows) + " rows x " + std::to_string(cols) + " attributes need " +
                bytes_text(need) + " of host memory; this machine has " +
                (avail > 0 ? bytes_text(static_cast<double>(avail)) : std::string("an unknown amount")) +
                " available; ask for fewer rows");
  return padded(rows);
}

void Dataset::validate() const {
  const std::string who = "dataset '" + utf8_escaped(name_) + "'";
  if (rows_ == 0) throw Error(who + ": no rows");
  if (attributes_.empty()) throw Error(who + ": no attributes");
  // Names end up in JSON (results, model files), which holds UTF-8 only: a name in another
  // encoding is refused here, before any run, instead of failing the write after it.
  const auto require_utf8 = [&](const std::string& text, const std::string& what) {
    if (const std::size_t at = utf8_error_at(text); at != std::string::npos) {
      char hex[8];
      std::snprintf(hex, sizeof hex, "0x%02X", static_cast<unsigned char>(text[at]));
      throw Error(who + ": " + what + " '" + utf8_escaped(text) + "' is not UTF-8 text (byte " + hex + " at offset " +
                  std::to_string(at) + "); save the file as UTF-8");
    }
  };
  for (const Attribute& a : attributes_) {
    require_utf8(a.name, "the attribute name");
    for (const std::string& v : a.values) require_utf8(v, "a category of attribute '" + utf8_escaped(a.name) + "',");
  }
  for (const std::string& c : class_names_) require_utf8(c, "the class name");
  for (std::size_t c = 0; c < cols(); ++c) {
    const float* col = column(c);
    const Attribute& a = attributes_[c];
    for (std::size_t r = 0; r < rows_; ++r) {
      if (is_missing(r, c)) continue;
      const float v = col[r];
      if (!std::isfinite(v))
        throw Error(who + ": row " + std::to_string(r + 1) + ", attribute '" + a.name + "' is not finite");
      if (a.is_nominal() && (v < 0 || v >= static_cast<float>(a.values.size()) || v != std::floor(v)))
        throw Error(who + ": row " + std::to_string(r + 1) + ", nominal attribute '" + a.name +
                    "' has value index " + std::to_string(v) + " outside its " + std::to_string(a.values.size()) +
                    " values");
    }
  }
  if (task_ == Task::classification) {
    if (class_names_.empty()) throw Error(who + ": classification dataset without class names");
    for (std::size_t r = 0; r < rows_; ++r)
      if (labels_[r] < 0 || labels_[r] >= num_classes())
        throw Error(who + ": row " + std::to_string(r + 1) + " has class " + std::to_string(labels_[r]) +
                    ", expected 0.." + std::to_string(num_classes() - 1));
  } else {
    for (std::size_t r = 0; r < rows_; ++r)
      if (!std::isfinite(targets_[r]))
        throw Error(who + ": row " + std::to_string(r + 1) + " has a non-finite target");
  }
}

Dataset Dataset::select(const std::vector<std::size_t>& rows) const {
  Dataset d(name_, task_, rows.size(), attributes_, class_names_);
  d.source = source;
  d.path = path;
  d.sha256 = sha256;
  d.seed = seed;
  d.surrogate = surrogate;
  // Each cell's value as it is, and its mask bit (as slice copies them): a missing cell that was
  // imputed keeps its imputed value (set_missing would write NaN over it).
  for (std::size_t c = 0; c < cols(); ++c)
    for (std::size_t i = 0; i < rows.size(); ++i) {
      d.at(i, c) = at(rows[i], c);
      if (!is_missing(rows[i], c)) continue;
      if (d.missing_.empty()) d.missing_.assign(d.features_.size(), 0);
      d.missing_[c * d.padded_rows_ + i] = 1;
    }
  for (std::size_t i = 0; i < rows.size(); ++i) {
    if (task_ == Task::classification) d.labels_[i] = labels_[rows[i]];
    else d.targets_[i] = targets_[rows[i]];
  }
  return d;
}

// select(begin .. end - 1), as a copy of each column's contiguous range (the CUDA rows split
// slices a rank's block of a 10M-row set in prepare: an index list and a cell-by-cell copy took
// ~55-75 ms for 5M rows on the development VM)
Dataset Dataset::slice(std::size_t begin, std::size_t end) const {
  if (begin > end || end > rows_) throw Error("dataset '" + name_ + "': slice out of range");
  const std::size_t n = end - begin;
  Dataset d(name_, task_, n, attributes_, class_names_);
  d.source = source;
  d.path = path;
  d.sha256 = sha256;
  d.seed = seed;
  d.surrogate = surrogate;
  // a mask only where a missing cell falls in the range (as select's set_missing gives)
  bool any_missing = false;
  for (std::size_t c = 0; c < cols() && !missing_.empty() && !any_missing; ++c) {
    const auto m = missing_.begin() + static_cast<std::ptrdiff_t>(c * padded_rows_ + begin);
    any_missing = std::any_of(m, m + static_cast<std::ptrdiff_t>(n), [](std::uint8_t v) { return v != 0; });
  }
  if (any_missing) d.missing_.assign(d.features_.size(), 0);
  for (std::size_t c = 0; c < cols(); ++c) {
    std::copy_n(column(c) + begin, n, d.column(c));
    if (any_missing)
      std::copy_n(missing_.begin() + static_cast<std::ptrdiff_t>(c * padded_rows_ + begin), n,
                  d.missing_.begin() + static_cast<std::ptrdiff_t>(c * d.padded_rows_));
  }
  if (task_ == Task::classification) std::copy_n(labels_.begin() + static_cast<std::ptrdiff_t>(begin), n, d.labels_.begin());
  else std::copy_n(targets_.begin() + static_cast<std::ptrdiff_t>(begin), n, d.targets_.begin());
  return d;
}

}  // namespace gpudm
