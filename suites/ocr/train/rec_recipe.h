#pragma once
/// \file rec_recipe.h
/// Text-recognition recipes (Architecture.model_type: rec) in PaddleOCR's
/// layout: what they may contain, and train / eval / predict / export.
///
/// Components registered here (see docs/training.md for every key):
///   architecture  ImportedGraph (the ONNX graph of Global.pretrained_model as a
///                 trainable module), CRNN (Backbone MiniVGG, Neck SequenceEncoder,
///                 Head CTCHead)
///   loss          CTCLoss          metric       RecMetric (acc, norm_edit_dis)
///   postprocess   CTCLabelDecode   dataset      SimpleDataSet
///   transforms    the OCR transforms (transforms.h), run as a pipeline in the
///                 order listed; every example must hold image, label and length
///                 (DecodeImage, CTCLabelEncode, RecResizeImg), and Eval's
///                 RecResizeImg sets the exported model's input size
///
/// The recipe fixes the model's preprocessing (RecResizeImg image_shape,
/// [-1, 1] normalization) and its dictionary; `export` writes both into
/// inference.yml beside the ONNX file, and the OCR pipeline reads them from
/// there, so a trained model and its export cannot disagree.
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "suites/ocr/train/recipe.h"

namespace skiff::ocr {

/// The schema of a rec recipe (registers the components on first use).
const config::Schema& rec_recipe_schema();

/// The runner of `model_type: rec` recipes (registered in suites/ocr/register.cpp).
class RecRecipeRunner final : public OcrRecipeRunner {
 public:
  std::string summary() const override { return "text recognition (CTC), PaddleOCR rec recipes"; }
  /// The schema, then what it cannot say. \throws ValueError.
  void check(const Recipe& recipe, const config::ValidateOptions& options) const override;
  train::FitResult train(const Recipe& recipe, const train::TrainRequest& request) const override;
  std::map<std::string, double> evaluate(const Recipe& recipe) const override;
  /// image<TAB>text<TAB>score per image.
  std::vector<std::string> predict(const Recipe& recipe, const train::PredictRequest& request) const override;
  train::ExportResult export_model(const Recipe& recipe, const std::filesystem::path& dir) const override;
};

/// Trains. `resume`: a checkpoint to continue from. Returns the trainer's result.
train::FitResult train_recognizer(const Recipe& recipe, const std::optional<std::filesystem::path>& resume,
                                  bool quiet = false);

/// Evaluates Global.checkpoints (or the pretrained model) on Eval. Returns the metrics.
std::map<std::string, double> evaluate_recognizer(const Recipe& recipe);

/// One prediction per image: (path, text, score).
struct RecPrediction {
  std::string image;
  std::string text;
  float score = 0;
};
std::vector<RecPrediction> predict_recognizer(const Recipe& recipe, const std::vector<std::string>& images);

/// Writes `dir`/inference.onnx and `dir`/inference.yml (preprocessing and
/// dictionary) from Global.checkpoints (or the pretrained model), and checks
/// that the ONNX file reproduces the eager model. Returns the largest absolute
/// difference of that check.
double export_recognizer(const Recipe& recipe, const std::filesystem::path& dir);

}  // namespace skiff::ocr
