#pragma once
/// \file transformer.h
/// Transformer encoder and decoder layers (PyTorch nn.TransformerEncoderLayer /
/// nn.TransformerDecoderLayer, batch_first=True).
///
/// Post-norm (default, the original paper):   x = norm(x + block(x))
/// Pre-norm (norm_first = true, GPT-2 style): x = x + block(norm(x))
/// The feed-forward block is linear2(dropout(act(linear1(x)))); every block
/// output passes through dropout before the residual add. Masks are those of
/// MultiheadAttention (attention.h).

#include <string>

#include "framework/nn/attention.h"
#include "framework/nn/linear.h"
#include "framework/nn/norm.h"

namespace skiff::nn {

/// Feed-forward activation.
enum class TransformerActivation { ReLU, GELU };

struct TransformerLayerOptions {
  int64_t dim_feedforward = 2048;
  double dropout = 0.1;
  TransformerActivation activation = TransformerActivation::ReLU;
  double layer_norm_eps = 1e-5;
  bool norm_first = false;
  /// Self-attention with rotary position embeddings of this base (MultiheadAttention::
  /// set_rotary); 0, the default: none (positions come from the caller's embeddings).
  double rotary_theta = 0;
  Generator* gen = nullptr;  ///< initialization and dropout draws (default generator when null)
};

/// Self-attention + feed-forward. src [B, T, d_model] -> same shape.
/// Children: self_attn, linear1, linear2, norm1, norm2, dropout, dropout1, dropout2.
class TransformerEncoderLayer : public Module {
 public:
  TransformerEncoderLayer(int64_t d_model, int64_t nhead, TransformerLayerOptions opt = {});
  std::string type_name() const override { return "TransformerEncoderLayer"; }
  /// src_mask: attn_mask for the self-attention; src_key_padding_mask: [B, T].
  Tensor forward(const Tensor& src, const Tensor& src_mask, const Tensor& src_key_padding_mask = Tensor());
  Tensor forward(const Tensor& src) override { return forward(src, Tensor(), Tensor()); }

  std::shared_ptr<MultiheadAttention> self_attn;
  std::shared_ptr<Linear> linear1, linear2;
  std::shared_ptr<LayerNorm> norm1, norm2;
  std::shared_ptr<Dropout> dropout, dropout1, dropout2;

 private:
  Tensor ff(const Tensor& x);
  TransformerLayerOptions opt_;
};

/// Self-attention + cross-attention over `memory` + feed-forward.
/// tgt [B, T, d_model], memory [B, S, d_model] -> [B, T, d_model].
/// Children: self_attn, multihead_attn, linear1, linear2, norm1..3, dropout, dropout1..3.
class TransformerDecoderLayer : public Module {
 public:
  TransformerDecoderLayer(int64_t d_model, int64_t nhead, TransformerLayerOptions opt = {});
  std::string type_name() const override { return "TransformerDecoderLayer"; }
  /// tgt_mask is usually causal_mask(T). With self_attn_cache, tgt holds only the
  /// new positions and the self-attention also sees the cached ones (incremental
  /// decoding); tgt_mask then spans [T_new, T_cached + T_new] and is not needed for one step.
  Tensor forward(const Tensor& tgt, const Tensor& memory, const Tensor& tgt_mask = Tensor(),
                 const Tensor& memory_mask = Tensor(), const Tensor& tgt_key_padding_mask = Tensor(),
                 const Tensor& memory_key_padding_mask = Tensor(), KVCache* self_attn_cache = nullptr);
  /// Not available: a decoder layer needs memory. \throws NotImplementedError.
  Tensor forward(const Tensor& x) override;

  std::shared_ptr<MultiheadAttention> self_attn, multihead_attn;
  std::shared_ptr<Linear> linear1, linear2;
  std::shared_ptr<LayerNorm> norm1, norm2, norm3;
  std::shared_ptr<Dropout> dropout, dropout1, dropout2, dropout3;

 private:
  Tensor ff(const Tensor& x);
  TransformerLayerOptions opt_;
};

}  // namespace skiff::nn
