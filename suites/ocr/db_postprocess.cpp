// DB post-processing after PaddleOCR's DBPostProcess.boxes_from_bitmap and
// TextDetector.filter_tag_det_res. Where numpy's dtype rules decide a rounding
// (scaling to the source size), this follows numpy 1.x, which PP-OCRv4 runs on:
// the float32 box corners are divided and multiplied in float32.
#include "suites/ocr/db_postprocess.h"

#include <opencv2/imgproc.hpp>
#include <polyclipping/clipper.hpp>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <system_error>

#include "framework/core/error.h"

namespace skiff::ocr {

namespace {

// The double a float prints as (shortest round-trip decimal): 0.6f -> 0.6.
// PaddleOCR's thresholds are Python floats, i.e. doubles of the config's decimal.
double as_decimal(float v) {
  char buf[64];
  const auto res = std::to_chars(buf, buf + sizeof(buf), v);
  double d = v;
  if (res.ec == std::errc{}) std::from_chars(buf, res.ptr, d);
  return d;
}

// Scales one coordinate from the map to the source image like
// np.clip(np.round(v / map_size * src_size), 0, src_size) on float32.
float scale_coord(float v, int map_size, int src_size) {
  const float scaled = (v / float(map_size)) * float(src_size);
  return std::clamp(std::nearbyint(scaled), 0.0f, float(src_size));
}

}  // namespace

double box_score_fast(const cv::Mat& prob, const Quad& quad) {
  SKIFF_CHECK(prob.type() == CV_32FC1 && !prob.empty(),
              "ocr::box_score_fast: expected a non-empty CV_32FC1 map, got type {} of {}x{}", prob.type(),
              prob.cols, prob.rows);
  const int h = prob.rows, w = prob.cols;
  float min_x = quad.pts[0].x, max_x = min_x, min_y = quad.pts[0].y, max_y = min_y;
  for (const auto& p : quad.pts) {
    min_x = std::min(min_x, p.x);
    max_x = std::max(max_x, p.x);
    min_y = std::min(min_y, p.y);
    max_y = std::max(max_y, p.y);
  }
  const int xmin = std::clamp(int(std::floor(min_x)), 0, w - 1);
  const int xmax = std::clamp(int(std::ceil(max_x)), 0, w - 1);
  const int ymin = std::clamp(int(std::floor(min_y)), 0, h - 1);
  const int ymax = std::clamp(int(std::ceil(max_y)), 0, h - 1);
  cv::Mat mask = cv::Mat::zeros(ymax - ymin + 1, xmax - xmin + 1, CV_8UC1);
  std::vector<cv::Point> poly(4);
  for (int i = 0; i < 4; ++i)  // astype(np.int32): truncation toward zero
    poly[i] = cv::Point(int(quad.pts[i].x - float(xmin)), int(quad.pts[i].y - float(ymin)));
  cv::fillPoly(mask, std::vector<std::vector<cv::Point>>{poly}, cv::Scalar(1));
  return cv::mean(prob(cv::Rect(xmin, ymin, xmax - xmin + 1, ymax - ymin + 1)), mask)[0];
}

double box_score_slow(const cv::Mat& prob, std::span<const cv::Point> contour) {
  SKIFF_CHECK(prob.type() == CV_32FC1 && !prob.empty(),
              "ocr::box_score_slow: expected a non-empty CV_32FC1 map, got type {} of {}x{}", prob.type(),
              prob.cols, prob.rows);
  SKIFF_CHECK(!contour.empty(), "ocr::box_score_slow: expected a non-empty contour, got none");
  const int h = prob.rows, w = prob.cols;
  int min_x = contour[0].x, max_x = min_x, min_y = contour[0].y, max_y = min_y;
  for (const auto& p : contour) {
    min_x = std::min(min_x, p.x);
    max_x = std::max(max_x, p.x);
    min_y = std::min(min_y, p.y);
    max_y = std::max(max_y, p.y);
  }
  const int xmin = std::clamp(min_x, 0, w - 1), xmax = std::clamp(max_x, 0, w - 1);
  const int ymin = std::clamp(min_y, 0, h - 1), ymax = std::clamp(max_y, 0, h - 1);
  cv::Mat mask = cv::Mat::zeros(ymax - ymin + 1, xmax - xmin + 1, CV_8UC1);
  std::vector<cv::Point> poly(contour.begin(), contour.end());
  for (auto& p : poly) p -= cv::Point(xmin, ymin);
  cv::fillPoly(mask, std::vector<std::vector<cv::Point>>{poly}, cv::Scalar(1));
  return cv::mean(prob(cv::Rect(xmin, ymin, xmax - xmin + 1, ymax - ymin + 1)), mask)[0];
}

double unclip_distance(std::span<const cv::Point2f> polygon, double unclip_ratio) {
  double area2 = 0.0, perimeter = 0.0;
  const std::size_t n = polygon.size();
  for (std::size_t i = 0; i < n; ++i) {
    const cv::Point2d a = polygon[i], b = polygon[(i + 1) % n];
    area2 += a.x * b.y - b.x * a.y;
    perimeter += std::hypot(b.x - a.x, b.y - a.y);
  }
  if (perimeter == 0.0) return 0.0;
  return std::abs(area2) * 0.5 * unclip_ratio / perimeter;
}

std::vector<cv::Point> unclip(std::span<const cv::Point2f> polygon, double unclip_ratio) {
  const double distance = unclip_distance(polygon, unclip_ratio);
  ClipperLib::Path path;
  for (const auto& p : polygon)
    path.emplace_back(ClipperLib::cInt(std::trunc(double(p.x))), ClipperLib::cInt(std::trunc(double(p.y))));
  ClipperLib::ClipperOffset offset;
  offset.AddPath(path, ClipperLib::jtRound, ClipperLib::etClosedPolygon);
  ClipperLib::Paths solution;
  offset.Execute(solution, distance);
  std::vector<cv::Point> out;
  for (const auto& sp : solution)
    for (const auto& p : sp) out.emplace_back(int(p.X), int(p.Y));
  return out;
}

std::vector<TextBox> db_postprocess(const float* prob, int map_h, int map_w, int src_h, int src_w,
                                    const DbParams& params) {
  SKIFF_CHECK(prob != nullptr, "ocr::db_postprocess: expected a probability map, got a null pointer");
  SKIFF_CHECK(map_h > 0 && map_w > 0 && src_h > 0 && src_w > 0,
              "ocr::db_postprocess: expected positive sizes, got map {}x{} and source {}x{} (h x w)", map_h, map_w,
              src_h, src_w);
  SKIFF_CHECK(params.thresh >= 0.0f && params.thresh <= 1.0f,
              "ocr::db_postprocess: expected thresh in [0, 1], got {}", params.thresh);
  SKIFF_CHECK(params.box_thresh >= 0.0f && params.box_thresh <= 1.0f,
              "ocr::db_postprocess: expected box_thresh in [0, 1], got {}", params.box_thresh);
  SKIFF_CHECK(params.unclip_ratio > 0.0f, "ocr::db_postprocess: expected unclip_ratio > 0, got {}",
              params.unclip_ratio);
  SKIFF_CHECK(params.max_candidates >= 0 && params.min_size >= 0,
              "ocr::db_postprocess: expected max_candidates >= 0 and min_size >= 0, got {} and {}",
              params.max_candidates, params.min_size);

  const cv::Mat pred(map_h, map_w, CV_32FC1, const_cast<float*>(prob));
  cv::Mat bitmap(map_h, map_w, CV_8UC1);
  for (int y = 0; y < map_h; ++y) {
    const float* p = pred.ptr<float>(y);
    uint8_t* b = bitmap.ptr<uint8_t>(y);
    for (int x = 0; x < map_w; ++x) b[x] = p[x] > params.thresh ? 255 : 0;
  }
  if (params.use_dilation) cv::dilate(bitmap, bitmap, cv::Mat::ones(2, 2, CV_8UC1));

  std::vector<std::vector<cv::Point>> contours;
  cv::findContours(bitmap, contours, cv::RETR_LIST, cv::CHAIN_APPROX_SIMPLE);
  const std::size_t n = std::min(contours.size(), std::size_t(params.max_candidates));
  const double box_thresh = as_decimal(params.box_thresh);
  const double unclip_ratio = as_decimal(params.unclip_ratio);

  std::vector<TextBox> boxes;
  for (std::size_t i = 0; i < n; ++i) {
    const auto& contour = contours[i];
    const MiniBox mini = min_area_box(contour);
    if (mini.short_side < float(params.min_size)) continue;
    const double score = params.score_mode == DbParams::Fast ? box_score_fast(pred, mini.quad)
                                                               : box_score_slow(pred, contour);
    if (box_thresh > score) continue;

    const std::vector<cv::Point> expanded = unclip(mini.quad.pts, unclip_ratio);
    if (expanded.empty()) continue;
    const MiniBox grown = min_area_box(expanded);
    if (grown.short_side < float(params.min_size + 2)) continue;

    Quad scaled;
    for (int k = 0; k < 4; ++k) {
      scaled.pts[k].x = scale_coord(grown.quad.pts[k].x, map_w, src_w);
      scaled.pts[k].y = scale_coord(grown.quad.pts[k].y, map_h, src_h);
    }
    // TextDetector.filter_tag_det_res.
    const Quad q = clip_to_image(order_points_clockwise(scaled), src_w, src_h);
    const int rect_w = int(edge_length(q.pts[0], q.pts[1]));
    const int rect_h = int(edge_length(q.pts[0], q.pts[3]));
    if (rect_w <= 3 || rect_h <= 3) continue;
    boxes.push_back(TextBox{q, float(score)});
  }
  return boxes;
}

}  // namespace skiff::ocr
