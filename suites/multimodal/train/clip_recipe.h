#pragma once
/// \file clip_recipe.h
/// `task: clip` recipes: a CLIP-style dual encoder (clip_model.h) trained with the symmetric
/// InfoNCE loss on image-caption files (caption_dataset.h), evaluated by zero-shot
/// classification and retrieval. PaddleOCR-style sections (framework/train/recipe.h):
///
///   task: clip
///   Global:       {epoch_num, print_batch_step, eval_batch_step, save_model_dir, seed, ...}
///   Architecture: {name: CLIP, image_size, patch_size, embed_dim, init_temperature,
///                  vision: {width, layers, heads}, text: {width, layers, heads, context_length, causal}}
///   Tokenizer:    {vocab: data/mm/vocab.txt}      (any file skiff's load_tokenizer reads, with [SEP], [PAD])
///   Optimizer:    {name: AdamW, lr: {name: Cosine, learning_rate, warmup_epoch}, ...}
///   Train:        {dataset: {captions: data/mm/captions_train.json, image_dir}, loader: {batch_size_per_card}}
///   Eval:         {dataset: {captions: data/mm/captions_heldout.json}, loader: {batch_size_per_card}}
///   Metric:       {main_indicator: zero_shot_acc, classes_file: data/mm/classes.txt, templates: [...]}
///
/// Each training step takes a seeded batch of images and one of each image's captions (drawn
/// per step, so a resumed run takes the same steps). Evaluation: zero-shot accuracy over the
/// Eval images that carry a label (candidates: Metric.classes or classes_file; prompt
/// ensembling over Metric.templates), and Recall@1/5/10 both ways over the Eval set, where a
/// caption query's correct images are all images having that exact caption (synthetic captions
/// repeat). A run leaves clip.json (the architecture) and the vocabulary beside the weights.

#include "framework/train/recipe_runner.h"

namespace skiff::multimodal {

class ClipRecipeRunner : public train::RecipeRunner {
 public:
  std::string summary() const override { return "image-text dual encoder (CLIP, contrastive)"; }
  void check(const train::Recipe& recipe, const config::ValidateOptions& options) const override;
  train::FitResult train(const train::Recipe& recipe, const train::TrainRequest& request) const override;
  std::map<std::string, double> evaluate(const train::Recipe& recipe) const override;
  std::vector<std::string> predict(const train::Recipe& recipe, const train::PredictRequest& request) const override;
  std::filesystem::path default_export_dir(const train::Recipe& recipe) const override;
  train::ExportResult export_model(const train::Recipe& recipe, const std::filesystem::path& dir) const override;
};

}  // namespace skiff::multimodal
