#pragma once
/// \file box_order.h
/// Reading order of detected text boxes, as PaddleOCR's sorted_boxes
/// (tools/infer/predict_system.py).

#include <vector>

#include "suites/ocr/geometry.h"

namespace skiff::ocr {

/// Sorts boxes top-to-bottom, left-to-right by their first corner (top-left):
///  1. stable sort by (y, x) of quad.pts[0];
///  2. walking that list, each box moves left past its predecessors while the
///     predecessor's top-left y differs by less than 10 px (same line) and its x
///     is larger, so boxes on one line whose tops jitter by a few pixels end up
///     left to right.
/// Equal boxes keep their input order. NaN coordinates sort after all others.
void sort_reading_order(std::vector<TextBox>& boxes);

/// Same-line tolerance of sort_reading_order, in pixels (PaddleOCR: 10).
inline constexpr float kSameLineTolerance = 10.0f;

}  // namespace skiff::ocr
