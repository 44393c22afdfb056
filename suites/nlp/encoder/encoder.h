#pragma once
/// \file encoder.h
/// The BERT-style encoder stack: token embeddings plus learned position embeddings (or
/// rotary positions inside attention, EncoderConfig::positions), LayerNorm and dropout,
/// then N nn::TransformerEncoderLayer (multi-head self-attention with a padding mask, GELU
/// feed-forward), pre-norm or post-norm (EncoderConfig::pre_norm); pre-norm adds a final
/// LayerNorm, as pre-norm transformers need one before any head.
///
/// State-dict names (what the classifier loads from an MLM checkpoint):
///   encoder.tok_embed.weight [V, H], encoder.pos_embed.weight [L, H] (learned positions),
///   encoder.embed_norm.{weight,bias}, encoder.layers.N.<TransformerEncoderLayer's>,
///   encoder.final_norm.{weight,bias} (pre-norm only).

#include <memory>

#include "framework/nn/containers.h"
#include "framework/nn/embedding.h"
#include "framework/nn/linear.h"
#include "framework/nn/norm.h"
#include "suites/nlp/encoder/encoder_config.h"

namespace skiff::nlp {

class TextEncoder : public nn::Module {
 public:
  /// Embeddings start N(0, 0.02) (BERT's initializer): the MLM head's tied output
  /// projection then gives logits of unit scale.
  explicit TextEncoder(const EncoderConfig& c);
  std::string type_name() const override { return "TextEncoder"; }
  /// ids [B, T] (int64, T <= max_length), pad [B, T] bool (true = padding: no query
  /// attends to it) or undefined (no padding) -> hidden states [B, T, H].
  /// \throws ShapeError naming the argument for inconsistent shapes.
  Tensor forward(const Tensor& ids, const Tensor& pad);
  Tensor forward(const Tensor& ids) override { return forward(ids, Tensor()); }

  const EncoderConfig& config() const { return config_; }

  std::shared_ptr<nn::Embedding> tok_embed, pos_embed;
  std::shared_ptr<nn::LayerNorm> embed_norm, final_norm;
  std::shared_ptr<nn::Dropout> embed_dropout;
  std::shared_ptr<nn::ModuleList> layers;

 private:
  EncoderConfig config_;
};

/// The padding mask of `ids` [B, T]: true where the id is config.pad_id().
Tensor padding_mask(const Tensor& ids, int64_t pad_id);

}  // namespace skiff::nlp
