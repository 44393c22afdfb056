#pragma once
/// \file model.h
/// A LLaMA-style decoder-only transformer (Touvron et al. 2023) built from framework
/// modules and ops, so it is trainable with autograd. Module tree and parameter names
/// are Hugging Face's LlamaForCausalLM, so its state_dict() keys are the checkpoint's:
///
///   model.embed_tokens.weight                          [V, E]
///   model.layers.N.input_layernorm.weight              [E]
///   model.layers.N.self_attn.{q,k,v,o}_proj.weight     [H*D, E], [KV*D, E], [KV*D, E], [E, H*D]
///                                (.bias with attention_bias)
///   model.layers.N.post_attention_layernorm.weight     [E]
///   model.layers.N.mlp.{gate,up,down}_proj.weight      [I, E], [I, E], [E, I]  (.bias with mlp_bias)
///   model.norm.weight                                  [E]
///   lm_head.weight                                     [V, E]  (absent with tie_word_embeddings)
///
/// Each layer: h = x + o_proj(attn(rope(q), rope(k), v)) on input_layernorm(x), then
/// h + down_proj(silu(gate_proj(y)) * up_proj(y)) on y = post_attention_layernorm(h).
/// Attention is causal, grouped-query (query head h reads K/V head h / (H / KV), as HF's
/// repeat_kv), scaled by 1/sqrt(D), with rotary embeddings in HF's rotate_half convention.
///
/// Padding. attention_mask [B, S] (S = cached + new tokens; nonzero = real token) hides
/// pad keys; positions then count real tokens only (cumsum(mask) - 1, HF generate's
/// rule), so a left-padded row gives the same logits at its real tokens as the row
/// alone. A query at a pad position may have every key masked: masked scores get the
/// lowest float rather than -inf, so its logits are finite (and meaningless), never NaN.

#include <memory>
#include <vector>

#include "framework/nn/attention.h"
#include "framework/nn/containers.h"
#include "framework/nn/embedding.h"
#include "framework/nn/linear.h"
#include "framework/nn/norm.h"
#include "suites/nlp/llama/config.h"

namespace skiff::nlp {

/// Keys and values of every layer, for incremental decoding: feeding a sequence in
/// chunks with a cache gives the logits of one call on the whole sequence.
struct LlamaCache {
  std::vector<nn::KVCache> layers;  ///< per layer; k/v [B, KV, T_cached, D]
  /// Cached time steps (0 when empty).
  int64_t length() const { return layers.empty() ? 0 : layers[0].length(); }
  void reset() { layers.clear(); }
};

/// Additive attention mask [B|1, 1, 1, T, S] for T new queries after `past` cached steps:
/// 0 where key j <= past + i and the key is a real token, the lowest float elsewhere.
/// attention_mask [B, S] (any dtype, nonzero = real token) may be undefined (no padding).
Tensor llama_attention_bias(int64_t t, int64_t past, const Tensor& attention_mask);

/// Positions [B, T] of T new tokens after `past` cached ones: past + i without a mask;
/// with attention_mask [B, past + T], cumsum(mask) - 1 over the last T columns, and 1 at
/// pad tokens (never read).
Tensor llama_positions(int64_t b, int64_t t, int64_t past, const Tensor& attention_mask);

class LlamaAttention : public nn::Module {
 public:
  explicit LlamaAttention(const LlamaConfig& c);
  std::string type_name() const override { return "LlamaAttention"; }
  /// x [B, T, E]; cos/sin [B, T, D]; bias from llama_attention_bias() or undefined (no mask);
  /// cache may be null. -> [B, T, E].
  Tensor forward(const Tensor& x, const Tensor& cos, const Tensor& sin, const Tensor& bias, nn::KVCache* cache);

  std::shared_ptr<nn::Linear> q_proj, k_proj, v_proj, o_proj;

 private:
  int64_t heads_, kv_heads_, head_dim_;
};

class LlamaMlp : public nn::Module {
 public:
  explicit LlamaMlp(const LlamaConfig& c);
  std::string type_name() const override { return "LlamaMLP"; }
  /// down_proj(silu(gate_proj(x)) * up_proj(x)). x [*, E] -> [*, E].
  Tensor forward(const Tensor& x) override;

  std::shared_ptr<nn::Linear> gate_proj, up_proj, down_proj;
};

class LlamaDecoderLayer : public nn::Module {
 public:
  explicit LlamaDecoderLayer(const LlamaConfig& c);
  std::string type_name() const override { return "LlamaDecoderLayer"; }
  Tensor forward(const Tensor& x, const Tensor& cos, const Tensor& sin, const Tensor& bias, nn::KVCache* cache);

  std::shared_ptr<LlamaAttention> self_attn;
  std::shared_ptr<LlamaMlp> mlp;
  std::shared_ptr<nn::RMSNorm> input_layernorm, post_attention_layernorm;
};

/// The stack without the head ("model." in HF names).
class LlamaModel : public nn::Module {
 public:
  explicit LlamaModel(const LlamaConfig& c);
  std::string type_name() const override { return "LlamaModel"; }
  /// Final hidden states [B, T, E] of input_ids [B, T]; see LlamaForCausalLM::forward.
  Tensor forward(const Tensor& input_ids, const Tensor& attention_mask, LlamaCache* cache,
                 const Tensor& position_ids);

  std::shared_ptr<nn::Embedding> embed_tokens;
  std::shared_ptr<nn::ModuleList> layers;
  std::shared_ptr<nn::RMSNorm> norm;

 private:
  LlamaConfig config_;
};

/// The decoder with its language-model head.
class LlamaForCausalLM : public nn::Module {
 public:
  /// Builds the modules with placeholder initial values (load weights with load_llama()).
  /// \throws ValueError for an inconsistent config.
  explicit LlamaForCausalLM(const LlamaConfig& c);
  std::string type_name() const override { return "LlamaForCausalLM"; }

  /// Logits [B, T, V] (float32) for input_ids [B, T] (integers in [0, V)).
  ///  - attention_mask [B, past + T] (nonzero = real token) or undefined (all real);
  ///  - cache: when given, attention also covers the cached steps and the new keys and
  ///    values are appended to it (the cache's batch must match);
  ///  - position_ids [B, T] override the positions derived from the mask;
  ///  - last_only: logits of the last position only, [B, 1, V] (generation).
  /// \throws ShapeError naming the argument on inconsistent shapes; IndexError for an
  ///   id outside the vocabulary.
  Tensor forward(const Tensor& input_ids, const Tensor& attention_mask, LlamaCache* cache = nullptr,
                 const Tensor& position_ids = Tensor(), bool last_only = false);
  /// forward(input_ids) with no mask or cache.
  Tensor forward(const Tensor& input_ids) override { return forward(input_ids, Tensor()); }

  const LlamaConfig& config() const { return config_; }

  std::shared_ptr<LlamaModel> model;
  std::shared_ptr<nn::Linear> lm_head;  ///< null with tie_word_embeddings (the head is embed_tokens.weight)

 private:
  LlamaConfig config_;
};

}  // namespace skiff::nlp
