#pragma once
/// \file recipe.h
/// OCR training recipes in PaddleOCR's layout (Global, Architecture, Loss,
/// Optimizer, PostProcess, Metric, Train, Eval). Architecture.model_type is the
/// recipe's task (framework/train/recipe_runner.h), and each has its runner:
///   rec  text recognition (rec_recipe.h): CTC recognizers
///   det  text detection (det_recipe.h): DB detectors
/// Each runner registers its components with the keys they accept; a recipe is
/// validated against its runner's schema before any work starts.
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <yaml-cpp/yaml.h>

#include "framework/config/schema.h"
#include "framework/data/dataloader.h"
#include "framework/nn/module.h"
#include "framework/train/recipe_runner.h"
#include "framework/train/trainer.h"

namespace skiff::ocr {

using train::Recipe;

/// What the rec and det runners share: a PaddleOCR-layout run directory
/// (Global.save_model_dir), predictions on Global.infer_img by default, and
/// exports to Global.save_inference_dir.
class OcrRecipeRunner : public train::RecipeRunner {
 public:
  std::filesystem::path default_export_dir(const Recipe& recipe) const override;

 protected:
  /// The checkpoint `request` asks to resume from (the latest in Global.save_model_dir with --resume).
  static std::optional<std::filesystem::path> resume_from(const Recipe& recipe, const train::TrainRequest& request);
  /// request.inputs, or Global.infer_img when there are none.
  static std::vector<std::string> predict_inputs(const Recipe& recipe, const train::PredictRequest& request);
  /// inference.onnx and inference.yml in `dir`, with the check's difference.
  static train::ExportResult exported(const std::filesystem::path& dir, double max_abs_diff);
};

// ---- shared by the runners ----------------------------------------------------------------

/// What a Metric component sets: the indicator that ranks evaluations, and
/// (RecMetric) whether spaces count.
struct MetricSpec {
  std::string main_indicator;
  bool ignore_space = true;
};

/// The kinds a runner registers its components under.
struct RecipeKinds {
  std::string architecture, loss, metric, postprocess, dataset;
};

/// The top-level schema: Global (train::global_keys() plus `global`), the
/// components of `kinds`, Optimizer, and Train / Eval with dataset and loader.
config::Schema recipe_schema(std::vector<config::Key> global, const RecipeKinds& kinds);

/// Train / Eval loader settings (batch_size_per_card, shuffle, drop_last, num_workers; Global.seed).
data::DataLoaderOptions loader_options(const Recipe& recipe, const std::string& split, bool training);

/// Loads the weights a non-training command runs, the first that exists of:
/// Global.checkpoints, <save_model_dir>/best_model.safetensors,
/// Global.pretrained_model; says on stderr which one it loaded. With none of
/// them it throws ValueError naming the places searched, unless
/// Global.allow_random_init is true. Switches the model to eval mode.
void load_trained_weights(nn::Module& model, const Recipe& recipe);

/// Loads Global.pretrained_model (a zoo name or a file) into `model` when set.
/// \returns the weights file loaded, or an empty path when none is set.
std::filesystem::path load_pretrained_weights(nn::Module& model, const Recipe& recipe);

/// Writes the merged recipe as <output_dir>/config.yml and records it in the checkpoints.
void record_recipe(const Recipe& recipe, train::TrainerOptions& options);

}  // namespace skiff::ocr
