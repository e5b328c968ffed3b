#include "algorithms/core/progress.hpp"

#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>

namespace gpudm {
namespace {
std::atomic<bool> g_quiet{false};
double now_s() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}
std::string fmt_time(double s) {
  if (!std::isfinite(s) || s < 0) return "?";
  char buf[32];
  if (s < 60) std::snprintf(buf, sizeof buf, "%.1fs", s);
  else if (s < 3600) std::snprintf(buf, sizeof buf, "%dm%02ds", int(s) / 60, int(s) % 60);
  else std::snprintf(buf, sizeof buf, "%dh%02dm", int(s) / 3600, (int(s) / 60) % 60);
  return buf;
}
}  // namespace

void Progress::set_quiet(bool quiet) { g_quiet = quiet; }

Progress::Progress(std::string label, double total, std::string unit)
    : label_(std::move(label)), unit_(std::move(unit)), total_(total), start_(now_s()),
      tty_(isatty(STDERR_FILENO) != 0) {}

Progress::~Progress() { finish(); }

void Progress::advance(double n) { set(done_ + n); }
void Progress::set(double done) {
  done_ = done;
  draw(false);
}
void Progress::set_label(std::string label) { label_ = std::move(label); }

void Progress::finish() {
  if (finished_) return;
  finished_ = true;
  if (last_draw_ >= 0) {
    draw(true);
    if (tty_ && !g_quiet) std::fputc('\n', stderr);
  }
}

void Progress::draw(bool force) {
  if (g_quiet) return;
  const double t = now_s();
  const double interval = tty_ ? 0.2 : 5.0;
  // Stay silent for the first second: short runs print nothing.
  if (!force && (t - start_ < 1.0 || (last_draw_ >= 0 && t - last_draw_ < interval))) return;
  if (force && last_draw_ < 0) return;
  last_draw_ = t;
  const double elapsed = t - start_;
  const double rate = elapsed > 0 ? done_ / elapsed : 0.0;
  const double eta = rate > 0 && total_ > 0 ? (total_ - done_) / rate : -1.0;
  const double frac = total_ > 0 ? std::min(1.0, done_ / total_) : 0.0;
  char bar[21];
  const int filled = static_cast<int>(frac * 20);
  for (int i = 0; i < 20; ++i) bar[i] = i < filled ? '#' : '.';
  bar[20] = 0;
  std::fprintf(stderr, "%s%s [%s] %3.0f%% %.0f/%.0f %s  %.3g %s/s  elapsed %s  ETA %s%s", tty_ ? "\r\033[K" : "",
               label_.c_str(), bar, 100 * frac, done_, total_, unit_.c_str(), rate, unit_.c_str(),
               fmt_time(elapsed).c_str(), fmt_time(eta).c_str(), tty_ ? "" : "\n");
  std::fflush(stderr);
}

}  // namespace gpudm
