#pragma once
/// \file preprocess.h
/// Image → network-input conversion for the three PP-OCR models, reproducing
/// PaddleOCR's inference preprocessing bit for bit (same OpenCV resize, same
/// float32 arithmetic):
///   - detector: DetResizeForTest (limit_type "max" or "min") + NormalizeImage
///     + ToCHWImage (ppocr/data/imaug/operators.py);
///   - recognizer: TextRecognizer.resize_norm_img (tools/infer/predict_rec.py);
///   - classifier: TextClassifier.resize_norm_img (tools/infer/predict_cls.py).
///
/// Inputs are 8-bit, 3-channel BGR images as cv::imread returns them; PaddleOCR
/// feeds BGR unchanged, so channel c of the output is channel c of the image
/// (B first). Outputs are float32 NCHW, written into caller-owned memory.

#include <opencv2/core.hpp>

#include <array>
#include <cstddef>
#include <span>
#include <vector>

namespace skiff::ocr {

// ---------------------------------------------------------------------------
// Detector

/// How DetResizeForTest limits the image size.
enum class LimitType {
  Max,  ///< scale down so the longer side is at most limit_side_len (PP-OCR default)
  Min,  ///< scale up so the shorter side is at least limit_side_len
};

/// Detector preprocessing settings (PaddleOCR det_limit_side_len / det_limit_type;
/// mean/std/scale of NormalizeImage).
struct DetPreprocessParams {
  int limit_side_len = 960;
  LimitType limit_type = LimitType::Max;
  std::array<float, 3> mean = {0.485f, 0.456f, 0.406f};
  std::array<float, 3> std = {0.229f, 0.224f, 0.225f};
  /// Multiplies the uint8 value before mean/std (PaddleOCR: np.float32(1./255.)).
  float scale = float(1.0 / 255.0);
};

/// Geometry of one detector input.
struct DetInputInfo {
  int src_h = 0, src_w = 0;          ///< the image given to preprocess_det
  int resized_h = 0, resized_w = 0;  ///< the network input, both multiples of 32, >= 32
  /// resized / source, as PaddleOCR's shape_list (ratio_h, ratio_w). The source
  /// here is the image after PaddleOCR's zero padding of tiny images (h + w < 64
  /// pads each side to at least 32), so for those it is resized / padded.
  float ratio_h = 1.0f, ratio_w = 1.0f;
  /// Size of the padded image that gets resized (== src unless src_h + src_w < 64).
  int padded_h = 0, padded_w = 0;
  /// Number of floats the NCHW input holds: 3 * resized_h * resized_w.
  std::size_t numel() const { return std::size_t(3) * std::size_t(resized_h) * std::size_t(resized_w); }
};

/// The input geometry DetResizeForTest gives an image of src_h x src_w, without
/// touching pixels: pad tiny images (h + w < 64) to at least 32 x 32, scale by
/// limit_side_len / side (when the limit applies), truncate with int(), then round
/// each side to the nearest multiple of 32 (Python round: ties to even), at least 32.
/// \throws ValueError if a size or limit_side_len is not positive.
DetInputInfo det_input_info(int src_h, int src_w, const DetPreprocessParams& params = {});

/// Resizes (cv::resize, INTER_LINEAR, on the uint8 image: memory stays bounded
/// for huge images), normalizes ((x * scale - mean[c]) / std[c] in float32) and
/// writes [1, 3, resized_h, resized_w] float32 into `out`, which must hold
/// info.numel() floats (call det_input_info first to size it).
/// \throws ValueError if the image is empty or not CV_8UC3, or if `out` is too small.
DetInputInfo preprocess_det(const cv::Mat& bgr, std::span<float> out,
                            const DetPreprocessParams& params = {});
/// Same, resizing `out` to fit.
DetInputInfo preprocess_det(const cv::Mat& bgr, std::vector<float>& out,
                            const DetPreprocessParams& params = {});

/// NormalizeImage + ToCHWImage without resizing: writes the CV_8UC3 image as
/// [3, rows, cols] float32 ((x * scale - mean[c]) / std[c]) into `out`, which must
/// hold 3 * rows * cols floats. Training uses it on crops already at input size.
/// \throws ValueError if the image is empty or not CV_8UC3, a std is 0, or `out` is too small.
void normalize_det_image(const cv::Mat& bgr, std::span<float> out, const DetPreprocessParams& params = {});

// ---------------------------------------------------------------------------
// Recognizer

/// Recognizer preprocessing settings (PaddleOCR rec_image_shape "3, 48, 320").
struct RecPreprocessParams {
  int height = 48;
  /// PaddleOCR starts max_wh_ratio at width / height (320 / 48), so a batch is
  /// never narrower than this. 0 starts it at 0 (the batch's own widest ratio).
  int base_width = 320;
  /// When > 0, every batch has exactly this width (an ONNX model with a static
  /// width input; PaddleOCR then takes the width from the model).
  int fixed_width = 0;
};

/// Width of the recognizer input for a batch of crops:
/// int(height * max(base_width / height, max over crops of w / h)), or fixed_width.
/// \throws ValueError if `crops` is empty or a crop is empty.
int rec_batch_width(std::span<const cv::Mat> crops, const RecPreprocessParams& params = {});

/// Writes the batch [N, 3, height, W] float32 into `out` (N = crops.size(),
/// W = rec_batch_width): each crop is resized with INTER_LINEAR to
/// height x min(ceil(height * w / h), W), normalized to (x / 255 - 0.5) / 0.5 and
/// zero-padded on the right. Returns W.
/// \throws ValueError if a crop is empty or not CV_8UC3, or if `out` is too small
///   (it must hold N * 3 * height * W floats).
int preprocess_rec_batch(std::span<const cv::Mat> crops, std::span<float> out,
                         const RecPreprocessParams& params = {});
/// Same, resizing `out` to fit.
int preprocess_rec_batch(std::span<const cv::Mat> crops, std::vector<float>& out,
                         const RecPreprocessParams& params = {});

/// Indices of `crops` sorted by aspect ratio w / h ascending (stable), the order
/// in which PaddleOCR's recognizer and classifier form their batches. Results
/// must be written back to crops[order[i]].
/// \throws ValueError if a crop is empty.
std::vector<std::size_t> sort_by_aspect_ratio(std::span<const cv::Mat> crops);

// ---------------------------------------------------------------------------
// Orientation classifier

/// Classifier input shape (PaddleOCR cls_image_shape "3, 48, 192").
inline constexpr int kClsHeight = 48;
inline constexpr int kClsWidth = 192;

/// Writes the batch [N, 3, 48, 192] float32 into `out`: same resize rule and
/// normalization as the recognizer, with the width capped and padded to 192.
/// \throws ValueError if a crop is empty or not CV_8UC3, or if `out` holds fewer
///   than N * 3 * 48 * 192 floats.
void preprocess_cls_batch(std::span<const cv::Mat> crops, std::span<float> out);
/// Same, resizing `out` to fit.
void preprocess_cls_batch(std::span<const cv::Mat> crops, std::vector<float>& out);

}  // namespace skiff::ocr
