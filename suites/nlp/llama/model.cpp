#include "suites/nlp/llama/model.h"

#include <cmath>
#include <limits>

#include "framework/nn/rotary.h"
#include "framework/ops/ops.h"

namespace skiff::nlp {
namespace {

// Mask values as 0/1 bytes, row-major [B, S].
std::vector<uint8_t> mask_bits(const Tensor& mask) {
  std::vector<double> v = mask.to_vector<double>();
  std::vector<uint8_t> bits(v.size());
  for (size_t i = 0; i < v.size(); ++i) bits[i] = v[i] != 0;
  return bits;
}

}  // namespace

Tensor llama_attention_bias(int64_t t, int64_t past, const Tensor& attention_mask) {
  int64_t s = past + t;
  int64_t b = attention_mask.defined() ? attention_mask.size(0) : 1;
  std::vector<uint8_t> keep;
  if (attention_mask.defined()) keep = mask_bits(attention_mask);
  Tensor bias = empty({b, 1, 1, t, s});
  float* p = bias.data<float>();
  const float lowest = std::numeric_limits<float>::lowest();
  for (int64_t r = 0; r < b; ++r)
    for (int64_t i = 0; i < t; ++i)
      for (int64_t j = 0; j < s; ++j)
        p[(r * t + i) * s + j] = (j <= past + i && (keep.empty() || keep[size_t(r * s + j)])) ? 0.0f : lowest;
  return bias;
}

Tensor llama_positions(int64_t b, int64_t t, int64_t past, const Tensor& attention_mask) {
  Tensor pos = empty({b, t}, DType::Int64);
  int64_t* p = pos.data<int64_t>();
  if (!attention_mask.defined()) {
    for (int64_t r = 0; r < b; ++r)
      for (int64_t i = 0; i < t; ++i) p[r * t + i] = past + i;
    return pos;
  }
  int64_t s = attention_mask.size(1);
  std::vector<uint8_t> keep = mask_bits(attention_mask);
  for (int64_t r = 0; r < b; ++r) {
    int64_t count = 0;
    for (int64_t j = 0; j < s; ++j) {
      count += keep[size_t(r * s + j)];
      if (j >= s - t) p[r * t + (j - (s - t))] = keep[size_t(r * s + j)] ? count - 1 : 1;
    }
  }
  return pos;
}

LlamaAttention::LlamaAttention(const LlamaConfig& c)
    : heads_(c.num_attention_heads), kv_heads_(c.num_key_value_heads), head_dim_(c.head_dim) {
  SKIFF_CHECK(heads_ > 0 && kv_heads_ > 0 && heads_ % kv_heads_ == 0,
              "LlamaAttention: num_key_value_heads={} must divide num_attention_heads={}", kv_heads_, heads_);
  int64_t e = c.hidden_size;
  q_proj = register_module("q_proj", std::make_shared<nn::Linear>(e, heads_ * head_dim_, c.attention_bias));
  k_proj = register_module("k_proj", std::make_shared<nn::Linear>(e, kv_heads_ * head_dim_, c.attention_bias));
  v_proj = register_module("v_proj", std::make_shared<nn::Linear>(e, kv_heads_ * head_dim_, c.attention_bias));
  o_proj = register_module("o_proj", std::make_shared<nn::Linear>(heads_ * head_dim_, e, c.attention_bias));
}

Tensor LlamaAttention::forward(const Tensor& x, const Tensor& cos, const Tensor& sin, const Tensor& bias,
                               nn::KVCache* cache) {
  int64_t b = x.size(0), t = x.size(1), d = head_dim_, g = heads_ / kv_heads_;
  auto heads = [&](const Tensor& y, int64_t h) { return permute(reshape(y, {b, t, h, d}), {0, 2, 1, 3}); };
  Tensor q = nn::apply_rotary(heads((*q_proj)(x), heads_), cos, sin);  // [B, H, T, D]
  Tensor k = nn::apply_rotary(heads((*k_proj)(x), kv_heads_), cos, sin);  // [B, KV, T, D]
  Tensor v = heads((*v_proj)(x), kv_heads_);
  if (cache) {
    cache->append(k, v, "LlamaAttention");
    k = cache->k;
    v = cache->v;
  }
  int64_t s = k.size(2);
  // Grouped-query attention without copying K/V: the G query heads of one K/V head are
  // stacked along the time axis, [B, KV, G*T, D], so one matmul serves the group.
  Tensor qg = reshape(q * (1.0 / std::sqrt(double(d))), {b, kv_heads_, g * t, d});
  Tensor scores = reshape(matmul(qg, transpose(k, -2, -1)), {b, kv_heads_, g, t, s});
  if (bias.defined()) scores = scores + bias;
  Tensor p = reshape(softmax(scores, -1), {b, kv_heads_, g * t, s});
  Tensor o = reshape(matmul(p, v), {b, heads_, t, d});  // [B, H, T, D]
  return (*o_proj)(reshape(permute(o, {0, 2, 1, 3}), {b, t, heads_ * d}));
}

LlamaMlp::LlamaMlp(const LlamaConfig& c) {
  gate_proj = register_module("gate_proj", std::make_shared<nn::Linear>(c.hidden_size, c.intermediate_size, c.mlp_bias));
  up_proj = register_module("up_proj", std::make_shared<nn::Linear>(c.hidden_size, c.intermediate_size, c.mlp_bias));
  down_proj = register_module("down_proj", std::make_shared<nn::Linear>(c.intermediate_size, c.hidden_size, c.mlp_bias));
}

Tensor LlamaMlp::forward(const Tensor& x) { return (*down_proj)(silu((*gate_proj)(x)) * (*up_proj)(x)); }

LlamaDecoderLayer::LlamaDecoderLayer(const LlamaConfig& c) {
  self_attn = register_module("self_attn", std::make_shared<LlamaAttention>(c));
  mlp = register_module("mlp", std::make_shared<LlamaMlp>(c));
  input_layernorm = register_module("input_layernorm", std::make_shared<nn::RMSNorm>(c.hidden_size, c.rms_norm_eps));
  post_attention_layernorm =
      register_module("post_attention_layernorm", std::make_shared<nn::RMSNorm>(c.hidden_size, c.rms_norm_eps));
}

Tensor LlamaDecoderLayer::forward(const Tensor& x, const Tensor& cos, const Tensor& sin, const Tensor& bias,
                                  nn::KVCache* cache) {
  Tensor h = x + self_attn->forward((*input_layernorm)(x), cos, sin, bias, cache);
  return h + (*mlp)((*post_attention_layernorm)(h));
}

LlamaModel::LlamaModel(const LlamaConfig& c) : config_(c) {
  embed_tokens = register_module("embed_tokens", std::make_shared<nn::Embedding>(c.vocab_size, c.hidden_size));
  layers = register_module("layers", std::make_shared<nn::ModuleList>());
  for (int64_t i = 0; i < c.num_hidden_layers; ++i) layers->push_back(std::make_shared<LlamaDecoderLayer>(c));
  norm = register_module("norm", std::make_shared<nn::RMSNorm>(c.hidden_size, c.rms_norm_eps));
}

Tensor LlamaModel::forward(const Tensor& ids, const Tensor& attention_mask, LlamaCache* cache,
                           const Tensor& position_ids) {
  SKIFF_CHECK_SHAPE(ids.dim() == 2 && ids.size(1) > 0, "LlamaModel: expected input_ids [B, T], got {}", ids.shape());
  int64_t b = ids.size(0), t = ids.size(1), n = config_.num_hidden_layers;
  int64_t past = cache ? cache->length() : 0;
  if (cache && past > 0)
    SKIFF_CHECK_SHAPE(cache->layers[0].k.size(0) == b, "LlamaModel: the cache holds batch {}, input_ids is {}",
                      cache->layers[0].k.size(0), ids.shape());
  if (attention_mask.defined())
    SKIFF_CHECK_SHAPE(attention_mask.dim() == 2 && attention_mask.size(0) == b && attention_mask.size(1) == past + t,
                      "LlamaModel: expected attention_mask [B={}, cached + new = {}], got {}", b, past + t,
                      attention_mask.shape());
  Tensor pos = position_ids;
  if (pos.defined()) {
    SKIFF_CHECK_SHAPE(pos.shape() == Shape({b, t}), "LlamaModel: expected position_ids [{}, {}], got {}", b, t,
                      pos.shape());
  } else {
    pos = llama_positions(b, t, past, attention_mask);
  }
  // Dynamic NTK scaling depends on the longest position seen in this call (as HF).
  int64_t seq_len = 0;
  if (config_.rope_scaling.type == nn::RopeScaling::Type::Dynamic)
    seq_len = amax(pos).item<int64_t>() + 1;
  auto inv_freq = nn::rope_inv_frequencies(config_.head_dim, config_.rope_theta, config_.rope_scaling, seq_len,
                                           config_.max_position_embeddings);
  auto [cos, sin] = nn::rope_cos_sin(pos, inv_freq);
  // A single new token without padding sees every cached key: no mask needed.
  Tensor bias;
  if (t > 1 || attention_mask.defined()) bias = llama_attention_bias(t, past, attention_mask);
  if (cache && cache->layers.empty()) cache->layers.resize(size_t(n));
  Tensor x = (*embed_tokens)(ids);
  for (int64_t i = 0; i < n; ++i)
    x = layers->at<LlamaDecoderLayer>(i)->forward(x, cos, sin, bias, cache ? &cache->layers[size_t(i)] : nullptr);
  return (*norm)(x);
}

LlamaForCausalLM::LlamaForCausalLM(const LlamaConfig& c) : config_(c) {
  SKIFF_CHECK(c.vocab_size > 0 && c.hidden_size > 0 && c.num_hidden_layers > 0 && c.head_dim > 0,
              "LlamaForCausalLM: incomplete config (vocab_size={}, hidden_size={}, layers={}, head_dim={})",
              c.vocab_size, c.hidden_size, c.num_hidden_layers, c.head_dim);
  model = register_module("model", std::make_shared<LlamaModel>(c));
  if (!c.tie_word_embeddings)
    lm_head = register_module("lm_head", std::make_shared<nn::Linear>(c.hidden_size, c.vocab_size, false));
}

Tensor LlamaForCausalLM::forward(const Tensor& ids, const Tensor& attention_mask, LlamaCache* cache,
                                 const Tensor& position_ids, bool last_only) {
  Tensor h = model->forward(ids, attention_mask, cache, position_ids);
  if (last_only) h = narrow(h, 1, h.size(1) - 1, 1);
  return lm_head ? (*lm_head)(h) : linear(h, model->embed_tokens->weight);
}

}  // namespace skiff::nlp
