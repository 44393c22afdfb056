#include "suites/ocr/train/det_metric.h"

#include <cmath>

#include <polyclipping/clipper.hpp>

namespace skiff::ocr {

namespace {

constexpr double kScale = 16.0;  // Clipper's integer grid: 1/16 pixel

ClipperLib::Path to_path(std::span<const cv::Point2f> p) {
  ClipperLib::Path path;
  for (const auto& q : p) path.emplace_back(ClipperLib::cInt(std::llround(q.x * kScale)), ClipperLib::cInt(std::llround(q.y * kScale)));
  return path;
}

double area_of(const ClipperLib::Paths& paths) {
  double a = 0;
  for (const auto& p : paths) a += ClipperLib::Area(p);
  return std::abs(a) / (kScale * kScale);
}

}  // namespace

double polygon_area_of(std::span<const cv::Point2f> p) {
  // A self-intersecting outline counts by the non-zero rule, like its filled pixels.
  ClipperLib::Paths simple;
  ClipperLib::SimplifyPolygon(to_path(p), simple, ClipperLib::pftNonZero);
  return area_of(simple);
}

double polygon_intersection_area(std::span<const cv::Point2f> a, std::span<const cv::Point2f> b) {
  ClipperLib::Clipper c;
  c.AddPath(to_path(a), ClipperLib::ptSubject, true);
  c.AddPath(to_path(b), ClipperLib::ptClip, true);
  ClipperLib::Paths out;
  c.Execute(ClipperLib::ctIntersection, out, ClipperLib::pftNonZero, ClipperLib::pftNonZero);
  return area_of(out);
}

void DetMetric::add(const std::vector<DetPolygon>& gts, const std::vector<std::vector<cv::Point2f>>& dets) {
  std::vector<char> det_dont_care(dets.size(), 0);
  std::vector<double> det_area(dets.size());
  for (size_t d = 0; d < dets.size(); ++d) {
    det_area[d] = polygon_area_of(dets[d]);
    for (const auto& g : gts) {
      if (!g.ignore || det_area[d] <= 0) continue;
      if (polygon_intersection_area(g.points, dets[d]) / det_area[d] > dont_care_) det_dont_care[d] = 1;
    }
  }
  std::vector<char> gt_used(gts.size(), 0), det_used(dets.size(), 0);
  for (size_t g = 0; g < gts.size(); ++g) {
    if (gts[g].ignore) continue;
    double gt_area = polygon_area_of(gts[g].points);
    for (size_t d = 0; d < dets.size(); ++d) {
      if (gt_used[g] || det_used[d] || det_dont_care[d]) continue;
      double inter = polygon_intersection_area(gts[g].points, dets[d]);
      double uni = gt_area + det_area[d] - inter;
      if (uni > 0 && inter / uni > iou_) gt_used[g] = det_used[d] = 1, ++matched_;
    }
  }
  for (const auto& g : gts) gt_ += g.ignore ? 0 : 1;
  for (char c : det_dont_care) det_ += c ? 0 : 1;
}

DetMetricResult DetMetric::result() const {
  DetMetricResult r{.ground_truths = gt_, .detections = det_, .matched = matched_};
  r.recall = gt_ == 0 ? 0 : double(matched_) / double(gt_);
  r.precision = det_ == 0 ? 0 : double(matched_) / double(det_);
  r.hmean = r.precision + r.recall == 0 ? 0 : 2 * r.precision * r.recall / (r.precision + r.recall);
  return r;
}

}  // namespace skiff::ocr
