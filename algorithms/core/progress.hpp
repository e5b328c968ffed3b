#pragma once
// One-line progress on stderr with rate and ETA. On a terminal the line is redrawn;
// otherwise a plain line is printed at most every `plain_interval` seconds.
#include <string>

namespace gpudm {

class Progress {
 public:
  Progress(std::string label, double total, std::string unit = "it");
  ~Progress();
  Progress(const Progress&) = delete;
  Progress& operator=(const Progress&) = delete;

  void advance(double n = 1.0);
  void set(double done);
  void set_label(std::string label);
  void finish();

  // Globally silence progress output (tests, --quiet).
  static void set_quiet(bool quiet);

 private:
  void draw(bool force);
  std::string label_, unit_;
  double total_, done_ = 0.0;
  double start_, last_draw_ = -1.0;
  bool tty_, finished_ = false;
};

}  // namespace gpudm
