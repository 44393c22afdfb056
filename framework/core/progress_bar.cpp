#include "framework/core/progress_bar.h"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>

namespace skiff {

namespace {
double now_s() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}
}  // namespace

ProgressBar::ProgressBar(bool enabled, int width) : active_(enabled && ::isatty(STDERR_FILENO)), width_(width) {}

ProgressBar::~ProgressBar() { finish(true); }

void ProgressBar::draw(double fraction, const std::string& text, bool force) {
  if (!active_) return;
  fraction = std::clamp(fraction, 0.0, 1.0);
  double t = now_s();
  if (!force && fraction < 1.0 && t - last_draw_ < 0.1) return;
  last_draw_ = t;
  int filled = int(fraction * width_);
  std::string bar(size_t(filled), '#');
  bar.resize(size_t(width_), '.');
  // \r\033[K: back to the line start and erase it, so a shorter text leaves no tail.
  std::fprintf(stderr, "\r\033[K[%s] %s", bar.c_str(), text.c_str());
  std::fflush(stderr);
  drawn_ = true;
}

void ProgressBar::clear() {
  if (!drawn_) return;
  std::fprintf(stderr, "\r\033[K");
  std::fflush(stderr);
  drawn_ = false;
}

void ProgressBar::finish(bool keep) {
  if (!drawn_) return;
  std::fprintf(stderr, keep ? "\n" : "\r\033[K");
  std::fflush(stderr);
  drawn_ = false;
}

}  // namespace skiff
