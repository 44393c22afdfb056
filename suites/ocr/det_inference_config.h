#pragma once
/// \file det_inference_config.h
/// inference.yml of an exported text detector: the input-size rule, the
/// normalization and the DB post-processing thresholds it was trained and
/// evaluated with. `skiff export` writes it beside inference.onnx; the OCR
/// pipeline reads it for a local detector (see rec_inference_config.h for the
/// recognizer's). The layout follows PaddleOCR 3.x's inference.yml:
///
///   Global: {model_name: DB}
///   PreProcess:
///     transform_ops:
///       - DecodeImage: {img_mode: BGR, channel_first: false}
///       - DetResizeForTest: {limit_side_len: 640, limit_type: max}
///       - NormalizeImage: {scale: 0.00392156862745098, mean: [0.485, 0.456, 0.406],
///                          std: [0.229, 0.224, 0.225], order: hwc}
///       - ToCHWImage:
///       - KeepKeys: {keep_keys: [image, shape]}
///   PostProcess:
///     name: DBPostProcess
///     thresh: 0.3
///     box_thresh: 0.6
///     max_candidates: 1000
///     unclip_ratio: 1.5
///     use_dilation: false
///     score_mode: fast
#include <filesystem>
#include <string>

#include "framework/config/section.h"
#include "suites/ocr/db_postprocess.h"
#include "suites/ocr/preprocess.h"

namespace skiff::ocr {

struct DetInferenceConfig {
  std::string model_name;
  DetPreprocessParams preprocess;
  DbParams db;
};

/// Readers of the PaddleOCR entries a detector's settings live in, shared by
/// detection recipes and inference.yml. Keys left out keep the values in `p`.
/// \throws ValueError naming the key for a bad value.
/// DetResizeForTest: limit_side_len and limit_type, or resize_long (= limit_side_len with max).
void read_det_resize(const config::Section& settings, DetPreprocessParams& p);
/// NormalizeImage: scale (a number, or a fraction as PaddleOCR writes it: "1./255."), mean, std.
void read_normalize_image(const config::Section& settings, DetPreprocessParams& p);
/// DBPostProcess: thresh, box_thresh, max_candidates, unclip_ratio, use_dilation, score_mode.
DbParams read_db_postprocess(const config::Section& settings);

/// Writes the file atomically. \throws IoError.
void write_det_inference_config(const std::filesystem::path& path, const DetInferenceConfig& config);

/// Reads the file; keys it leaves out keep their defaults. \throws IoError /
/// ValueError naming the file and the key (e.g. a recognizer's file).
DetInferenceConfig read_det_inference_config(const std::filesystem::path& path);

}  // namespace skiff::ocr
