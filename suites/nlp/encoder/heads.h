#pragma once
/// \file heads.h
/// The two tasks on top of TextEncoder:
///
/// EncoderForMaskedLM: BERT's MLM head, transform = LayerNorm(gelu(Linear(h))), then the
/// logits transform @ tok_embed.weight^T + bias: the output projection is tied to the
/// token embedding (no second [V, H] matrix). Logits are computed only at the positions
/// asked for, the ~15% that carry a label, not at all B*T.
///   names: encoder.*, mlm.transform.{weight,bias}, mlm.norm.{weight,bias}, mlm.bias [V]
///
/// EncoderForSequenceClassification: pooled [CLS] (tanh(Linear(h[:, 0])), BERT's pooler)
/// or the mean of the real tokens' states, dropout, then Linear(H, labels).
///   names: encoder.*, pooler.{weight,bias} (cls pooling only), classifier.{weight,bias}

#include <memory>

#include "suites/nlp/encoder/encoder.h"

namespace skiff::nlp {

class MlmHead : public nn::Module {
 public:
  explicit MlmHead(const EncoderConfig& c);
  std::string type_name() const override { return "MlmHead"; }
  /// hidden [N, H] at the labelled positions, embedding [V, H] -> logits [N, V].
  Tensor forward(const Tensor& hidden, const Tensor& embedding);

  std::shared_ptr<nn::Linear> transform;
  std::shared_ptr<nn::LayerNorm> norm;
  Tensor bias;
};

class EncoderForMaskedLM : public nn::Module {
 public:
  explicit EncoderForMaskedLM(const EncoderConfig& c);
  std::string type_name() const override { return "EncoderForMaskedLM"; }
  /// Logits [N, V] at `positions` (int64 [N], flat indices into B*T) of ids [B, T].
  Tensor forward(const Tensor& ids, const Tensor& pad, const Tensor& positions);

  std::shared_ptr<TextEncoder> encoder;
  std::shared_ptr<MlmHead> mlm;
};

class EncoderForSequenceClassification : public nn::Module {
 public:
  /// \throws ValueError when c.labels has fewer than two classes.
  explicit EncoderForSequenceClassification(const EncoderConfig& c);
  std::string type_name() const override { return "EncoderForSequenceClassification"; }
  /// ids [B, T] starting with [CLS], pad [B, T] (true = padding) -> logits [B, labels].
  Tensor forward(const Tensor& ids, const Tensor& pad);
  Tensor forward(const Tensor& ids) override;

  std::shared_ptr<TextEncoder> encoder;
  std::shared_ptr<nn::Linear> pooler, classifier;
  std::shared_ptr<nn::Dropout> dropout;

 private:
  EncoderConfig config_;
};

}  // namespace skiff::nlp
