#pragma once
/// \file pipeline.h
/// The PP-OCR pipeline: detect text lines (DB), turn upside-down lines (text-line
/// orientation classifier), read each line (CTC recognizer). Each stage follows
/// PaddleOCR's inference code (tools/infer/predict_system.py) so the same models
/// give the same lines; the models run through skiff's Predictor.
///
/// A Pipeline loads its three models once. run() is const and thread-safe: one
/// Pipeline can serve many threads.

#include <opencv2/core.hpp>

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "framework/tensor/tensor.h"
#include "suites/ocr/ctc_decode.h"
#include "suites/ocr/db_postprocess.h"
#include "suites/ocr/geometry.h"
#include "suites/ocr/preprocess.h"

namespace skiff::engine {
class Predictor;
}

namespace skiff::ocr {

struct PipelineConfig {
  /// Zoo model names or local .onnx files.
  std::string det_model = "ppocr-v4-det";
  std::string rec_model = "ppocr-v4-rec";
  std::string cls_model = "ppocr-mobile-v2-cls";
  /// Character dictionary of the recognizer; "" = the zoo model's ppocr_keys_v1.txt,
  /// or a ppocr_keys_v1.txt beside a local recognizer file.
  std::string rec_dict;
  /// Run the 0/180-degree text-line orientation classifier (PaddleOCR: use_textline_orientation).
  bool use_textline_orientation = true;
  DetPreprocessParams det;         ///< text_det_limit_side_len (default 960)
  /// Recognizer input size (rec_image_shape). A local recognizer with an
  /// inference.yml beside it (skiff export) takes its size and dictionary from there.
  RecPreprocessParams rec;
  DbParams db;                     ///< text_det_thresh 0.3, text_det_box_thresh 0.6, text_det_unclip_ratio 1.5
  /// A local detector with an inference.yml beside it (skiff export) takes `det`
  /// and `db` from there. Set false to use the fields as given (apply_det_inference_config
  /// lets a caller start from the file and change some of them).
  bool read_det_inference_config = true;
  float rec_score_thresh = 0.5f;   ///< lines scoring below are dropped (text_rec_score_thresh)
  float cls_thresh = 0.9f;         ///< turn a line only when the classifier is this sure
  int rec_batch = 6;               ///< recognizer batch size (PaddleOCR rec_batch_num)
  int cls_batch = 6;               ///< classifier batch size (PaddleOCR cls_batch_num)
  /// Put back the spaces between Latin words that the recognizer drops (ctc_text(),
  /// WordSpaceParams); false gives PaddleOCR's text exactly. Chinese text is never changed.
  bool restore_word_spaces = true;
  WordSpaceParams word_spaces;
};

/// One recognised text line.
struct OcrLine {
  Quad quad;           ///< in image pixels, clockwise from top-left
  std::string text;
  float score = 0;     ///< recognizer confidence (mean max-probability of the kept steps)
  float det_score = 0; ///< detector box score
  int angle = -1;      ///< rotation applied before reading (0 or 180); -1 when the classifier did not run
};

/// Changes to the configured settings for one run() (PaddleOCR's predict() keyword
/// arguments; `skiff serve` takes them per request). Unset fields keep the config's.
struct RunOverrides {
  std::optional<int> det_limit_side_len;
  std::optional<LimitType> det_limit_type;
  std::optional<float> det_thresh, det_box_thresh, det_unclip_ratio, rec_score_thresh;
  /// false skips the orientation classifier; true needs it loaded (use_textline_orientation).
  std::optional<bool> use_textline_orientation;
};

struct OcrTimings {
  double total_ms = 0, det_ms = 0, cls_ms = 0, rec_ms = 0, post_ms = 0;
};

struct OcrResult {
  std::vector<TextBox> detections;  ///< every detected box, reading order (dt_polys, dt_scores)
  std::vector<int> angles;          ///< per detection: rotation applied (0 or 180), -1 without the classifier
  std::vector<OcrLine> lines;       ///< kept lines (score >= threshold), reading order
  OcrTimings timings;
};

class Pipeline {
 public:
  /// Loads (pulling from the zoo on first use) the configured models.
  /// \throws ValueError/IoError naming the model or dictionary that cannot be had.
  explicit Pipeline(PipelineConfig config = {});
  ~Pipeline();
  Pipeline(const Pipeline&) = delete;
  Pipeline& operator=(const Pipeline&) = delete;

  /// OCR of one 8-bit image (BGR, or gray / BGRA, converted). An image without text gives
  /// an empty result. \throws ValueError for an empty image or an unsupported pixel type.
  OcrResult run(const cv::Mat& image) const { return run(image, RunOverrides{}); }
  /// Same, with some settings changed for this call. \throws ValueError for an override
  /// the loaded models cannot honour (the classifier asked for but not loaded).
  OcrResult run(const cv::Mat& image, const RunOverrides& overrides) const;

  /// Recognition alone: the greedy CTC path of each upright text-line image, as run()
  /// reads its crops (same resizing, batching and model; no detection, no orientation
  /// classifier). ctc_text() turns a path into text; tools that study the decoding use it.
  std::vector<CtcAlignment> align_lines(const std::vector<cv::Mat>& crops) const;

  const PipelineConfig& config() const { return config_; }
  const Charset& charset() const { return *charset_; }

 private:
  std::vector<TextBox> detect(const cv::Mat& bgr, const RunOverrides& overrides) const;
  std::vector<int> classify(std::vector<cv::Mat>& crops) const;

  PipelineConfig config_;
  std::unique_ptr<engine::Predictor> det_, rec_, cls_;
  std::unique_ptr<Charset> charset_;
};

/// Sets config.det and config.db from the inference.yml beside a local detector
/// (config.det_model: an .onnx file or an export directory), when there is one.
/// Returns whether it did. \throws ValueError / IoError for a malformed file.
bool apply_det_inference_config(PipelineConfig& config);

/// DB text detection of one BGR image with any detector, the way the pipeline
/// runs it: DetResizeForTest + NormalizeImage (`pre`), `run` maps the input
/// [1, 3, h, w] to the probability map [1, 1, h, w], then DB post-processing
/// (`db`). Boxes are in image pixels, in reading order. `skiff eval` and
/// `skiff predict` of detection recipes use it with the eager model, so they
/// measure exactly what the exported model does in `skiff ocr`.
/// \throws ShapeError when the map's shape is not the input's.
std::vector<TextBox> detect_text_boxes(const cv::Mat& bgr, const DetPreprocessParams& pre, const DbParams& db,
                                       const std::function<Tensor(const Tensor&)>& run);

/// An 8-bit image as 3-channel BGR: BGR as is, gray and BGRA converted.
/// \throws ValueError for an empty image, another depth or channel count.
cv::Mat to_bgr8(const cv::Mat& image);

/// Reads an image file for OCR (any format OpenCV decodes; EXIF orientation applied).
/// \throws IoError naming the file when it cannot be read or decoded (missing, empty, corrupt).
cv::Mat read_image(const std::string& path);

}  // namespace skiff::ocr
