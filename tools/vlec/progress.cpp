// tools/vlec/progress.cpp: drawing and erasing the stderr progress bar, and the
// human-readable byte and rate formats (see progress.hpp).
#include "progress.hpp"

#include <cstdio>
#include <utility>

#include "file_io.hpp"

namespace vlec::cli {

Progress::Progress(std::string label, uint64_t total, bool quiet)
    : label_(std::move(label)),
      total_(total),
      enabled_(!quiet && total > kProgressMinBytes && stderr_is_terminal()),
      start_(std::chrono::steady_clock::now()) {}

Progress::~Progress() { clear(); }

void Progress::update(uint64_t done) {
  if (!enabled_) return;
  constexpr int kWidth = 30;
  double fraction = total_ ? static_cast<double>(done) / static_cast<double>(total_) : 0.0;
  if (fraction > 1.0) fraction = 1.0;
  int filled = static_cast<int>(fraction * kWidth);
  std::string bar(static_cast<std::size_t>(filled), '#');
  bar.append(static_cast<std::size_t>(kWidth - filled), '.');
  double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  std::string label = label_;
  if (label.size() > 32) label = "..." + label.substr(label.size() - 29);
  std::fprintf(stderr, "\r\033[K%s [%s] %3d%% %s / %s  %s", label.c_str(), bar.c_str(),
               static_cast<int>(fraction * 100.0), format_bytes(done).c_str(),
               format_bytes(total_).c_str(), format_rate(done, seconds).c_str());
  std::fflush(stderr);
  drawn_ = true;
}

void Progress::clear() {
  if (!drawn_) return;
  std::fputs("\r\033[K", stderr);
  std::fflush(stderr);
  drawn_ = false;
}

std::string format_bytes(uint64_t bytes) {
  static const char* const kUnits[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
  if (bytes < 1024) return std::to_string(bytes) + " B";
  double v = static_cast<double>(bytes);
  int unit = 0;
  while (v >= 1024.0 && unit < 5) {
    v /= 1024.0;
    ++unit;
  }
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2f %s", v, kUnits[unit]);
  return buf;
}

std::string format_rate(uint64_t bytes, double seconds) {
  if (seconds <= 0.0) return "-";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f MB/s", static_cast<double>(bytes) / seconds / 1e6);
  return buf;
}

}  // namespace vlec::cli
