// tools/vlec/progress.hpp: a one-line progress bar on stderr, and the byte and
// rate formatting the tool's messages share.
//
// Large files take seconds to minutes; a bar tells the user the tool is alive.
// It is shown only when it helps and cannot corrupt anything: stderr is a
// terminal, -q was not given, and the input's size is known and large
// (> kProgressMinBytes). It is redrawn once per frame and erased at the end,
// so the terminal is left as it was (error messages start on a clean line).
#pragma once

#include <chrono>
#include <cstdint>
#include <string>

namespace vlec::cli {

constexpr uint64_t kProgressMinBytes = 100'000'000;

class Progress {
 public:
  // `total` = 0 means unknown; the bar is then never drawn.
  Progress(std::string label, uint64_t total, bool quiet);
  ~Progress();  // erases the bar
  Progress(const Progress&) = delete;
  Progress& operator=(const Progress&) = delete;

  bool enabled() const { return enabled_; }
  void update(uint64_t done);
  void clear();

 private:
  std::string label_;
  uint64_t total_;
  bool enabled_;
  bool drawn_ = false;
  std::chrono::steady_clock::time_point start_;
};

// "1.50 MiB", "512 B", ...
std::string format_bytes(uint64_t bytes);
// Decimal megabytes per second ("123.4 MB/s"), "-" if the time is zero.
std::string format_rate(uint64_t bytes, double seconds);

}  // namespace vlec::cli
