#pragma once
/// \file det_recipe.h
/// Text-detection recipes (Architecture.model_type: det) in PaddleOCR's
/// layout: what they may contain, and train / eval / predict / export.
///
/// Components registered here (see docs/training.md for every key):
///   det architecture  DB (Backbone MiniResNet, Neck DBFPN, Head DBHead), ImportedGraph
///                     (the ONNX detector of Global.pretrained_model, e.g. ppocr-v4-det)
///   det loss          DBLoss           det metric      DetMetric (precision, recall, hmean)
///   det postprocess   DBPostProcess    det dataset     SimpleDataSet
///   det transform     DecodeImage, DetLabelEncode, IaaAugment, EastRandomCropData,
///                     MakeBorderMap, MakeShrinkMap, DetResizeForTest,
///                     NormalizeImage, ToCHWImage, KeepKeys
///
/// Evaluation and prediction run the eager model through the OCR pipeline's
/// own detection path (Eval's DetResizeForTest + NormalizeImage, then
/// PostProcess), and `export` writes exactly those settings into inference.yml,
/// which `skiff ocr --text_detection_model_dir DIR` reads.
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "suites/ocr/geometry.h"
#include "suites/ocr/train/recipe.h"

namespace skiff::ocr {

/// The schema of a det recipe (registers the components on first use).
const config::Schema& det_recipe_schema();

/// Checks what the schema cannot say: the transforms each split needs, their
/// settings, Train and Eval normalizing alike (load_recipe calls it). \throws ValueError.
void check_det_recipe(const Recipe& recipe);

train::FitResult train_detector(const Recipe& recipe, const std::optional<std::filesystem::path>& resume,
                                bool quiet = false);

/// precision, recall, hmean (IoU 0.5) and samples on Eval.
std::map<std::string, double> evaluate_detector(const Recipe& recipe);

/// The boxes found in one image.
struct DetPrediction {
  std::string image;
  std::vector<TextBox> boxes;  ///< reading order, image pixels
};
std::vector<DetPrediction> predict_detector(const Recipe& recipe, const std::vector<std::string>& images);

/// Writes `dir`/inference.onnx (dynamic batch, height and width) and
/// `dir`/inference.yml; returns the largest difference between the ONNX file
/// and the eager model on a test input.
double export_detector(const Recipe& recipe, const std::filesystem::path& dir);

}  // namespace skiff::ocr
