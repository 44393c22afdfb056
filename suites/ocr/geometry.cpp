#include "suites/ocr/geometry.h"

#include <opencv2/imgproc.hpp>

#include <algorithm>
#include <cmath>
#include <vector>

#include "framework/core/error.h"

namespace skiff::ocr {

namespace {

// First index of the smallest / largest value (numpy argmin / argmax).
template <typename T, typename Less>
std::size_t arg_best(const std::vector<T>& v, Less less) {
  std::size_t best = 0;
  for (std::size_t i = 1; i < v.size(); ++i)
    if (less(v[i], v[best])) best = i;
  return best;
}

MiniBox mini_box_from_rect(const cv::RotatedRect& rect) {
  std::array<cv::Point2f, 4> p;
  rect.points(p.data());
  std::stable_sort(p.begin(), p.end(),
                   [](const cv::Point2f& a, const cv::Point2f& b) { return a.x < b.x; });
  // Of the two left-most points the upper one is top-left; same on the right.
  const auto [tl, bl] = p[1].y > p[0].y ? std::pair{0, 1} : std::pair{1, 0};
  const auto [tr, br] = p[3].y > p[2].y ? std::pair{2, 3} : std::pair{3, 2};
  MiniBox out;
  out.quad.pts = {p[tl], p[tr], p[br], p[bl]};
  out.short_side = std::min(rect.size.width, rect.size.height);
  return out;
}

}  // namespace

Quad order_points_clockwise(const Quad& q) {
  std::vector<float> sums(4);
  for (int i = 0; i < 4; ++i) sums[i] = q.pts[i].x + q.pts[i].y;
  const std::size_t i_min = arg_best(sums, std::less<float>{});
  const std::size_t i_max = arg_best(sums, std::greater<float>{});
  std::vector<cv::Point2f> rest;
  for (std::size_t i = 0; i < 4; ++i)
    if (i != i_min && i != i_max) rest.push_back(q.pts[i]);
  std::vector<float> diffs;
  for (const auto& p : rest) diffs.push_back(p.y - p.x);
  Quad out;
  out.pts[0] = q.pts[i_min];
  out.pts[2] = q.pts[i_max];
  out.pts[1] = rest[arg_best(diffs, std::less<float>{})];
  out.pts[3] = rest[arg_best(diffs, std::greater<float>{})];
  return out;
}

MiniBox min_area_box(std::span<const cv::Point> points) {
  SKIFF_CHECK(!points.empty(), "ocr::min_area_box: expected at least one point, got none");
  const cv::Mat m(int(points.size()), 1, CV_32SC2, const_cast<cv::Point*>(points.data()));
  return mini_box_from_rect(cv::minAreaRect(m));
}

MiniBox min_area_box(std::span<const cv::Point2f> points) {
  SKIFF_CHECK(!points.empty(), "ocr::min_area_box: expected at least one point, got none");
  const cv::Mat m(int(points.size()), 1, CV_32FC2, const_cast<cv::Point2f*>(points.data()));
  return mini_box_from_rect(cv::minAreaRect(m));
}

Quad clip_to_image(const Quad& q, int width, int height) {
  SKIFF_CHECK(width > 0 && height > 0,
              "ocr::clip_to_image: expected a positive image size, got {}x{}", width, height);
  Quad out;
  for (int i = 0; i < 4; ++i) {
    out.pts[i].x = std::trunc(std::min(std::max(q.pts[i].x, 0.0f), float(width - 1)));
    out.pts[i].y = std::trunc(std::min(std::max(q.pts[i].y, 0.0f), float(height - 1)));
  }
  return out;
}

float edge_length(cv::Point2f a, cv::Point2f b) {
  const float dx = b.x - a.x;
  const float dy = b.y - a.y;
  return std::sqrt(dx * dx + dy * dy);
}

}  // namespace skiff::ocr
