#pragma once
/// \file detector.h
/// Object detection on one image with a dense GFL-head detector (NanoDet from
/// the zoo, or any model with the same outputs): resize to the model's input,
/// normalise, run the Predictor, decode, class-aware NMS, boxes back in the
/// image's pixels. Thread-safe: detect() may run from many threads at once.

#include <array>
#include <memory>
#include <opencv2/core/mat.hpp>
#include <string>
#include <vector>

#include "suites/detection/boxes.h"

namespace skiff::engine {
class Predictor;
}

namespace skiff::detection {

struct DetectorConfig {
  /// Zoo name, .onnx file or TF.js model.json.
  std::string model = "nanodet-coco";
  /// The model's channel order: RGB (PaddleDetection's exports) or BGR (NanoDet).
  bool rgb = false;
  /// Per-channel mean and std subtracted / divided in the model's channel order, on
  /// 0..255 pixels (NanoDet's BGR statistics by default).
  std::array<float, 3> mean{103.53f, 116.28f, 123.675f};
  std::array<float, 3> std{57.375f, 57.12f, 58.395f};
  /// Keep the aspect ratio: scale to fit on black (NanoDet's keep_ratio), else stretch.
  bool keep_ratio = true;
  /// With keep_ratio: centre the image (NanoDet) or put it at the top left (PaddleDetection).
  bool centre = true;
  /// OpenCV's interpolation for the resize (0 nearest, 1 linear, 2 cubic, 3 area, 4 lanczos4).
  int interpolation = 1;
  float score_threshold = 0.35f;
  float nms_iou = 0.6f;
  int max_detections = 100;
  int reg_max = 10;  ///< DFL bins per side minus one (NanoDet: 10, PicoDet: 7)
  /// Class names; the model's class count must match (default: the 80 COCO classes).
  std::vector<std::string> labels;
};

struct DetectionResult {
  std::vector<DetectedBox> boxes;  ///< in the image's pixels, best first
  int width = 0, height = 0;       ///< of the image
  double preprocess_ms = 0, inference_ms = 0, postprocess_ms = 0;
};

class Detector {
 public:
  /// Loads the model (pulling a zoo model on first use) and finds its heads.
  /// \throws ValueError when the outputs are not per-level [1, cells, classes] scores and
  ///         [1, cells, 4 * (reg_max + 1)] box logits.
  explicit Detector(DetectorConfig config);
  ~Detector();

  /// Detects objects in an 8-bit BGR image. \throws ValueError for an empty image.
  DetectionResult detect(const cv::Mat& bgr) const;

  const DetectorConfig& config() const { return config_; }
  const std::string& label(int class_id) const { return config_.labels.at(size_t(class_id)); }
  int input_width() const { return input_w_; }
  int input_height() const { return input_h_; }

 private:
  struct Head {
    std::string scores, boxes;
    int64_t grid_width = 0;
    int stride = 0;
  };
  DetectorConfig config_;
  std::unique_ptr<engine::Predictor> predictor_;
  std::string input_name_;
  int input_w_ = 0, input_h_ = 0;
  std::vector<Head> heads_;
};

}  // namespace skiff::detection
