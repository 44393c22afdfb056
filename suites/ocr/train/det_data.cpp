#include "suites/ocr/train/det_data.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>

#include <nlohmann/json.hpp>
#include <opencv2/imgproc.hpp>
#include <polyclipping/clipper.hpp>

#include "framework/core/error.h"
#include "suites/ocr/pipeline.h"
#include "suites/ocr/train/label_file.h"

namespace skiff::ocr {

namespace fs = std::filesystem;

// Label coordinates are pixels: anything past a million is a corrupt file, and would
// overflow the integer geometry (Clipper, OpenCV's rounding) further on.
constexpr double kMaxLabelCoordinate = 1e6;

std::vector<DetPolygon> parse_det_label(const std::string& label, const std::string& where) {
  nlohmann::json regions = nlohmann::json::parse(label, nullptr, false);
  if (regions.is_discarded() || !regions.is_array())
    throw ValueError(fmt::format("{}: the label after the tab is not a JSON list", where));
  std::vector<DetPolygon> out;
  for (size_t i = 0; i < regions.size(); ++i) {
    const auto& r = regions[i];
    auto bad = [&](const char* what) { return ValueError(fmt::format("{}: region {}: {}", where, i, what)); };
    if (!r.is_object() || !r.contains("points") || !r["points"].is_array())
      throw bad("expected {\"transcription\": ..., \"points\": [[x, y], ...]}");
    DetPolygon poly;
    if (r.contains("transcription") && r["transcription"].is_string()) poly.text = r["transcription"];
    poly.ignore = poly.text == "###";
    for (const auto& p : r["points"]) {
      if (!p.is_array() || p.size() != 2 || !p[0].is_number() || !p[1].is_number()) throw bad("a point is not [x, y]");
      const double x = p[0].get<double>(), y = p[1].get<double>();
      if (!(std::abs(x) <= kMaxLabelCoordinate && std::abs(y) <= kMaxLabelCoordinate))
        throw bad("a point lies outside +-1000000 pixels (kMaxLabelCoordinate)");
      poly.points.emplace_back(float(x), float(y));
    }
    if (poly.points.size() < 3) throw bad("a region needs at least 3 points");
    out.push_back(std::move(poly));
  }
  return out;
}

std::vector<DetSample> read_det_labels(const std::vector<std::string>& label_files, const std::string& data_dir) {
  std::vector<DetSample> out;
  read_label_lines(label_files, data_dir, "image_path<TAB>[{\"transcription\": ..., \"points\": [[x, y], ...]}]",
                   [&](const LabelLine& l) {
                     out.push_back({l.image, parse_det_label(l.label, fmt::format("{}:{}", l.file, l.line))});
                   });
  return out;
}

// ---- targets ---------------------------------------------------------------------------------

namespace {

double polygon_area(const std::vector<cv::Point2f>& p) { return std::abs(cv::contourArea(p)); }

double polygon_perimeter(const std::vector<cv::Point2f>& p) { return cv::arcLength(p, true); }

// Clipper works in integers: coordinates are scaled so offsets keep sub-pixel precision.
constexpr double kClipperScale = 16.0;

std::vector<cv::Point> rounded(const std::vector<cv::Point2f>& p) {
  std::vector<cv::Point> out;
  for (const auto& q : p) out.emplace_back(int(std::lround(q.x)), int(std::lround(q.y)));
  return out;
}

double segment_distance(cv::Point2f p, cv::Point2f a, cv::Point2f b) {
  cv::Point2f ab = b - a, ap = p - a;
  double len2 = ab.dot(ab);
  double t = len2 > 0 ? std::clamp(double(ap.dot(ab)) / len2, 0.0, 1.0) : 0.0;
  cv::Point2f closest = a + float(t) * ab;
  return std::hypot(double(p.x - closest.x), double(p.y - closest.y));
}

// Raises `canvas` to 1 - distance / offset over the grown polygon's bounding box.
void draw_border(cv::Mat& canvas, const std::vector<cv::Point2f>& poly, const std::vector<cv::Point>& grown,
                 double offset) {
  cv::Rect box = cv::boundingRect(grown) & cv::Rect(0, 0, canvas.cols, canvas.rows);
  for (int y = box.y; y < box.y + box.height; ++y) {
    auto* row = canvas.ptr<float>(y);
    for (int x = box.x; x < box.x + box.width; ++x) {
      double d = 1e30;
      for (size_t i = 0; i < poly.size(); ++i)
        d = std::min(d, segment_distance({float(x), float(y)}, poly[i], poly[(i + 1) % poly.size()]));
      float v = float(1.0 - std::clamp(d / offset, 0.0, 1.0));
      row[x] = std::max(row[x], v);
    }
  }
}

}  // namespace

double db_offset(const std::vector<cv::Point2f>& polygon, double shrink_ratio) {
  double perimeter = polygon_perimeter(polygon);
  if (perimeter <= 0) return 0;
  return polygon_area(polygon) * (1 - shrink_ratio * shrink_ratio) / perimeter;
}

std::vector<std::vector<cv::Point>> offset_polygon(const std::vector<cv::Point2f>& polygon, double distance) {
  ClipperLib::Path path;
  for (const auto& p : polygon)
    path.emplace_back(ClipperLib::cInt(std::llround(p.x * kClipperScale)), ClipperLib::cInt(std::llround(p.y * kClipperScale)));
  ClipperLib::ClipperOffset offset;
  offset.AddPath(path, ClipperLib::jtRound, ClipperLib::etClosedPolygon);
  ClipperLib::Paths result;
  offset.Execute(result, distance * kClipperScale);
  std::vector<std::vector<cv::Point>> out;
  for (const auto& r : result) {
    std::vector<cv::Point> pts;
    for (const auto& p : r) pts.emplace_back(int(std::lround(double(p.X) / kClipperScale)), int(std::lround(double(p.Y) / kClipperScale)));
    if (pts.size() >= 3) out.push_back(std::move(pts));
  }
  return out;
}

DetTargets make_det_targets(const std::vector<DetPolygon>& polygons, int rows, int cols, const DetTargetOptions& o) {
  SKIFF_CHECK(rows > 0 && cols > 0, "det targets need a positive size, got {}x{}", rows, cols);
  SKIFF_CHECK(o.shrink_ratio > 0 && o.shrink_ratio < 1, "shrink_ratio must be in (0, 1), got {}", o.shrink_ratio);
  DetTargets t{cv::Mat::zeros(rows, cols, CV_32F), cv::Mat::ones(rows, cols, CV_32F), cv::Mat::zeros(rows, cols, CV_32F),
               cv::Mat::zeros(rows, cols, CV_32F)};
  for (const auto& poly : polygons) {
    float x0 = 1e30f, y0 = 1e30f, x1 = -1e30f, y1 = -1e30f;
    for (const auto& q : poly.points) x0 = std::min(x0, q.x), y0 = std::min(y0, q.y), x1 = std::max(x1, q.x), y1 = std::max(y1, q.y);
    std::vector<std::vector<cv::Point>> whole{rounded(poly.points)};
    if (poly.ignore || std::min(x1 - x0, y1 - y0) < o.min_text_size) {
      cv::fillPoly(t.shrink_mask, whole, 0.0);
      continue;
    }
    double offset = db_offset(poly.points, o.shrink_ratio);
    auto shrunk = offset_polygon(poly.points, -offset);
    if (offset <= 0 || shrunk.empty()) {
      cv::fillPoly(t.shrink_mask, whole, 0.0);
      continue;
    }
    if (o.shrink) cv::fillPoly(t.shrink_map, shrunk, 1.0);
    if (!o.border) continue;
    auto grown = offset_polygon(poly.points, offset);
    if (grown.empty()) continue;
    cv::fillPoly(t.threshold_mask, grown, 1.0);
    draw_border(t.threshold_map, poly.points, grown[0], offset);
  }
  if (o.border) t.threshold_map = t.threshold_map * (o.thresh_max - o.thresh_min) + o.thresh_min;
  return t;
}

}  // namespace skiff::ocr
