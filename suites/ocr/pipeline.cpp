#include "suites/ocr/pipeline.h"

#include <opencv2/imgproc.hpp>

#include <chrono>
#include <filesystem>
#include <numeric>

#include "framework/core/error.h"
#include "framework/data/image_io.h"
#include "framework/io/file.h"
#include "framework/engine/predictor.h"
#include "framework/graph/model_import.h"
#include "framework/zoo/zoo.h"
#include "suites/ocr/box_order.h"
#include "suites/ocr/crop.h"
#include "suites/ocr/orientation.h"
#include "suites/ocr/det_inference_config.h"
#include "suites/ocr/rec_inference_config.h"

namespace skiff::ocr {

namespace fs = std::filesystem;

namespace {

using Clock = std::chrono::steady_clock;
double ms_since(Clock::time_point t0) { return std::chrono::duration<double, std::milli>(Clock::now() - t0).count(); }

std::unique_ptr<engine::Predictor> load_model(const std::string& what, const std::string& name_or_path) {
  fs::path path = zoo::resolve_model_path(name_or_path);
  try {
    return std::make_unique<engine::Predictor>(path.string());
  } catch (Error& e) {
    e.add_context(fmt::format("while loading the {} model '{}'", what, name_or_path));
    throw;
  }
}

fs::path find_dictionary(const PipelineConfig& c) {
  if (!c.rec_dict.empty()) return zoo::resolve_model_path(c.rec_dict);
  if (fs::exists(c.rec_model)) {
    fs::path beside = fs::path(c.rec_model).parent_path() / "ppocr_keys_v1.txt";
    SKIFF_CHECK(fs::exists(beside), "recognizer '{}' is a local file and no dictionary was given; pass the "
                "character dictionary (--text_rec_dict_path) or put ppocr_keys_v1.txt beside the model", c.rec_model);
    return beside;
  }
  return zoo::fetch_file(c.rec_model, "ppocr_keys_v1.txt");
}

/// A float buffer as a [N, 3, H, W] tensor without copying (the buffer outlives the run).
Tensor nchw_view(std::vector<float>& buf, int64_t n, int64_t h, int64_t w) {
  return from_blob(buf.data(), Shape{n, 3, h, w}, DType::Float32);
}

}  // namespace

cv::Mat to_bgr8(const cv::Mat& image) {
  SKIFF_CHECK(!image.empty(), "ocr: the image is empty");
  SKIFF_CHECK(image.depth() == CV_8U, "ocr: expected an 8-bit image, got OpenCV depth {}", image.depth());
  cv::Mat bgr;
  switch (image.channels()) {
    case 3: return image;
    case 1: cv::cvtColor(image, bgr, cv::COLOR_GRAY2BGR); return bgr;
    case 4: cv::cvtColor(image, bgr, cv::COLOR_BGRA2BGR); return bgr;
    default: SKIFF_THROW(ValueError, "ocr: expected 1, 3 or 4 channels, got {}", image.channels());
  }
}

Pipeline::Pipeline(PipelineConfig config) : config_(std::move(config)) {
  // An exported detector carries its input-size rule, normalization and thresholds in inference.yml.
  if (config_.read_det_inference_config) apply_det_inference_config(config_);
  // PaddleOCR's *_model_dir flags name a directory: take the exported model inside it (its
  // inference.yml and dictionary are looked up beside that file).
  for (std::string* m : {&config_.det_model, &config_.rec_model, &config_.cls_model})
    if (fs::is_directory(*m)) *m = graph::model_file(*m);
  SKIFF_CHECK(config_.rec_batch > 0 && config_.cls_batch > 0, "ocr: batch sizes must be positive");
  det_ = load_model("text detection", config_.det_model);
  rec_ = load_model("text recognition", config_.rec_model);
  if (config_.use_textline_orientation) cls_ = load_model("text-line orientation", config_.cls_model);
  // An exported recognizer carries its preprocessing and dictionary in inference.yml.
  std::optional<fs::path> settings;
  if (config_.rec_dict.empty() && fs::exists(config_.rec_model)) settings = rec_inference_config_beside(config_.rec_model);
  if (settings) {
    RecInferenceConfig ic = read_rec_inference_config(*settings);
    charset_ = std::make_unique<Charset>(ic.characters, ic.use_space_char);
    config_.rec = RecPreprocessParams{.height = ic.height, .base_width = ic.width,
                                      .fixed_width = ic.fixed_width ? ic.width : 0};
    if (ic.batch_size > 0) config_.rec_batch = ic.batch_size;
  } else {
    charset_ = std::make_unique<Charset>(Charset::load(find_dictionary(config_)));
  }
}

Pipeline::~Pipeline() = default;

std::vector<TextBox> detect_text_boxes(const cv::Mat& bgr, const DetPreprocessParams& pre, const DbParams& db,
                                       const std::function<Tensor(const Tensor&)>& run) {
  std::vector<float> input;
  DetInputInfo info = preprocess_det(bgr, input, pre);
  Tensor prob = run(nchw_view(input, 1, info.resized_h, info.resized_w));
  SKIFF_CHECK_SHAPE(prob.dim() == 4 && prob.size(2) == info.resized_h && prob.size(3) == info.resized_w,
                    "ocr: the detector returned shape {}, expected [1, 1, {}, {}]", prob.shape(), info.resized_h,
                    info.resized_w);
  Tensor map = prob.is_contiguous() ? prob : skiff::detail::contiguous_copy(prob);
  // db_postprocess clips and filters (PaddleOCR filter_tag_det_res) in the coordinates of the
  // source it is given: the padded image for tiny inputs, so clip again to the real image.
  auto boxes = db_postprocess(map.data<float>(), info.resized_h, info.resized_w, info.padded_h, info.padded_w, db);
  if (info.padded_h != bgr.rows || info.padded_w != bgr.cols)
    for (auto& b : boxes) b.quad = clip_to_image(b.quad, bgr.cols, bgr.rows);
  sort_reading_order(boxes);
  return boxes;
}

bool apply_det_inference_config(PipelineConfig& config) {
  fs::path model = config.det_model;
  if (!fs::exists(model)) return false;  // a zoo name
  fs::path file = (fs::is_directory(model) ? model : model.parent_path()) / "inference.yml";
  if (!fs::exists(file)) return false;
  DetInferenceConfig ic = read_det_inference_config(file);
  config.det = ic.preprocess;
  config.db = ic.db;
  return true;
}

std::vector<TextBox> Pipeline::detect(const cv::Mat& bgr, const RunOverrides& overrides) const {
  DetPreprocessParams det = config_.det;
  DbParams db = config_.db;
  det.limit_side_len = overrides.det_limit_side_len.value_or(det.limit_side_len);
  det.limit_type = overrides.det_limit_type.value_or(det.limit_type);
  db.thresh = overrides.det_thresh.value_or(db.thresh);
  db.box_thresh = overrides.det_box_thresh.value_or(db.box_thresh);
  db.unclip_ratio = overrides.det_unclip_ratio.value_or(db.unclip_ratio);
  return detect_text_boxes(bgr, det, db,
                           [&](const Tensor& x) { return det_->run(std::vector<Tensor>{x})[0]; });
}

std::vector<int> Pipeline::classify(std::vector<cv::Mat>& crops) const {
  std::vector<int> angles(crops.size(), 0);
  std::vector<size_t> order = sort_by_aspect_ratio(crops);
  std::vector<float> input;
  for (size_t begin = 0; begin < order.size(); begin += size_t(config_.cls_batch)) {
    size_t end = std::min(order.size(), begin + size_t(config_.cls_batch));
    std::vector<cv::Mat> batch;
    for (size_t i = begin; i < end; ++i) batch.push_back(crops[order[i]]);
    preprocess_cls_batch(batch, input);
    Tensor probs = cls_->run(std::vector<Tensor>{nchw_view(input, int64_t(batch.size()), kClsHeight, kClsWidth)})[0];
    SKIFF_CHECK_SHAPE(probs.dim() == 2 && probs.size(0) == int64_t(batch.size()) && probs.size(1) == 2,
                      "ocr: the orientation classifier returned shape {}, expected [{}, 2]", probs.shape(), batch.size());
    Tensor p = probs.is_contiguous() ? probs : skiff::detail::contiguous_copy(probs);
    for (size_t i = begin; i < end; ++i) {
      Orientation o = decode_orientation(p.data<float>() + 2 * (i - begin));
      // Record the rotation applied: a "180" below the confidence threshold leaves the crop as is.
      if (needs_rotation(o, config_.cls_thresh)) {
        crops[order[i]] = rotate_180(crops[order[i]]);
        angles[order[i]] = 180;
      }
    }
  }
  return angles;
}

std::vector<CtcAlignment> Pipeline::align_lines(const std::vector<cv::Mat>& crops) const {
  std::vector<CtcAlignment> paths(crops.size());
  std::vector<size_t> order = sort_by_aspect_ratio(crops);
  std::vector<float> input;
  for (size_t begin = 0; begin < order.size(); begin += size_t(config_.rec_batch)) {
    size_t end = std::min(order.size(), begin + size_t(config_.rec_batch));
    std::vector<cv::Mat> batch;
    for (size_t i = begin; i < end; ++i) batch.push_back(crops[order[i]]);
    int width = preprocess_rec_batch(batch, input, config_.rec);
    Tensor probs = rec_->run(std::vector<Tensor>{nchw_view(input, int64_t(batch.size()), config_.rec.height, width)})[0];
    SKIFF_CHECK_SHAPE(probs.dim() == 3 && probs.size(0) == int64_t(batch.size()) &&
                          probs.size(2) == int64_t(charset_->size()),
                      "ocr: the recognizer returned shape {}, expected [{}, T, {}] ({} dictionary classes)", probs.shape(),
                      batch.size(), charset_->size(), charset_->size());
    Tensor p = probs.is_contiguous() ? probs : skiff::detail::contiguous_copy(probs);
    const int64_t steps = p.size(1), classes = p.size(2);
    for (size_t i = begin; i < end; ++i)
      paths[order[i]] = ctc_greedy_align(p.data<float>() + int64_t(i - begin) * steps * classes, int(steps),
                                         int(classes), *charset_);
  }
  return paths;
}

OcrResult Pipeline::run(const cv::Mat& image, const RunOverrides& overrides) const {
  SKIFF_CHECK(!overrides.use_textline_orientation.value_or(false) || cls_,
              "ocr: text-line orientation was asked for, but the pipeline was loaded without its classifier");
  const bool classify_lines = cls_ && overrides.use_textline_orientation.value_or(true);
  const float rec_score_thresh = overrides.rec_score_thresh.value_or(config_.rec_score_thresh);
  auto t_start = Clock::now();
  OcrResult result;
  cv::Mat bgr = to_bgr8(image);

  auto t0 = Clock::now();
  result.detections = detect(bgr, overrides);
  result.timings.det_ms = ms_since(t0);

  t0 = Clock::now();
  std::vector<cv::Mat> crops;
  crops.reserve(result.detections.size());
  for (const auto& box : result.detections) crops.push_back(crop_text_region(bgr, box.quad));
  result.timings.post_ms += ms_since(t0);

  result.angles.assign(result.detections.size(), -1);
  if (classify_lines && !crops.empty()) {
    t0 = Clock::now();
    result.angles = classify(crops);
    result.timings.cls_ms = ms_since(t0);
  }

  std::vector<DecodedText> texts;
  if (!crops.empty()) {
    t0 = Clock::now();
    std::vector<CtcAlignment> paths = align_lines(crops);
    std::optional<WordSpaceParams> spaces;
    if (config_.restore_word_spaces) spaces = config_.word_spaces;
    for (const auto& path : paths) texts.push_back(ctc_text(path, *charset_, spaces));
    result.timings.rec_ms = ms_since(t0);
  }

  for (size_t i = 0; i < texts.size(); ++i) {
    if (texts[i].score < rec_score_thresh) continue;
    result.lines.push_back(OcrLine{result.detections[i].quad, texts[i].text, texts[i].score,
                                   result.detections[i].score, result.angles[i]});
  }
  result.timings.total_ms = ms_since(t_start);
  return result;
}

cv::Mat read_image(const std::string& path) {
  std::error_code ec;
  if (!fs::exists(path, ec)) SKIFF_THROW(IoError, "{}: no such file", path);
  if (fs::is_directory(path, ec)) SKIFF_THROW(IoError, "{}: is a directory, not an image", path);
  auto size = fs::file_size(path, ec);
  if (ec) SKIFF_THROW(IoError, "{}: cannot read ({})", path, ec.message());
  if (size == 0) SKIFF_THROW(IoError, "{}: the file is empty", path);
  const std::string bytes = io::read_file(path);
  try {
    return data::decode_image({reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size()}, path);
  } catch (const IoError& e) {
    SKIFF_THROW(IoError, "{}: cannot decode the image ({})", path, e.what());
  }
}

}  // namespace skiff::ocr
