#pragma once
/// \file loader.h
/// Loading a LLaMA model from a Hugging Face model directory:
///
///   config.json                          LlamaConfig
///   model.safetensors                    all weights, or
///   model.safetensors.index.json         {"weight_map": {tensor name: shard file}} + the shards
///   generation_config.json (optional)    extra eos ids (read by the generation code)
///
/// Tensors are matched to the module's parameters by their HF names (model.h). F32, F16
/// and BF16 tensors are converted to float32; any other dtype is an error. Errors name
/// what is wrong and where:
///  - a missing tensor: its name and the file(s) searched;
///  - a shape mismatch: tensor, file, expected and found shapes;
///  - unexpected tensors (not parameters of the model): an error listing them (the first
///    ten and a count), unless LlamaLoadOptions::allow_unexpected, which turns it into a
///    warning on stderr. Known leftovers are skipped silently: `*.rotary_emb.inv_freq`
///    (old HF checkpoints) and `lm_head.weight` in a tied model.
///  - a shard file named in the index but absent, an index without weight_map: IoError.

#include <filesystem>
#include <memory>
#include <string>

#include "suites/nlp/llama/model.h"

namespace skiff::nlp {

struct LlamaLoadOptions {
  bool allow_unexpected = false;  ///< unexpected tensors: warning instead of error
  bool mmap = true;               ///< map the files instead of reading them
};

/// Copies the weights of `dir` into `model` (built from the same config).
/// \throws IoError for missing/unreadable files, ValueError / ShapeError / TypeError as above.
void load_llama_weights(LlamaForCausalLM& model, const std::filesystem::path& dir,
                        const LlamaLoadOptions& options = {});

/// Reads dir/config.json, builds the model and loads its weights; the model is in eval mode.
/// \throws as LlamaConfig::load and load_llama_weights.
std::shared_ptr<LlamaForCausalLM> load_llama(const std::filesystem::path& dir, const LlamaLoadOptions& options = {});

}  // namespace skiff::nlp
