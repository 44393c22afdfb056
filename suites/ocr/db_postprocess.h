#pragma once
/// \file db_postprocess.h
/// Probability map of a DB text detector → text quads in source-image pixels,
/// reproducing PaddleOCR's DBPostProcess (box_type "quad",
/// ppocr/postprocess/db_postprocess.py) followed by TextDetector.filter_tag_det_res
/// (tools/infer/predict_det.py), i.e. the dt_boxes PaddleOCR's detector returns.
///
/// Steps, on a map of map_h x map_w (the network input size):
///  1. bitmap = prob > thresh (float32 comparison), optionally dilated by a 2x2
///     kernel (use_dilation);
///  2. contours = cv::findContours(bitmap, RETR_LIST, CHAIN_APPROX_SIMPLE), the
///     first max_candidates of them, each in OpenCV's order:
///  3. box = min_area_box(contour); drop if its short side < min_size;
///  4. score = mean of prob over the box polygon (Fast: box_score_fast) or over
///     the contour polygon (Slow: box_score_slow), both within the shape's clipped
///     bounding rectangle; drop if score < box_thresh;
///  5. unclip: offset the box polygon outwards with Clipper (jtRound, closed
///     polygon, default miter limit 2 and arc tolerance 0.25) by
///     distance = area * unclip_ratio / perimeter; box = min_area_box of the
///     result; drop if its short side < min_size + 2;
///  6. scale every corner to the source size, x' = round(x / map_w * src_w)
///     (ties to even), clamped to [0, src_w] (same for y);
///  7. filter_tag_det_res: order_points_clockwise, clip_to_image (clamp to
///     [0, src_w-1] x [0, src_h-1], truncate), drop boxes whose first edge
///     (tl→tr) or left edge (tl→bl) is 3 px or shorter.
///
/// Thresholds given as float are compared the way PaddleOCR compares its Python
/// floats: box_thresh and unclip_ratio are taken as the decimal they print as
/// (0.6f → 0.6), so a config value of 0.6 behaves as in Python.

#include <span>
#include <vector>

#include <opencv2/core.hpp>

#include "suites/ocr/geometry.h"

namespace skiff::ocr {

/// DB post-processing settings; defaults are PP-OCRv4 inference defaults
/// (det_db_thresh, det_db_box_thresh, det_db_unclip_ratio, ...).
struct DbParams {
  float thresh = 0.3f;         ///< pixel threshold of the binary map
  float box_thresh = 0.6f;     ///< minimum mean probability of a kept box
  float unclip_ratio = 1.5f;   ///< expansion: distance = area * ratio / perimeter
  int max_candidates = 1000;   ///< contours looked at, in findContours order
  int min_size = 3;            ///< minimum short side before unclip (min_size + 2 after)
  bool use_dilation = false;   ///< dilate the bitmap with a 2x2 kernel
  enum ScoreMode { Fast, Slow } score_mode = Fast;
};

/// Runs DB post-processing over one probability map `prob` [map_h, map_w]
/// (row-major float32, the detector's output channel 0) and returns the boxes in
/// the coordinates of the src_h x src_w source image, corners integer-valued and
/// ordered clockwise from the top-left, in findContours order (use
/// sort_reading_order for reading order). score is the box's mean probability.
/// \throws ValueError if a size is not positive, prob is null, or a parameter is
///   out of range (thresholds outside [0, 1], unclip_ratio <= 0, negative counts).
std::vector<TextBox> db_postprocess(const float* prob, int map_h, int map_w, int src_h, int src_w,
                                    const DbParams& params = {});

/// box_score_fast: mean of prob over the polygon `quad` (corners truncated to
/// int after shifting by the floor of the minimum x/y), restricted to its bounding
/// rectangle clamped to the map. `prob` is a CV_32FC1 map.
double box_score_fast(const cv::Mat& prob, const Quad& quad);

/// box_score_slow: mean of prob over the polygon `contour`, within its bounding
/// rectangle clamped to the map. `prob` is a CV_32FC1 map.
double box_score_slow(const cv::Mat& prob, std::span<const cv::Point> contour);

/// Offset distance DB uses for unclipping a polygon: area * unclip_ratio / perimeter
/// (shoelace area and closed perimeter, in double). Returns 0 for a zero perimeter.
double unclip_distance(std::span<const cv::Point2f> polygon, double unclip_ratio);

/// Expands `polygon` outwards by unclip_distance with ClipperLib::ClipperOffset
/// (jtRound, etClosedPolygon). Coordinates enter Clipper truncated toward zero,
/// as pyclipper converts floats. Returns the points of every output path.
std::vector<cv::Point> unclip(std::span<const cv::Point2f> polygon, double unclip_ratio);

}  // namespace skiff::ocr
