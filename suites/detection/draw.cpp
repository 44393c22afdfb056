#include "suites/detection/draw.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <opencv2/imgproc.hpp>

namespace skiff::detection {

cv::Scalar class_color(int class_id) {
  // Golden-angle hues: neighbouring ids get far-apart colours.
  const double hue = std::fmod(double(class_id) * 137.508, 360.0);
  const double c = 0.85 * 0.9, x = c * (1 - std::fabs(std::fmod(hue / 60.0, 2.0) - 1)), m = 0.9 - c;
  double r = 0, g = 0, b = 0;
  if (hue < 60) r = c, g = x;
  else if (hue < 120) r = x, g = c;
  else if (hue < 180) g = c, b = x;
  else if (hue < 240) g = x, b = c;
  else if (hue < 300) r = x, b = c;
  else r = c, b = x;
  return cv::Scalar((b + m) * 255, (g + m) * 255, (r + m) * 255);
}

cv::Mat draw_detections(const cv::Mat& bgr, const std::vector<DetectedBox>& boxes,
                        const std::function<std::string(int)>& label) {
  cv::Mat out = bgr.clone();
  const int thickness = std::max(2, std::min(out.cols, out.rows) / 300);
  const double font_scale = std::max(0.5, std::min(out.cols, out.rows) / 900.0);
  // Lowest score first, so the best boxes end up on top.
  std::vector<DetectedBox> order(boxes.rbegin(), boxes.rend());
  for (const auto& d : order) {
    const cv::Scalar color = class_color(d.class_id);
    cv::Point p0(int(std::lround(d.box.x0)), int(std::lround(d.box.y0)));
    cv::Point p1(int(std::lround(d.box.x1)), int(std::lround(d.box.y1)));
    cv::rectangle(out, p0, p1, color, thickness, cv::LINE_AA);
    const std::string text = fmt::format("{} {:.2f}", label(d.class_id), d.score);
    int baseline = 0;
    cv::Size size = cv::getTextSize(text, cv::FONT_HERSHEY_SIMPLEX, font_scale, 1, &baseline);
    // Above the box, or inside it when the box touches the top edge.
    int top = p0.y - size.height - baseline - 4 >= 0 ? p0.y - size.height - baseline - 4 : p0.y;
    cv::rectangle(out, cv::Point(p0.x, top), cv::Point(p0.x + size.width + 4, top + size.height + baseline + 4), color,
                  cv::FILLED);
    cv::putText(out, text, cv::Point(p0.x + 2, top + size.height + 2), cv::FONT_HERSHEY_SIMPLEX, font_scale,
                cv::Scalar(255, 255, 255), 1, cv::LINE_AA);
  }
  return out;
}

}  // namespace skiff::detection
