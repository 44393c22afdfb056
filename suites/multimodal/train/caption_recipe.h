#pragma once
/// \file caption_recipe.h
/// `task: caption` recipes: the captioner (captioner.h) trained by teacher forcing on caption
/// files and evaluated by decoding every Eval image (beam search) and scoring the captions
/// against all of the image's references with corpus BLEU-1..4 and CIDEr-D
/// (caption_metrics.h). Sections as the clip recipes (recipe_common.h), plus:
///
///   Architecture: {name: Captioner, image_size, vision: {channels}, decoder: {width, layers,
///                  heads, context_length}}
///   Metric:       {main_indicator: cider_d, beam: 3, max_len: 15, length_penalty: 1.0}
///
/// Captions are [CLS] (start), the caption's tokens, [SEP] (end). A run leaves captioner.json
/// and its weights; skiff predict prints a caption per image, skiff export copies weights,
/// captioner.json and the vocabulary.

#include "framework/train/recipe_runner.h"

namespace skiff::multimodal {

class CaptionRecipeRunner : public train::RecipeRunner {
 public:
  std::string summary() const override { return "image captioner (CNN encoder + transformer decoder)"; }
  void check(const train::Recipe& recipe, const config::ValidateOptions& options) const override;
  train::FitResult train(const train::Recipe& recipe, const train::TrainRequest& request) const override;
  std::map<std::string, double> evaluate(const train::Recipe& recipe) const override;
  std::vector<std::string> predict(const train::Recipe& recipe, const train::PredictRequest& request) const override;
  std::filesystem::path default_export_dir(const train::Recipe& recipe) const override;
  train::ExportResult export_model(const train::Recipe& recipe, const std::filesystem::path& dir) const override;
};

}  // namespace skiff::multimodal
