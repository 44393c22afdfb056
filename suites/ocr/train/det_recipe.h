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
///   transforms        the OCR transforms (transforms.h), run as a pipeline in the
///                     order listed: Train's must give image, shrink_map,
///                     shrink_mask, threshold_map and threshold_mask; Eval's must
///                     hold DetResizeForTest and NormalizeImage
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

/// The runner of `model_type: det` recipes (registered in suites/ocr/register.cpp).
class DetRecipeRunner final : public OcrRecipeRunner {
 public:
  std::string summary() const override { return "text detection (DB), PaddleOCR det recipes"; }
  /// The schema, then what it cannot say: the transforms each split needs,
  /// their settings, Train and Eval normalizing alike. \throws ValueError.
  void check(const Recipe& recipe, const config::ValidateOptions& options) const override;
  train::FitResult train(const Recipe& recipe, const train::TrainRequest& request) const override;
  std::map<std::string, double> evaluate(const Recipe& recipe) const override;
  /// image<TAB>[{"points": [[x, y], ...], "score": s}, ...] per image (PaddleOCR's det
  /// result format); with save_dir also <save_dir>/det_res_<image name>, the boxes drawn.
  std::vector<std::string> predict(const Recipe& recipe, const train::PredictRequest& request) const override;
  train::ExportResult export_model(const Recipe& recipe, const std::filesystem::path& dir) const override;
};

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
