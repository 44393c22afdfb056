#pragma once
/// \file classifier_recipe.h
/// `task: text_classification` recipes (configs/nlp/spam_classifier.yml): the encoder
/// with a sequence-classification head fine-tuned on the SpamAssassin split, from a
/// masked-LM run (`pretrained:` its directory or weights: the encoder.* tensors are
/// loaded, the head starts fresh) or from scratch (no `pretrained:`).
/// Evaluation on the held-out mails: accuracy, precision, recall and F1 of the positive
/// label (spam), and the loss. `skiff predict -c ... FILE...` classifies files (mails
/// are read as mail_text()); `skiff export` writes a model directory for
/// `skiff nlp classify --model DIR`.
#include "framework/train/recipe_runner.h"

namespace skiff::nlp {

class TextClassificationRecipeRunner : public train::RecipeRunner {
 public:
  std::string summary() const override { return "text classification with a BERT-style encoder (spam filter)"; }
  void check(const train::Recipe& recipe, const config::ValidateOptions& options) const override;
  train::FitResult train(const train::Recipe& recipe, const train::TrainRequest& request) const override;
  std::map<std::string, double> evaluate(const train::Recipe& recipe) const override;
  std::vector<std::string> predict(const train::Recipe& recipe, const train::PredictRequest& request) const override;
  std::filesystem::path default_export_dir(const train::Recipe& recipe) const override;
  train::RunOutput run_output(const train::Recipe& recipe) const override;
  train::ExportResult export_model(const train::Recipe& recipe, const std::filesystem::path& dir) const override;
};

/// Where a text_classification recipe's run writes its model directory (save_dir).
std::filesystem::path classifier_model_dir(const train::Recipe& recipe);

/// Accuracy, precision, recall and F1 of label 1 from predicted and true labels.
std::map<std::string, double> binary_metrics(const std::vector<int>& predicted, const std::vector<int>& truth);

}  // namespace skiff::nlp
