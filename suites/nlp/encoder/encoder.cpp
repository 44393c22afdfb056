#include "suites/nlp/encoder/encoder.h"

#include "framework/core/error.h"
#include "framework/nn/init.h"
#include "framework/nn/transformer.h"
#include "framework/ops/ops.h"

namespace skiff::nlp {

TextEncoder::TextEncoder(const EncoderConfig& c) : config_(c) {
  c.check("TextEncoder");
  const int64_t h = c.hidden_size;
  tok_embed = register_module("tok_embed", std::make_shared<nn::Embedding>(c.vocab_size(), h));
  nn::init::normal_(tok_embed->weight, 0.0, 0.02);
  const bool rotary = c.positions == "rotary";
  if (!rotary) {
    pos_embed = register_module("pos_embed", std::make_shared<nn::Embedding>(c.max_length, h));
    nn::init::normal_(pos_embed->weight, 0.0, 0.02);
  }
  embed_norm = register_module("embed_norm", std::make_shared<nn::LayerNorm>(std::vector<int64_t>{h}, c.layer_norm_eps));
  embed_dropout = register_module("embed_dropout", std::make_shared<nn::Dropout>(c.dropout));
  layers = register_module("layers", std::make_shared<nn::ModuleList>());
  nn::TransformerLayerOptions o;
  o.dim_feedforward = c.intermediate_size;
  o.dropout = c.dropout;
  o.activation = nn::TransformerActivation::GELU;
  o.layer_norm_eps = c.layer_norm_eps;
  o.norm_first = c.pre_norm;
  o.rotary_theta = rotary ? c.rope_theta : 0.0;
  for (int64_t i = 0; i < c.num_layers; ++i)
    layers->push_back(std::make_shared<nn::TransformerEncoderLayer>(h, c.num_heads, o));
  if (c.pre_norm)
    final_norm = register_module("final_norm", std::make_shared<nn::LayerNorm>(std::vector<int64_t>{h}, c.layer_norm_eps));
}

Tensor TextEncoder::forward(const Tensor& ids, const Tensor& pad) {
  SKIFF_CHECK_SHAPE(ids.dim() == 2 && ids.size(1) > 0, "TextEncoder: expected ids [B, T], got {}", ids.shape());
  const int64_t t = ids.size(1);
  SKIFF_CHECK_SHAPE(t <= config_.max_length, "TextEncoder: {} tokens exceed max_length {}", t, config_.max_length);
  if (pad.defined())
    SKIFF_CHECK_SHAPE(pad.shape() == ids.shape(), "TextEncoder: pad mask {} does not match ids {}", pad.shape(),
                      ids.shape());
  Tensor x = (*tok_embed)(ids);
  if (pos_embed) x = x + reshape((*pos_embed)(arange(0, t, 1, DType::Int64)), {1, t, config_.hidden_size});
  x = (*embed_dropout)((*embed_norm)(x));
  for (int64_t i = 0; i < config_.num_layers; ++i)
    x = layers->at<nn::TransformerEncoderLayer>(i)->forward(x, Tensor(), pad);
  return final_norm ? (*final_norm)(x) : x;
}

Tensor padding_mask(const Tensor& ids, int64_t pad_id) {
  Tensor c = contiguous(ids);
  Tensor mask = empty(c.shape(), DType::Bool);
  const int64_t* p = c.data<int64_t>();
  bool* m = mask.data<bool>();
  for (int64_t i = 0; i < c.numel(); ++i) m[i] = p[i] == pad_id;
  return mask;
}

}  // namespace skiff::nlp
