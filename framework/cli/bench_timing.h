#pragma once
// Timing helpers shared by the `skiff bench` subcommands (core and suites).
#include <algorithm>
#include <chrono>
#include <functional>
#include <sstream>
#include <string>
#include <vector>

#include "framework/core/error.h"

namespace skiff::cli {

/// Median wall time of fn() after 3 warm-up calls, over at least min_reps calls
/// and min_time seconds (at most 1000 calls).
inline double median_seconds(const std::function<void()>& fn, double min_time = 0.5, int min_reps = 5,
                             int warmup = 3) {
  using clock = std::chrono::steady_clock;
  for (int i = 0; i < warmup; ++i) fn();
  std::vector<double> times;
  auto start = clock::now();
  while (int(times.size()) < min_reps || std::chrono::duration<double>(clock::now() - start).count() < min_time) {
    auto t0 = clock::now();
    fn();
    times.push_back(std::chrono::duration<double>(clock::now() - t0).count());
    if (times.size() > 1000) break;
  }
  std::sort(times.begin(), times.end());
  return times[times.size() / 2];
}

/// "1,2" -> {1, 2}. \throws ValueError for anything but positive integers.
inline std::vector<int> parse_threads_list(const std::string& text) {
  std::vector<int> out;
  std::stringstream list(text);
  for (std::string item; std::getline(list, item, ',');) {
    int n = 0;
    try {
      n = std::stoi(item);
    } catch (const std::exception&) {
    }
    SKIFF_CHECK(n > 0, "bench: --threads-list expects positive integers separated by commas, got '{}'", text);
    out.push_back(n);
  }
  return out;
}

}  // namespace skiff::cli
