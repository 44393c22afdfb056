#pragma once
/// \file det_metric.h
/// Detection precision / recall / H-mean at IoU 0.5, as PaddleOCR's DetMetric
/// (DetectionIoUEvaluator) counts them over a whole evaluation set:
///   - a ground-truth region labelled "###" is "don't care"; a detection that
///     lies more than half (of its own area) inside one is not counted;
///   - ground truths and detections are matched one to one, in order, when
///     their polygon IoU exceeds iou_threshold;
///   - recall = matched / counted ground truths, precision = matched / counted
///     detections (0 when nothing is counted), hmean = 2 P R / (P + R).
/// Polygon areas and intersections are exact (Clipper on a 1/16-pixel grid), so
/// non-convex labels work too.
#include <cstdint>
#include <span>
#include <vector>

#include <opencv2/core.hpp>

#include "suites/ocr/train/det_data.h"

namespace skiff::ocr {

struct DetMetricResult {
  double precision = 0, recall = 0, hmean = 0;
  int64_t ground_truths = 0, detections = 0, matched = 0;  ///< counted (don't-care excluded)
};

/// Area of the intersection of two polygons, and the area of one polygon.
double polygon_intersection_area(std::span<const cv::Point2f> a, std::span<const cv::Point2f> b);
double polygon_area_of(std::span<const cv::Point2f> p);

class DetMetric {
 public:
  explicit DetMetric(double iou_threshold = 0.5, double dont_care_overlap = 0.5)
      : iou_(iou_threshold), dont_care_(dont_care_overlap) {}
  /// Adds one image: its labelled regions and the detected polygons.
  void add(const std::vector<DetPolygon>& ground_truth, const std::vector<std::vector<cv::Point2f>>& detections);
  DetMetricResult result() const;

 private:
  double iou_, dont_care_;
  int64_t gt_ = 0, det_ = 0, matched_ = 0;
};

}  // namespace skiff::ocr
