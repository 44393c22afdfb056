#pragma once
/// \file recipe.h
/// OCR training recipes in PaddleOCR's layout (Global, Architecture, Loss,
/// Optimizer, PostProcess, Metric, Train, Eval), and the commands every recipe
/// supports. Architecture.model_type picks the runner:
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
#include "framework/train/trainer.h"

namespace skiff::ocr {

/// A loaded recipe: the merged tree and the file it came from.
struct Recipe {
  YAML::Node root;
  std::string file;
  config::Section section(const std::string& key) const { return config::Section(root, "", file).section(key); }
  /// Architecture.model_type ("rec" when absent).
  std::string model_type() const;
};

/// Loads (with _BASE_ and -o overrides) and validates a recipe against the
/// schema of its model_type. \throws ValueError / IoError with file, line and key.
Recipe load_recipe(const std::string& path, const std::vector<std::string>& overrides,
                   const config::ValidateOptions& options = {});

/// Trains. `resume`: a checkpoint to continue from.
train::FitResult train_recipe(const Recipe& recipe, const std::optional<std::filesystem::path>& resume,
                              bool quiet = false);
/// Evaluates the weights load_trained_weights() picks on Eval. Returns the metrics and "samples".
std::map<std::string, double> evaluate_recipe(const Recipe& recipe);
/// Writes `dir`/inference.onnx and `dir`/inference.yml and checks the ONNX file
/// against the eager model. Returns the largest absolute difference.
double export_recipe(const Recipe& recipe, const std::filesystem::path& dir);

// ---- shared by the runners ----------------------------------------------------------------

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
