#pragma once
/// \file download.h
/// One HTTP(S) transfer with libcurl, appended to a partial file (internal to
/// skiff_zoo; the public API is zoo.h).

#include <cstdint>
#include <string>

#include "framework/core/progress_bar.h"

namespace skiff::zoo::detail {

/// Progress display on stderr: a redrawn bar on a terminal, plain periodic
/// lines otherwise (logs and CI), nothing when disabled.
class Progress {
 public:
  enum class Mode { Auto, Bar, Lines, Off };
  Progress(Mode mode, std::string label, uint64_t total);
  /// `done` bytes of `total` are on disk now.
  void update(uint64_t done);
  /// Ends the display (the bar gets its final newline).
  void finish(bool ok);

 private:
  Mode mode_;
  std::string label_;
  uint64_t total_;
  uint64_t start_done_ = UINT64_MAX;
  double t0_ = 0, last_ = -1;
  int last_decile_ = -1;
  ProgressBar bar_;
};

/// What a transfer attempt ended with.
struct Transfer {
  bool complete = false;   ///< The server finished the body (it may still be short or wrong).
  bool retryable = false;  ///< A retry (with Range) may succeed: timeouts, dropped connections, 5xx.
  long http_code = 0;
  std::string error;       ///< Human-readable reason when !complete.
};

struct TransferOptions {
  double connect_timeout_s = 30;
  double stall_timeout_s = 30;  ///< Abort when less than 1 byte/s arrives for this long.
  Progress::Mode progress = Progress::Mode::Auto;
  std::string label;            ///< Shown in the progress display.
};

/// GETs `url` and appends to `fd`, whose current size is `offset` (sent as a
/// Range request when > 0; a server that ignores Range makes the file restart
/// at 0). Refuses to write past `max_size` bytes when it is non-zero;
/// `expected_size` only feeds the progress display.
Transfer http_get(const std::string& url, int fd, uint64_t offset, uint64_t expected_size, uint64_t max_size,
                  const TransferOptions& opts);

/// Human-readable byte count ("10.8 MB").
std::string human_size(uint64_t bytes);

}  // namespace skiff::zoo::detail
