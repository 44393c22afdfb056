#pragma once
/// \file lora.h
/// LoRA (Hu et al. 2021) on a whole model: low-rank adapters on the Linear layers a
/// list of names picks, everything else frozen, and the adapters saved and loaded on
/// their own. The layers do the arithmetic (Linear::add_lora); this file finds them.
///
///   nn::LoraOptions o{.rank = 8, .alpha = 16, .targets = {"q_proj", "v_proj"}};
///   nn::add_lora(model, o);            // only the adapters require grad now
///   ... train ...
///   nn::save_lora(model, o, "adapter/");  // adapter_model.safetensors + adapter_config.json
///   nn::merge_lora(model);             // one matmul per layer again, for inference/export
///
/// Files follow Hugging Face PEFT's layout: tensors "base_model.model.<layer>.lora_A.weight"
/// [r, in] and "...lora_B.weight" [out, r]; adapter_config.json {"peft_type": "LORA",
/// "r", "lora_alpha", "target_modules"}.
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "framework/core/rng.h"
#include "framework/nn/module.h"

namespace skiff::nn {

struct LoraOptions {
  int64_t rank = 8;
  double alpha = 16;  ///< the update is scaled by alpha / rank
  /// Layer names to adapt: a Linear is adapted when the last part of its dotted name
  /// ("q_proj" in "model.layers.0.self_attn.q_proj") is one of these.
  std::vector<std::string> targets{"q_proj", "v_proj"};
};

/// Adds adapters to the targeted Linear layers of `root` and freezes every other
/// parameter. Returns the adapted layers' names.
/// \throws ValueError when no layer matches (naming the Linear layers there are) or
///   the options are invalid.
std::vector<std::string> add_lora(Module& root, const LoraOptions& options, Generator* gen = nullptr);

/// Merges / unmerges every adapter of `root` (Linear::merge_lora). \throws ValueError
/// when `root` has no adapter or one is in the wrong state.
void merge_lora(Module& root);
void unmerge_lora(Module& root);

/// The adapter tensors of `root` by their module names ("...q_proj.lora_A.weight").
std::map<std::string, Tensor> lora_state_dict(const Module& root);

/// Writes dir/adapter_model.safetensors and dir/adapter_config.json (atomically);
/// `base_model` (the adapted model's directory or name) is recorded as PEFT's
/// base_model_name_or_path. \throws ValueError when `root` has no adapter; IoError
/// when a file cannot be written.
void save_lora(const Module& root, const LoraOptions& options, const std::filesystem::path& dir,
               const std::string& base_model = "");

/// Reads dir/adapter_config.json.
/// \throws IoError / ConfigError naming the file.
LoraOptions load_lora_options(const std::filesystem::path& dir);

/// Copies dir/adapter_model.safetensors into the adapters of `root` (which add_lora
/// built with the same options). \throws ValueError naming the file and the tensors
/// missing, unexpected or of the wrong shape.
void load_lora(Module& root, const std::filesystem::path& dir);

}  // namespace skiff::nn
