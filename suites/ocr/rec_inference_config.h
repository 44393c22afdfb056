#pragma once
/// \file rec_inference_config.h
/// inference.yml: the preprocessing and dictionary a recognizer was trained
/// with, written by `skiff export` beside inference.onnx and read by the OCR
/// pipeline (so a trained model and its export agree on preprocessing). The
/// layout follows PaddleOCR 3.x's inference.yml:
///
///   Global: {model_name: CRNN, batch_size: 1}     # batch_size 0 (or absent): any
///   PreProcess:
///     transform_ops:
///       - DecodeImage: {img_mode: BGR, channel_first: false}
///       - RecResizeImg: {image_shape: [3, 48, 320], dynamic_width: true}
///       - NormalizeImage: {scale: 0.00392156862745098, mean: [0.5, 0.5, 0.5], std: [0.5, 0.5, 0.5]}
///       - KeepKeys: {keep_keys: [image]}
///   PostProcess:
///     name: CTCLabelDecode
///     use_space_char: true
///     character_dict: [a, b, ...]
///
/// `dynamic_width: false` means the model takes exactly image_shape's width
/// (padded). The normalization is fixed at (x / 255 - 0.5) / 0.5, the one
/// skiff's recognizer preprocessing implements; a file that asks for another
/// is rejected rather than silently ignored.
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace skiff::ocr {

struct RecInferenceConfig {
  std::string model_name;
  int height = 48;
  int width = 320;
  bool fixed_width = false;
  int batch_size = 0;  ///< the batch the model takes (0: any)
  bool use_space_char = true;
  std::vector<std::string> characters;  ///< dictionary entries (no blank, no space)
};

/// Writes the file atomically. \throws IoError.
void write_rec_inference_config(const std::filesystem::path& path, const RecInferenceConfig& config);

/// Reads the file. \throws IoError / ValueError naming the file and the key.
RecInferenceConfig read_rec_inference_config(const std::filesystem::path& path);

/// `inference.yml` beside a model file, if there is one.
std::optional<std::filesystem::path> rec_inference_config_beside(const std::filesystem::path& model);

}  // namespace skiff::ocr
