#include "suites/ocr/orientation.h"

#include <opencv2/core.hpp>

#include "framework/core/error.h"

namespace skiff::ocr {

Orientation decode_orientation(const float* probs) {
  SKIFF_CHECK(probs != nullptr, "ocr::decode_orientation: expected 2 probabilities, got a null pointer");
  const int best = probs[1] > probs[0] ? 1 : 0;
  return Orientation{best == 1 ? 180 : 0, probs[best]};
}

bool needs_rotation(const Orientation& o, float cls_thresh) { return o.angle == 180 && o.score > cls_thresh; }

cv::Mat rotate_180(const cv::Mat& image) {
  cv::Mat out;
  if (image.empty()) return out;
  cv::rotate(image, out, cv::ROTATE_180);
  return out;
}

}  // namespace skiff::ocr
