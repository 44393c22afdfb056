#include "suites/detection/detector.h"

#include <fmt/format.h>

#include <chrono>
#include <algorithm>
#include <cmath>
#include <map>
#include <opencv2/imgproc.hpp>

#include "framework/core/error.h"
#include "framework/engine/predictor.h"
#include "framework/ops/ops.h"
#include "framework/zoo/zoo.h"
#include "suites/detection/coco_classes.h"

namespace skiff::detection {
namespace {

double ms_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

int64_t known_dim(const graph::ValueInfo& v, size_t i) {
  return v.has_shape && i < v.shape.size() && v.shape[i].known() ? v.shape[i].value : -1;
}

}  // namespace

Detector::Detector(DetectorConfig config) : config_(std::move(config)) {
  if (config_.labels.empty()) config_.labels = coco80_names();
  const std::string path = zoo::resolve_model_path(config_.model).string();
  predictor_ = std::make_unique<engine::Predictor>(path);
  SKIFF_CHECK(predictor_->inputs().size() == 1, "{}: a detector takes one image input, this model has {}", path,
              predictor_->inputs().size());
  const auto& in = predictor_->inputs()[0];
  input_name_ = in.name;
  input_h_ = int(known_dim(in, 2));
  input_w_ = int(known_dim(in, 3));
  SKIFF_CHECK(in.has_shape && in.shape.size() == 4 && known_dim(in, 1) == 3 && input_h_ > 0 && input_w_ > 0,
              "{}: input '{}' must be a fixed [1, 3, H, W] image", path, in.name);

  // Pair each scores output [1, cells, classes] with the box output of the same cell count.
  const int64_t classes = int64_t(config_.labels.size()), box_width = 4 * (config_.reg_max + 1);
  std::map<int64_t, Head> by_cells;
  for (const auto& out : predictor_->outputs()) {
    const int64_t cells = known_dim(out, 1), width = known_dim(out, 2);
    SKIFF_CHECK(out.has_shape && out.shape.size() == 3 && cells > 0 && (width == classes || width == box_width),
                "{}: output '{}' is not [1, cells, {}] class scores or [1, cells, {}] box logits "
                "(--labels / reg_max for another model)", path, out.name, classes, box_width);
    (width == classes ? by_cells[cells].scores : by_cells[cells].boxes) = out.name;
  }
  for (auto& [cells, head] : by_cells) {
    SKIFF_CHECK(!head.scores.empty() && !head.boxes.empty(), "{}: the level with {} cells lacks its {} output", path,
                cells, head.scores.empty() ? "scores" : "box");
    const int stride = int(std::lround(std::sqrt(double(input_w_) * input_h_ / double(cells))));
    SKIFF_CHECK(stride > 0 && (input_w_ / stride) * (input_h_ / stride) == cells,
                "{}: {} cells do not tile a {}x{} input", path, cells, input_w_, input_h_);
    head.stride = stride;
    head.grid_width = input_w_ / stride;
    heads_.push_back(head);
  }
  std::sort(heads_.begin(), heads_.end(), [](const Head& a, const Head& b) { return a.stride < b.stride; });
}

Detector::~Detector() = default;

DetectionResult Detector::detect(const cv::Mat& bgr) const {
  SKIFF_CHECK(!bgr.empty() && bgr.type() == CV_8UC3, "detect: expected a non-empty 8-bit BGR image");
  DetectionResult r;
  r.width = bgr.cols;
  r.height = bgr.rows;
  auto t0 = std::chrono::steady_clock::now();
  // Model pixel = image pixel * scale + offset.
  float scale_x = float(input_w_) / float(bgr.cols), scale_y = float(input_h_) / float(bgr.rows);
  float off_x = 0, off_y = 0;
  cv::Mat resized;
  if (config_.keep_ratio) {
    scale_x = scale_y = std::min(scale_x, scale_y);
    const int w = std::max(1, int(std::lround(bgr.cols * scale_x))), h = std::max(1, int(std::lround(bgr.rows * scale_y)));
    if (config_.centre) off_x = float((input_w_ - w) / 2), off_y = float((input_h_ - h) / 2);
    resized = cv::Mat::zeros(input_h_, input_w_, CV_8UC3);
    cv::resize(bgr, resized(cv::Rect(int(off_x), int(off_y), w, h)), cv::Size(w, h), 0, 0, config_.interpolation);
  } else {
    cv::resize(bgr, resized, cv::Size(input_w_, input_h_), 0, 0, config_.interpolation);
  }
  Tensor x = empty({1, 3, input_h_, input_w_});
  float* dst = x.data<float>();
  const int64_t plane = int64_t(input_h_) * input_w_;
  for (int c = 0; c < 3; ++c) {
    const int source = config_.rgb ? 2 - c : c;  // the image is BGR
    const float mean = config_.mean[size_t(c)], std = config_.std[size_t(c)];
    for (int y = 0; y < input_h_; ++y) {
      const uint8_t* row = resized.ptr<uint8_t>(y);
      float* out = dst + c * plane + int64_t(y) * input_w_;
      for (int xx = 0; xx < input_w_; ++xx) out[xx] = (float(row[3 * xx + source]) - mean) / std;
    }
  }
  r.preprocess_ms = ms_since(t0);

  t0 = std::chrono::steady_clock::now();
  auto outs = predictor_->run({{input_name_, x}});
  r.inference_ms = ms_since(t0);

  t0 = std::chrono::steady_clock::now();
  std::vector<Tensor> keep;  // contiguous copies the spans point into
  std::vector<GflLevel> levels;
  for (const Head& h : heads_) {
    keep.push_back(contiguous(outs.at(h.scores)));
    keep.push_back(contiguous(outs.at(h.boxes)));
    const Tensor& s = keep[keep.size() - 2];
    const Tensor& b = keep.back();
    levels.push_back({{s.data<float>(), size_t(s.numel())}, {b.data<float>(), size_t(b.numel())}, h.grid_width, h.stride});
  }
  GflDecodeOptions o;
  o.num_classes = int(config_.labels.size());
  o.reg_max = config_.reg_max;
  o.score_threshold = config_.score_threshold;
  o.clip_width = float(input_w_);
  o.clip_height = float(input_h_);
  auto boxes = class_aware_nms(decode_gfl(levels, o), config_.nms_iou, config_.max_detections);
  const float w = float(bgr.cols), h = float(bgr.rows);
  for (auto& d : boxes) {
    d.box.x0 = std::clamp((d.box.x0 - off_x) / scale_x, 0.f, w), d.box.x1 = std::clamp((d.box.x1 - off_x) / scale_x, 0.f, w);
    d.box.y0 = std::clamp((d.box.y0 - off_y) / scale_y, 0.f, h), d.box.y1 = std::clamp((d.box.y1 - off_y) / scale_y, 0.f, h);
  }
  r.boxes = std::move(boxes);
  r.postprocess_ms = ms_since(t0);
  return r;
}

}  // namespace skiff::detection
