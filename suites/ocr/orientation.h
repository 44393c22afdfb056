#pragma once
/// \file orientation.h
/// Text-line orientation from the PP-OCR direction classifier, as PaddleOCR's
/// ClsPostProcess plus TextClassifier's rotation rule (tools/infer/predict_cls.py).

#include <opencv2/core.hpp>

namespace skiff::ocr {

/// Decoded classifier output: angle 0 or 180 (label list {"0", "180"}) and the
/// probability of that label.
struct Orientation {
  int angle = 0;
  float score = 0.0f;
};

/// PaddleOCR's default cls_thresh.
inline constexpr float kClsThresh = 0.9f;

/// Decodes one row of the classifier's softmax [2]: the argmax (first on ties)
/// and its probability.
/// \throws ValueError if probs is null.
Orientation decode_orientation(const float* probs);

/// True when PaddleOCR would turn the crop: angle 180 and score > cls_thresh.
bool needs_rotation(const Orientation& o, float cls_thresh = kClsThresh);

/// The image turned by 180 degrees (cv::rotate ROTATE_180, as cv2.rotate(img, 1)).
cv::Mat rotate_180(const cv::Mat& image);

}  // namespace skiff::ocr
