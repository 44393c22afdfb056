#pragma once
/// \file draw.h
/// Draws detections on a copy of an image: a box per object in its class's
/// colour and a filled label "name 0.87" above it.

#include <functional>
#include <opencv2/core/mat.hpp>
#include <string>
#include <vector>

#include "suites/detection/boxes.h"

namespace skiff::detection {

/// The drawing colour (BGR) of a class: fixed per class id, distinct for neighbours.
cv::Scalar class_color(int class_id);

/// A copy of `bgr` with the boxes drawn; `label` names a class id.
cv::Mat draw_detections(const cv::Mat& bgr, const std::vector<DetectedBox>& boxes,
                        const std::function<std::string(int)>& label);

}  // namespace skiff::detection
