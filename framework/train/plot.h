#pragma once
/// \file plot.h
/// Line plots for training curves and the science suite's pictures (OpenCV drawing, no plotting library).
#include <string>
#include <vector>

#include <opencv2/core.hpp>

namespace skiff::train {

struct Curve {
  std::vector<double> y;
  cv::Scalar colour;  ///< BGR
  bool dashed = false;
};

/// A 372x264 panel: the curves over common x values (ascending), the y axis
/// spanning [lo, hi] (shared by every panel of a figure so they compare at a
/// glance), five ticks on each axis, a title above and an x label below.
cv::Mat line_panel(const std::vector<double>& x, const std::vector<Curve>& curves, double lo, double hi,
                   const std::string& title, const std::string& xlabel);

/// [min, max] over all values, widened by 5 % on each side (by 1 when flat).
std::pair<double, double> padded_range(const std::vector<std::vector<double>>& series);

/// Panels side by side with a legend line under them.
cv::Mat panel_row(const std::vector<cv::Mat>& panels, const std::string& legend);

}  // namespace skiff::train
