#pragma once
/// \file boxes.h
/// Detected boxes and the post-processing every dense detector shares:
/// generalized-focal-loss (GFL / NanoDet / PicoDet) decoding and class-aware
/// non-maximum suppression.

#include <cstdint>
#include <span>
#include <vector>

namespace skiff::detection {

/// An axis-aligned box [x0, y0, x1, y1] in pixels (x1 > x0 for a non-empty box).
struct Box {
  float x0 = 0, y0 = 0, x1 = 0, y1 = 0;
  float area() const { return (x1 > x0 && y1 > y0) ? (x1 - x0) * (y1 - y0) : 0.f; }
};

/// Intersection over union (0 when both are empty).
float iou(const Box& a, const Box& b);

struct DetectedBox {
  int class_id = 0;
  float score = 0;
  Box box;
};

/// One feature level of a GFL head: `scores` [cells, classes] are class
/// probabilities (already through the sigmoid), `box_logits` [cells, 4 * (reg_max + 1)]
/// the distribution logits of the distances left, top, right, bottom in units of
/// the stride. Cells are in row-major order over a grid of `grid_width` columns;
/// cell (row, col) is centred at ((col + 0.5) * stride, (row + 0.5) * stride).
struct GflLevel {
  std::span<const float> scores;
  std::span<const float> box_logits;
  int64_t grid_width = 0;
  int stride = 8;
};

struct GflDecodeOptions {
  int num_classes = 80;
  int reg_max = 10;              ///< bins 0..reg_max per side
  float score_threshold = 0.05f;
  int max_cells_per_level = 1000;  ///< keep the cells with the best class score (NanoDet's nms_pre)
  float clip_width = 0, clip_height = 0;  ///< clamp boxes to [0, w] x [0, h] when > 0
};

/// Decodes every (cell, class) pair scoring at least the threshold into a box:
/// distance = stride * sum_i softmax(logits)_i * i over the bins of each side.
/// \throws ValueError when the spans do not hold whole cells.
std::vector<DetectedBox> decode_gfl(const std::vector<GflLevel>& levels, const GflDecodeOptions& options);

/// Class-aware NMS: boxes sorted by score (ties keep their input order); a box is
/// dropped when it overlaps a kept box of its class with IoU above
/// `iou_threshold`; at most `max_detections` are kept (<= 0: no limit).
std::vector<DetectedBox> class_aware_nms(std::vector<DetectedBox> boxes, float iou_threshold, int max_detections);

}  // namespace skiff::detection
