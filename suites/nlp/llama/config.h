#pragma once
/// \file config.h
/// LlamaConfig: the hyper-parameters of a LLaMA-style decoder, read from a Hugging
/// Face `config.json` with model_type "llama" (other model types with a similar layout,
/// such as "mistral" or "qwen2", are refused today).
///
/// Keys read (HF names): hidden_size, intermediate_size, num_hidden_layers,
/// num_attention_heads, vocab_size (required); num_key_value_heads (default: heads),
/// head_dim (default hidden_size / heads), rms_norm_eps (1e-6), rope_theta (10000),
/// rope_scaling (null, or {"rope_type"|"type": "linear"|"dynamic"|"llama3", "factor",
/// llama3's low_freq_factor, high_freq_factor, original_max_position_embeddings}),
/// max_position_embeddings (2048), tie_word_embeddings (false), hidden_act ("silu"
/// only), bos_token_id / eos_token_id (int, list or null), attention_bias and
/// mlp_bias (false). Other keys are ignored.

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "framework/nn/rotary.h"

namespace skiff::nlp {

struct LlamaConfig {
  int64_t vocab_size = 0;
  int64_t hidden_size = 0;
  int64_t intermediate_size = 0;
  int64_t num_hidden_layers = 0;
  int64_t num_attention_heads = 0;
  int64_t num_key_value_heads = 0;  ///< GQA: each group of heads / kv_heads query heads shares one K/V head
  int64_t head_dim = 0;             ///< per-head size (hidden_size / heads unless the config says)
  double rms_norm_eps = 1e-6;
  double rope_theta = 10000.0;
  nn::RopeScaling rope_scaling;
  int64_t max_position_embeddings = 2048;
  bool tie_word_embeddings = false;
  bool attention_bias = false;
  bool mlp_bias = false;
  std::vector<int64_t> bos_token_ids;  ///< empty when the config has none
  std::vector<int64_t> eos_token_ids;

  /// Parses a config.json document; `source` (the file) is named in errors.
  /// \throws ConfigError naming `source` and the key: a missing required key, a value of
  ///   the wrong type or out of range, model_type other than "llama", hidden_act other
  ///   than "silu", an unknown rope_scaling type, heads not divisible by kv heads.
  static LlamaConfig from_json(const nlohmann::json& j, const std::string& source = "config.json");
  /// Reads and parses a config.json file. \throws IoError if unreadable, ConfigError as above.
  static LlamaConfig load(const std::filesystem::path& path);
  /// The config.json document of this config (HF's LlamaConfig keys; from_json reads it back).
  /// \throws NotImplementedError for rope scaling other than none (recipes train without it).
  nlohmann::json to_json() const;
};

/// Token ids of an int / list / null JSON value ("eos_token_id": 2 or [128001, 128009]).
/// \throws ConfigError naming `source` and `key` for any other value.
std::vector<int64_t> token_ids_from_json(const nlohmann::json& v, const std::string& source, const std::string& key);

}  // namespace skiff::nlp
