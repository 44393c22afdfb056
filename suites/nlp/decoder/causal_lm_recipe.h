#pragma once
/// \file causal_lm_recipe.h
/// `task: causal_lm` recipes: a small LLaMA-style decoder (suites/nlp/llama/) trained
/// from scratch on plain text (configs/nlp/fortunes_lm.yml), or LoRA adapters trained on
/// top of such a model to move it to another style of text (fortunes_riddles_lora.yml).
///
///   Data:      {files: [FILE_OR_DIR, ...], exclude: [NAME, ...], separator: "%",
///               eval_share: 0.05, split_seed: 42}
///   Tokenizer: SentencePiece, trained on the training documents on first use
///   Decoder:   {hidden_size, num_layers, num_heads, num_kv_heads, intermediate_size,
///               context, rope_theta, rms_norm_eps, tie_word_embeddings}
///   Lora:      {base: MODEL_DIR, rank, alpha, targets: [q_proj, v_proj]}
///              (with Lora, the model and tokenizer are the base's; Tokenizer and
///               Decoder are not read)
///   Sample:    {prompts, max_new_tokens, temperature, top_k, top_p, seed} (predict)
///
/// Training reads windows of `context` + 1 tokens at seeded offsets of the training
/// documents packed as <s> doc </s> <s> doc </s> ...; the loss is next-token cross
/// entropy. Evaluation: mean loss and perplexity on consecutive windows of the held-out
/// documents (`loss` ranks checkpoints, lower is better).
///
/// The run directory is a Hugging Face model directory apart from the weights' name:
/// config.json, generation_config.json, tokenizer.model, best_model.safetensors; a LoRA
/// run adds adapter_model.safetensors + adapter_config.json (the adapters alone).
/// `skiff export` writes config.json, model.safetensors (LoRA: merged), tokenizer.model
/// and generation_config.json, which `skiff nlp generate --model` and `--gguf` read.
#include "framework/train/recipe_runner.h"

namespace skiff::nlp {

class CausalLmRecipeRunner : public train::RecipeRunner {
 public:
  std::string summary() const override { return "LLaMA-style decoder pre-training or LoRA adaptation on text"; }
  void check(const train::Recipe& recipe, const config::ValidateOptions& options) const override;
  train::FitResult train(const train::Recipe& recipe, const train::TrainRequest& request) const override;
  std::map<std::string, double> evaluate(const train::Recipe& recipe) const override;
  std::vector<std::string> predict(const train::Recipe& recipe, const train::PredictRequest& request) const override;
  std::filesystem::path default_export_dir(const train::Recipe& recipe) const override;
  train::RunOutput run_output(const train::Recipe& recipe) const override;
  train::ExportResult export_model(const train::Recipe& recipe, const std::filesystem::path& dir) const override;
};

}  // namespace skiff::nlp
