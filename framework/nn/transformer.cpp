#include "framework/nn/transformer.h"

#include "framework/ops/ops.h"

namespace skiff::nn {

namespace {
Tensor activate(TransformerActivation a, const Tensor& x) {
  return a == TransformerActivation::GELU ? gelu(x) : relu(x);
}
}  // namespace

TransformerEncoderLayer::TransformerEncoderLayer(int64_t d, int64_t nhead, TransformerLayerOptions opt) : opt_(opt) {
  self_attn = register_module("self_attn", std::make_shared<MultiheadAttention>(d, nhead, opt.dropout, true, -1, -1,
                                                                                opt.gen));
  self_attn->set_rotary(opt.rotary_theta);
  linear1 = register_module("linear1", std::make_shared<Linear>(d, opt.dim_feedforward, true, opt.gen));
  dropout = register_module("dropout", std::make_shared<Dropout>(opt.dropout, opt.gen));
  linear2 = register_module("linear2", std::make_shared<Linear>(opt.dim_feedforward, d, true, opt.gen));
  norm1 = register_module("norm1", std::make_shared<LayerNorm>(std::vector<int64_t>{d}, opt.layer_norm_eps));
  norm2 = register_module("norm2", std::make_shared<LayerNorm>(std::vector<int64_t>{d}, opt.layer_norm_eps));
  dropout1 = register_module("dropout1", std::make_shared<Dropout>(opt.dropout, opt.gen));
  dropout2 = register_module("dropout2", std::make_shared<Dropout>(opt.dropout, opt.gen));
}

Tensor TransformerEncoderLayer::ff(const Tensor& x) {
  return (*dropout2)((*linear2)((*dropout)(activate(opt_.activation, (*linear1)(x)))));
}

Tensor TransformerEncoderLayer::forward(const Tensor& src, const Tensor& mask, const Tensor& kpm) {
  auto sa = [&](const Tensor& x) { return (*dropout1)(self_attn->attend(x, x, x, kpm, mask, nullptr, false).output); };
  Tensor x = src;
  if (opt_.norm_first) {
    x = x + sa((*norm1)(x));
    x = x + ff((*norm2)(x));
  } else {
    x = (*norm1)(x + sa(x));
    x = (*norm2)(x + ff(x));
  }
  return x;
}

TransformerDecoderLayer::TransformerDecoderLayer(int64_t d, int64_t nhead, TransformerLayerOptions opt) : opt_(opt) {
  self_attn = register_module("self_attn", std::make_shared<MultiheadAttention>(d, nhead, opt.dropout, true, -1, -1,
                                                                                opt.gen));
  self_attn->set_rotary(opt.rotary_theta);  // the cross-attention's keys are the memory's: no rotary there
  multihead_attn = register_module(
      "multihead_attn", std::make_shared<MultiheadAttention>(d, nhead, opt.dropout, true, -1, -1, opt.gen));
  linear1 = register_module("linear1", std::make_shared<Linear>(d, opt.dim_feedforward, true, opt.gen));
  dropout = register_module("dropout", std::make_shared<Dropout>(opt.dropout, opt.gen));
  linear2 = register_module("linear2", std::make_shared<Linear>(opt.dim_feedforward, d, true, opt.gen));
  norm1 = register_module("norm1", std::make_shared<LayerNorm>(std::vector<int64_t>{d}, opt.layer_norm_eps));
  norm2 = register_module("norm2", std::make_shared<LayerNorm>(std::vector<int64_t>{d}, opt.layer_norm_eps));
  norm3 = register_module("norm3", std::make_shared<LayerNorm>(std::vector<int64_t>{d}, opt.layer_norm_eps));
  dropout1 = register_module("dropout1", std::make_shared<Dropout>(opt.dropout, opt.gen));
  dropout2 = register_module("dropout2", std::make_shared<Dropout>(opt.dropout, opt.gen));
  dropout3 = register_module("dropout3", std::make_shared<Dropout>(opt.dropout, opt.gen));
}

Tensor TransformerDecoderLayer::ff(const Tensor& x) {
  return (*dropout3)((*linear2)((*dropout)(activate(opt_.activation, (*linear1)(x)))));
}

Tensor TransformerDecoderLayer::forward(const Tensor& tgt, const Tensor& memory, const Tensor& tgt_mask,
                                        const Tensor& memory_mask, const Tensor& tgt_kpm, const Tensor& memory_kpm,
                                        KVCache* cache) {
  auto sa = [&](const Tensor& x) {
    return (*dropout1)(self_attn->attend(x, x, x, tgt_kpm, tgt_mask, cache, false).output);
  };
  auto ca = [&](const Tensor& x) {
    return (*dropout2)(multihead_attn->attend(x, memory, memory, memory_kpm, memory_mask, nullptr, false).output);
  };
  Tensor x = tgt;
  if (opt_.norm_first) {
    x = x + sa((*norm1)(x));
    x = x + ca((*norm2)(x));
    x = x + ff((*norm3)(x));
  } else {
    x = (*norm1)(x + sa(x));
    x = (*norm2)(x + ca(x));
    x = (*norm3)(x + ff(x));
  }
  return x;
}

Tensor TransformerDecoderLayer::forward(const Tensor& x) {
  (void)x;
  SKIFF_THROW(NotImplementedError, "TransformerDecoderLayer: forward needs (tgt, memory), not a single tensor");
}

}  // namespace skiff::nn
