#include "suites/nlp/encoder/heads.h"

#include "framework/core/error.h"
#include "framework/ops/ops.h"

namespace skiff::nlp {

MlmHead::MlmHead(const EncoderConfig& c) {
  transform = register_module("transform", std::make_shared<nn::Linear>(c.hidden_size, c.hidden_size));
  norm = register_module("norm", std::make_shared<nn::LayerNorm>(std::vector<int64_t>{c.hidden_size}, c.layer_norm_eps));
  bias = register_parameter("bias", zeros({c.vocab_size()}));
}

Tensor MlmHead::forward(const Tensor& hidden, const Tensor& embedding) {
  return linear((*norm)(gelu((*transform)(hidden))), embedding, bias);
}

EncoderForMaskedLM::EncoderForMaskedLM(const EncoderConfig& c) {
  encoder = register_module("encoder", std::make_shared<TextEncoder>(c));
  mlm = register_module("mlm", std::make_shared<MlmHead>(c));
}

Tensor EncoderForMaskedLM::forward(const Tensor& ids, const Tensor& pad, const Tensor& positions) {
  Tensor h = encoder->forward(ids, pad);
  Tensor flat = reshape(h, {h.size(0) * h.size(1), h.size(2)});
  return mlm->forward(index_select(flat, 0, positions), encoder->tok_embed->weight);
}

EncoderForSequenceClassification::EncoderForSequenceClassification(const EncoderConfig& c) : config_(c) {
  SKIFF_CHECK(c.labels.size() >= 2, "EncoderForSequenceClassification: needs at least two labels, got {}",
              c.labels.size());
  encoder = register_module("encoder", std::make_shared<TextEncoder>(c));
  if (c.pooling == "cls") pooler = register_module("pooler", std::make_shared<nn::Linear>(c.hidden_size, c.hidden_size));
  dropout = register_module("dropout", std::make_shared<nn::Dropout>(c.dropout));
  classifier = register_module("classifier",
                               std::make_shared<nn::Linear>(c.hidden_size, int64_t(c.labels.size())));
}

Tensor EncoderForSequenceClassification::forward(const Tensor& ids, const Tensor& pad) {
  Tensor h = encoder->forward(ids, pad);  // [B, T, H]
  Tensor pooled;
  if (pooler) {
    pooled = tanh((*pooler)(select(h, 1, 0)));
  } else {
    // Mean over real tokens: weights 1/count on real tokens, 0 on padding.
    Tensor real = pad.defined() ? skiff::to(logical_not(pad), h.dtype()) : ones({h.size(0), h.size(1)});
    Tensor count = sum(real, {1}, true);
    pooled = sum(h * unsqueeze(real, 2), {1}) / count;
  }
  return (*classifier)((*dropout)(pooled));
}

Tensor EncoderForSequenceClassification::forward(const Tensor& ids) {
  return forward(ids, padding_mask(ids, config_.pad_id()));
}

}  // namespace skiff::nlp
