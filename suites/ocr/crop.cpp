#include "suites/ocr/crop.h"

#include <opencv2/imgproc.hpp>

#include <algorithm>

#include "framework/core/error.h"

namespace skiff::ocr {

cv::Size crop_size(const Quad& quad) {
  const auto& p = quad.pts;
  const int width = int(std::max(edge_length(p[0], p[1]), edge_length(p[2], p[3])));
  const int height = int(std::max(edge_length(p[0], p[3]), edge_length(p[1], p[2])));
  return {width, height};
}

cv::Mat crop_text_region(const cv::Mat& image, const Quad& quad) {
  SKIFF_CHECK(!image.empty(), "ocr::crop_text_region: expected a non-empty image, got an empty one");
  const cv::Size size = crop_size(quad);
  SKIFF_CHECK(size.width > 0 && size.height > 0,
              "ocr::crop_text_region: expected a quad with sides of at least 1 px, got a {}x{} crop from "
              "({}, {}), ({}, {}), ({}, {}), ({}, {})",
              size.width, size.height, quad.pts[0].x, quad.pts[0].y, quad.pts[1].x, quad.pts[1].y, quad.pts[2].x,
              quad.pts[2].y, quad.pts[3].x, quad.pts[3].y);
  const float w = float(size.width), h = float(size.height);
  const cv::Point2f dst[4] = {{0.0f, 0.0f}, {w, 0.0f}, {w, h}, {0.0f, h}};
  const cv::Mat m = cv::getPerspectiveTransform(quad.pts.data(), dst);
  cv::Mat crop;
  cv::warpPerspective(image, crop, m, size, cv::INTER_CUBIC, cv::BORDER_REPLICATE);
  if (crop.rows * 1.0 / crop.cols >= 1.5) cv::rotate(crop, crop, cv::ROTATE_90_COUNTERCLOCKWISE);
  return crop;
}

}  // namespace skiff::ocr
