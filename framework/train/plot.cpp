#include "framework/train/plot.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>
#include <opencv2/imgproc.hpp>

namespace skiff::train {

cv::Mat line_panel(const std::vector<double>& x, const std::vector<Curve>& curves, double lo, double hi,
                   const std::string& title, const std::string& xlabel) {
  const int w = 300, h = 200, left = 60, top = 28, right = 12, bottom = 36;
  cv::Mat out(top + h + bottom, left + w + right, CV_8UC3, cv::Scalar(255, 255, 255));
  auto text = [&](const std::string& s, int px, int py, double sz = 0.38) {
    cv::putText(out, s, cv::Point(px, py), cv::FONT_HERSHEY_SIMPLEX, sz, cv::Scalar(0, 0, 0), 1, cv::LINE_AA);
  };
  const double x0 = x.front(), x1 = x.back();
  auto px = [&](double v) { return left + int(std::lround((v - x0) / (x1 - x0) * (w - 1))); };
  auto py = [&](double v) { return top + int(std::lround((hi - v) / (hi - lo) * (h - 1))); };
  cv::rectangle(out, cv::Rect(left, top, w, h), cv::Scalar(0, 0, 0));
  for (int t = 0; t <= 4; ++t) {
    double vy = lo + (hi - lo) * t / 4.0, vx = x0 + (x1 - x0) * t / 4.0;
    cv::line(out, cv::Point(left - 3, py(vy)), cv::Point(left, py(vy)), cv::Scalar(0, 0, 0));
    text(fmt::format("{:.3g}", vy), 2, py(vy) + 4);
    cv::line(out, cv::Point(px(vx), top + h), cv::Point(px(vx), top + h + 3), cv::Scalar(0, 0, 0));
    text(fmt::format("{:.3g}", vx), px(vx) - 10, top + h + 15);
  }
  text(xlabel, left + w / 2 - 4, top + h + 31);
  text(title, left, 18, 0.5);
  for (const Curve& c : curves)
    for (size_t i = 1; i < x.size(); ++i) {
      if (c.dashed && (i / 3) % 2 == 1) continue;  // 3 segments on, 3 off
      cv::line(out, cv::Point(px(x[i - 1]), py(c.y[i - 1])), cv::Point(px(x[i]), py(c.y[i])), c.colour, 2,
               cv::LINE_AA);
    }
  return out;
}

std::pair<double, double> padded_range(const std::vector<std::vector<double>>& series) {
  double lo = INFINITY, hi = -INFINITY;
  for (const auto& s : series)
    for (double v : s) lo = std::min(lo, v), hi = std::max(hi, v);
  if (!(lo <= hi)) return {-1, 1};
  const double margin = hi > lo ? 0.05 * (hi - lo) : 1.0;
  return {lo - margin, hi + margin};
}

cv::Mat panel_row(const std::vector<cv::Mat>& panels, const std::string& legend) {
  cv::Mat img;
  cv::hconcat(panels, img);
  cv::copyMakeBorder(img, img, 0, 18, 0, 0, cv::BORDER_CONSTANT, cv::Scalar(255, 255, 255));
  cv::putText(img, legend, cv::Point(8, img.rows - 6), cv::FONT_HERSHEY_SIMPLEX, 0.38, cv::Scalar(0, 0, 0), 1,
              cv::LINE_AA);
  return img;
}

}  // namespace skiff::train
