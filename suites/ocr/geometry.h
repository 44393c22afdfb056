#pragma once
/// \file geometry.h
/// Quadrilaterals of detected text and the point-ordering helpers PP-OCR uses.
///
/// Coordinates are pixels of the image the quad refers to: x to the right, y
/// down, (0, 0) the centre of the top-left pixel (OpenCV convention).
/// "Clockwise" is clockwise on screen (y down): top-left, top-right,
/// bottom-right, bottom-left.

#include <opencv2/core.hpp>

#include <array>
#include <span>

namespace skiff::ocr {

/// Four corners of a text region, ordered top-left, top-right, bottom-right,
/// bottom-left (clockwise on screen).
struct Quad {
  std::array<cv::Point2f, 4> pts;
};

/// A detected text region and its detection score in [0, 1].
struct TextBox {
  Quad quad;
  float score = 0.0f;
};

/// Orders 4 points clockwise from the top-left, exactly as PaddleOCR's
/// TextDetector.order_points_clockwise (PP-OCR 2.6 and later):
/// top-left = smallest x+y, bottom-right = largest x+y (first one on ties), and
/// of the two remaining points top-right = smallest y-x, bottom-left = largest.
/// For degenerate input where one point is both the smallest and largest sum,
/// the remaining three points are used for the y-x choice, as numpy does.
Quad order_points_clockwise(const Quad& q);

/// A minimum-area rectangle as PaddleOCR's DBPostProcess.get_mini_boxes returns
/// it: corners of cv::minAreaRect, ordered top-left, top-right, bottom-right,
/// bottom-left by their x (stable sort) then y, plus the rectangle's shorter side.
struct MiniBox {
  Quad quad;
  float short_side = 0.0f;
};

/// get_mini_boxes over integer points (a contour, or an unclipped polygon).
/// \throws ValueError if `points` is empty.
MiniBox min_area_box(std::span<const cv::Point> points);
/// get_mini_boxes over floating-point points.
/// \throws ValueError if `points` is empty.
MiniBox min_area_box(std::span<const cv::Point2f> points);

/// Clamps every corner to [0, width-1] x [0, height-1] and truncates it toward
/// zero, as PaddleOCR's TextDetector.clip_det_res does.
/// \throws ValueError if width or height is not positive.
Quad clip_to_image(const Quad& q, int width, int height);

/// Euclidean length of b - a computed in float32 as numpy's linalg.norm on
/// float32 points does (PaddleOCR truncates it with int() for crop sizes).
float edge_length(cv::Point2f a, cv::Point2f b);

}  // namespace skiff::ocr
