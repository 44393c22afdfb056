// PP-OCR preprocessing. Every arithmetic step mirrors the numpy expression in
// PaddleOCR with the same float32 operations (via per-channel lookup tables of
// the 256 possible uint8 values), so inputs match PaddleOCR's exactly.
#include "suites/ocr/preprocess.h"

#include <opencv2/imgproc.hpp>

#include <algorithm>
#include <cmath>
#include <numeric>

#include "framework/core/error.h"

namespace skiff::ocr {

namespace {

using Lut = std::array<float, 256>;

void check_bgr(const cv::Mat& img, const char* who, std::size_t index) {
  SKIFF_CHECK(!img.empty(), "{}: expected a non-empty image, got an empty one at index {}", who, index);
  SKIFF_CHECK(img.type() == CV_8UC3,
              "{}: expected an 8-bit 3-channel BGR image (CV_8UC3), got OpenCV type {} "
              "({}x{}, {} channels) at index {}",
              who, img.type(), img.cols, img.rows, img.channels(), index);
}

// Writes the HWC uint8 image `img` (CV_8UC3) as CHW floats through per-channel
// tables into `dst`, whose rows are `row_stride` floats apart and whose planes
// are `plane` floats apart; columns beyond img.cols are left untouched.
void write_chw(const cv::Mat& img, const std::array<Lut, 3>& lut, float* dst,
               std::size_t row_stride, std::size_t plane) {
  for (int y = 0; y < img.rows; ++y) {
    const uint8_t* src = img.ptr<uint8_t>(y);
    float* d0 = dst + std::size_t(y) * row_stride;
    float* d1 = d0 + plane;
    float* d2 = d1 + plane;
    for (int x = 0; x < img.cols; ++x) {
      d0[x] = lut[0][src[3 * x + 0]];
      d1[x] = lut[1][src[3 * x + 1]];
      d2[x] = lut[2][src[3 * x + 2]];
    }
  }
}

// (x / 255 - 0.5) / 0.5 in float32, as predict_rec / predict_cls compute it.
const std::array<Lut, 3>& rec_lut() {
  static const std::array<Lut, 3> lut = [] {
    std::array<Lut, 3> t{};
    for (int v = 0; v < 256; ++v) {
      float f = float(v) / 255.0f;
      f -= 0.5f;
      f /= 0.5f;
      t[0][v] = t[1][v] = t[2][v] = f;
    }
    return t;
  }();
  return lut;
}

// PaddleOCR resize_norm_img width: min(ceil(height * w / h), max_width).
int resized_width(const cv::Mat& img, int height, int max_width) {
  const double ratio = img.cols / double(img.rows);
  const double w = std::ceil(height * ratio);
  return w > max_width ? max_width : int(w);
}

// Resizes each crop to height x resized_width, normalizes and zero-pads to `width`.
void write_text_batch(std::span<const cv::Mat> crops, int height, int width, float* out,
                      const char* who) {
  const std::size_t plane = std::size_t(height) * std::size_t(width);
  const std::size_t per_image = 3 * plane;
  std::fill(out, out + per_image * crops.size(), 0.0f);
  cv::Mat resized;
  for (std::size_t i = 0; i < crops.size(); ++i) {
    check_bgr(crops[i], who, i);
    const int w = resized_width(crops[i], height, width);
    cv::resize(crops[i], resized, cv::Size(w, height));
    write_chw(resized, rec_lut(), out + i * per_image, std::size_t(width), plane);
  }
}

}  // namespace

DetInputInfo det_input_info(int src_h, int src_w, const DetPreprocessParams& params) {
  SKIFF_CHECK(src_h > 0 && src_w > 0, "ocr::det_input_info: expected a non-empty image, got {}x{} (w x h)",
              src_w, src_h);
  SKIFF_CHECK(params.limit_side_len > 0, "ocr::det_input_info: expected limit_side_len > 0, got {}",
              params.limit_side_len);
  DetInputInfo info;
  info.src_h = src_h;
  info.src_w = src_w;
  // DetResizeForTest.image_padding: tiny images are zero-padded to >= 32 per side.
  const bool pad = src_h + src_w < 64;
  const int h = pad ? std::max(32, src_h) : src_h;
  const int w = pad ? std::max(32, src_w) : src_w;
  info.padded_h = h;
  info.padded_w = w;

  const double limit = params.limit_side_len;
  double ratio = 1.0;
  if (params.limit_type == LimitType::Max) {
    if (std::max(h, w) > params.limit_side_len) ratio = h > w ? limit / h : limit / w;
  } else {
    if (std::min(h, w) < params.limit_side_len) ratio = h < w ? limit / h : limit / w;
  }
  // int(h * ratio), then max(int(round(x / 32) * 32), 32); Python's round ties to
  // even, which std::nearbyint does in the default rounding mode.
  const auto to_multiple_of_32 = [](double side) {
    const double truncated = std::trunc(side);
    return std::max(int(std::nearbyint(truncated / 32.0) * 32.0), 32);
  };
  info.resized_h = to_multiple_of_32(h * ratio);
  info.resized_w = to_multiple_of_32(w * ratio);
  info.ratio_h = float(info.resized_h / double(h));
  info.ratio_w = float(info.resized_w / double(w));
  return info;
}

DetInputInfo preprocess_det(const cv::Mat& bgr, std::span<float> out, const DetPreprocessParams& params) {
  check_bgr(bgr, "ocr::preprocess_det", 0);
  const DetInputInfo info = det_input_info(bgr.rows, bgr.cols, params);
  SKIFF_CHECK(out.size() >= info.numel(),
              "ocr::preprocess_det: expected an output buffer of at least {} floats for a "
              "[1, 3, {}, {}] input, got {}",
              info.numel(), info.resized_h, info.resized_w, out.size());
  for (int c = 0; c < 3; ++c)
    SKIFF_CHECK(params.std[c] != 0.0f, "ocr::preprocess_det: expected non-zero std, got std[{}] = 0", c);

  const cv::Mat* src = &bgr;
  cv::Mat padded;
  if (info.padded_h != bgr.rows || info.padded_w != bgr.cols) {
    padded = cv::Mat::zeros(info.padded_h, info.padded_w, CV_8UC3);
    bgr.copyTo(padded(cv::Rect(0, 0, bgr.cols, bgr.rows)));
    src = &padded;
  }
  cv::Mat resized;
  if (info.resized_h == src->rows && info.resized_w == src->cols)
    resized = *src;
  else
    cv::resize(*src, resized, cv::Size(info.resized_w, info.resized_h));

  normalize_det_image(resized, out, params);
  return info;
}

void normalize_det_image(const cv::Mat& bgr, std::span<float> out, const DetPreprocessParams& params) {
  check_bgr(bgr, "ocr::normalize_det_image", 0);
  const std::size_t plane = std::size_t(bgr.rows) * std::size_t(bgr.cols);
  SKIFF_CHECK(out.size() >= 3 * plane, "ocr::normalize_det_image: expected an output buffer of at least {} floats, got {}",
              3 * plane, out.size());
  std::array<Lut, 3> lut{};
  for (int c = 0; c < 3; ++c) {
    SKIFF_CHECK(params.std[c] != 0.0f, "ocr::normalize_det_image: expected non-zero std, got std[{}] = 0", c);
    for (int v = 0; v < 256; ++v) lut[c][v] = (float(v) * params.scale - params.mean[c]) / params.std[c];
  }
  write_chw(bgr, lut, out.data(), std::size_t(bgr.cols), plane);
}

DetInputInfo preprocess_det(const cv::Mat& bgr, std::vector<float>& out, const DetPreprocessParams& params) {
  check_bgr(bgr, "ocr::preprocess_det", 0);
  out.resize(det_input_info(bgr.rows, bgr.cols, params).numel());
  return preprocess_det(bgr, std::span<float>(out), params);
}

int rec_batch_width(std::span<const cv::Mat> crops, const RecPreprocessParams& params) {
  SKIFF_CHECK(!crops.empty(), "ocr::rec_batch_width: expected at least one crop, got none");
  SKIFF_CHECK(params.height > 0, "ocr::rec_batch_width: expected height > 0, got {}", params.height);
  for (std::size_t i = 0; i < crops.size(); ++i)
    SKIFF_CHECK(!crops[i].empty(), "ocr::rec_batch_width: expected non-empty crops, got an empty one at index {}", i);
  if (params.fixed_width > 0) return params.fixed_width;
  double max_wh_ratio = params.base_width / double(params.height);
  for (const auto& c : crops) max_wh_ratio = std::max(max_wh_ratio, c.cols * 1.0 / c.rows);
  return int(params.height * max_wh_ratio);
}

int preprocess_rec_batch(std::span<const cv::Mat> crops, std::span<float> out,
                         const RecPreprocessParams& params) {
  const int width = rec_batch_width(crops, params);
  const std::size_t need = crops.size() * 3 * std::size_t(params.height) * std::size_t(width);
  SKIFF_CHECK(out.size() >= need,
              "ocr::preprocess_rec_batch: expected an output buffer of at least {} floats for a "
              "[{}, 3, {}, {}] batch, got {}",
              need, crops.size(), params.height, width, out.size());
  write_text_batch(crops, params.height, width, out.data(), "ocr::preprocess_rec_batch");
  return width;
}

int preprocess_rec_batch(std::span<const cv::Mat> crops, std::vector<float>& out,
                         const RecPreprocessParams& params) {
  const int width = rec_batch_width(crops, params);
  out.resize(crops.size() * 3 * std::size_t(params.height) * std::size_t(width));
  return preprocess_rec_batch(crops, std::span<float>(out), params);
}

std::vector<std::size_t> sort_by_aspect_ratio(std::span<const cv::Mat> crops) {
  std::vector<double> ratio(crops.size());
  for (std::size_t i = 0; i < crops.size(); ++i) {
    SKIFF_CHECK(!crops[i].empty(), "ocr::sort_by_aspect_ratio: expected non-empty crops, got an empty one at index {}",
                i);
    ratio[i] = crops[i].cols / double(crops[i].rows);
  }
  std::vector<std::size_t> order(crops.size());
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return ratio[a] < ratio[b]; });
  return order;
}

void preprocess_cls_batch(std::span<const cv::Mat> crops, std::span<float> out) {
  const std::size_t need = crops.size() * 3 * std::size_t(kClsHeight) * std::size_t(kClsWidth);
  SKIFF_CHECK(out.size() >= need,
              "ocr::preprocess_cls_batch: expected an output buffer of at least {} floats for a "
              "[{}, 3, {}, {}] batch, got {}",
              need, crops.size(), kClsHeight, kClsWidth, out.size());
  write_text_batch(crops, kClsHeight, kClsWidth, out.data(), "ocr::preprocess_cls_batch");
}

void preprocess_cls_batch(std::span<const cv::Mat> crops, std::vector<float>& out) {
  out.resize(crops.size() * 3 * std::size_t(kClsHeight) * std::size_t(kClsWidth));
  preprocess_cls_batch(crops, std::span<float>(out));
}

}  // namespace skiff::ocr
