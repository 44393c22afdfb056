#include "suites/ocr/box_order.h"

#include <algorithm>
#include <cmath>
#include <utility>

namespace skiff::ocr {

namespace {

// Strict weak order on (y, x) with NaN after every number, so a malformed box
// cannot break std::stable_sort's preconditions.
bool less_coord(float a, float b) {
  if (std::isnan(a)) return false;
  if (std::isnan(b)) return true;
  return a < b;
}

}  // namespace

void sort_reading_order(std::vector<TextBox>& boxes) {
  std::stable_sort(boxes.begin(), boxes.end(), [](const TextBox& a, const TextBox& b) {
    const cv::Point2f& p = a.quad.pts[0];
    const cv::Point2f& q = b.quad.pts[0];
    if (less_coord(p.y, q.y)) return true;
    if (less_coord(q.y, p.y)) return false;
    return less_coord(p.x, q.x);
  });
  // PaddleOCR's pass: for i in range(n-1): for j in range(i, -1, -1): swap
  // boxes j and j+1 while they are on the same line and out of x order.
  for (std::size_t i = 0; i + 1 < boxes.size(); ++i) {
    for (std::size_t j = i + 1; j-- > 0;) {
      const cv::Point2f& left = boxes[j].quad.pts[0];
      const cv::Point2f& right = boxes[j + 1].quad.pts[0];
      if (std::abs(right.y - left.y) < kSameLineTolerance && right.x < left.x)
        std::swap(boxes[j], boxes[j + 1]);
      else
        break;
    }
  }
}

}  // namespace skiff::ocr
