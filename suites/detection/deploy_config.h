#pragma once
/// \file deploy_config.h
/// Reads an exported detector directory in PaddleDetection's deploy layout
/// (`skiff export -c configs/detection/...` writes it): `inference.onnx` and
/// `inference.yml` with `Preprocess` (Resize, NormalizeImage, Permute), `label_list`,
/// `draw_threshold` and `reg_max`, into the Detector's configuration.
#include <filesystem>

#include "suites/detection/detector.h"

namespace skiff::detection {

/// The Detector configuration for `skiff det --model_dir DIR`.
/// \throws IoError when DIR lacks inference.onnx or inference.yml; ValueError naming
///         inference.yml, the line and the key for a value it cannot use.
DetectorConfig read_deploy_config(const std::filesystem::path& model_dir);

}  // namespace skiff::detection
