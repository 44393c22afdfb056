#pragma once
/// \file mlm_recipe.h
/// `task: masked_lm` recipes (configs/nlp/encoder_mlm_pretrain.yml): masked-LM
/// pre-training of the encoder on the training split's mails. Evaluation: masked-token
/// accuracy (`mlm_acc`) and loss on the held-out mails, masked with a fixed seed.
/// The run directory is a model directory (encoder.json, tokenizer.model, weights) that
/// a classifier recipe's `pretrained:` names.
#include "framework/train/recipe_runner.h"

namespace skiff::nlp {

class MaskedLmRecipeRunner : public train::RecipeRunner {
 public:
  std::string summary() const override { return "masked-LM pre-training of a BERT-style encoder"; }
  void check(const train::Recipe& recipe, const config::ValidateOptions& options) const override;
  train::FitResult train(const train::Recipe& recipe, const train::TrainRequest& request) const override;
  std::map<std::string, double> evaluate(const train::Recipe& recipe) const override;
  std::vector<std::string> predict(const train::Recipe& recipe, const train::PredictRequest& request) const override;
  std::filesystem::path default_export_dir(const train::Recipe& recipe) const override;
  train::RunOutput run_output(const train::Recipe& recipe) const override;
  train::ExportResult export_model(const train::Recipe& recipe, const std::filesystem::path& dir) const override;
};

}  // namespace skiff::nlp
