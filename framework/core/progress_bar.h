#pragma once
/// \file progress_bar.h
/// The one progress bar of skiff: a line on stderr redrawn in place on a
/// terminal ("[#######.........] text"), used by downloads and training runs.
/// Callers decide what the text says and when plain log lines are printed
/// instead (when stderr is not a terminal, draw() does nothing).

#include <string>

namespace skiff {

class ProgressBar {
 public:
  /// `enabled`: draw at all (callers pass e.g. "not quiet"); the bar is also
  /// off when stderr is not a terminal. `width`: characters between the brackets.
  explicit ProgressBar(bool enabled = true, int width = 24);
  ~ProgressBar();
  ProgressBar(const ProgressBar&) = delete;
  ProgressBar& operator=(const ProgressBar&) = delete;

  /// True when draw() shows something (enabled and stderr is a terminal).
  bool active() const { return active_; }
  /// True while a drawing is on screen (draw() since the last clear() / finish()).
  bool drawn() const { return drawn_; }
  /// Redraws "[bar] text" for `fraction` in [0, 1]. At most ten redraws a
  /// second, except the last one (fraction 1) or with `force`.
  void draw(double fraction, const std::string& text, bool force = false);
  /// Erases the bar's line so that a log line can be printed; the next draw() brings it back.
  void clear();
  /// Leaves the last drawing on its own line (or erases it with `keep = false`).
  void finish(bool keep = true);

 private:
  bool active_;
  int width_;
  bool drawn_ = false;
  double last_draw_ = -1;
};

}  // namespace skiff
