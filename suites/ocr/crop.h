#pragma once
/// \file crop.h
/// Cutting a detected text region out of the image, as PaddleOCR's
/// get_rotate_crop_image (tools/infer/utility.py).

#include <opencv2/core.hpp>

#include "suites/ocr/geometry.h"

namespace skiff::ocr {

/// Size of the crop of `quad` before any rotation: width = int(max(|p0 p1|, |p2 p3|)),
/// height = int(max(|p0 p3|, |p1 p2|)), lengths in float32 (edge_length).
cv::Size crop_size(const Quad& quad);

/// Warps the region `quad` (clockwise from top-left) of `image` to an upright
/// crop of crop_size(quad) with cv::warpPerspective (INTER_CUBIC,
/// BORDER_REPLICATE), then, when crop height / width >= 1.5 (vertical text),
/// rotates it 90 degrees counter-clockwise (numpy rot90). The result has the
/// image's type.
/// \throws ValueError if the image is empty or crop_size(quad) has a zero side.
cv::Mat crop_text_region(const cv::Mat& image, const Quad& quad);

}  // namespace skiff::ocr
