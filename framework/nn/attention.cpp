#include "framework/nn/attention.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "framework/nn/init.h"
#include "framework/nn/rotary.h"
#include "framework/ops/ops.h"

namespace skiff::nn {

void KVCache::append(const Tensor& k_new, const Tensor& v_new, const char* who) {
  SKIFF_CHECK_SHAPE(k_new.dim() == 4 && v_new.dim() == 4 && k_new.size(2) == v_new.size(2),
                    "{}: expected new keys and values [B, H, T, D], got {} and {}", who, k_new.shape(), v_new.shape());
  if (k.defined()) {
    SKIFF_CHECK_SHAPE(k.size(0) == k_new.size(0) && k.size(1) == k_new.size(1) && k.size(3) == k_new.size(3) &&
                          v.size(3) == v_new.size(3),
                      "{}: KV cache holds {} but the new keys are {}", who, k.shape(), k_new.shape());
  }
  if (k_new.requires_grad() || v_new.requires_grad() || (k.defined() && (k.requires_grad() || v.requires_grad()))) {
    k = k.defined() ? concat({k, k_new}, 2) : k_new;
    v = v.defined() ? concat({v, v_new}, 2) : v_new;
    k_buf_ = v_buf_ = Tensor();
    return;
  }
  const int64_t len = length(), t = k_new.size(2), need = len + t;
  if (!k_buf_.defined() || k_buf_.size(2) < need) {
    // Double the capacity (at least 16 steps), keeping what is cached.
    const int64_t capacity = std::max<int64_t>({need, 2 * (k_buf_.defined() ? k_buf_.size(2) : 0), 16});
    auto grow = [&](const Tensor& old, const Tensor& fresh) {
      Tensor buf = empty({fresh.size(0), fresh.size(1), capacity, fresh.size(3)}, fresh.dtype(), fresh.device());
      if (len > 0) skiff::detail::copy_into(narrow(buf, 2, 0, len), old);
      return buf;
    };
    k_buf_ = grow(k, k_new);
    v_buf_ = grow(v, v_new);
  }
  skiff::detail::copy_into(narrow(k_buf_, 2, len, t), k_new);
  skiff::detail::copy_into(narrow(v_buf_, 2, len, t), v_new);
  k = narrow(k_buf_, 2, 0, need);
  v = narrow(v_buf_, 2, 0, need);
}

MultiheadAttention::MultiheadAttention(int64_t e, int64_t h, double dropout, bool bias, int64_t kdim, int64_t vdim,
                                       Generator* gen)
    : e_(e), h_(h), dropout_(dropout), gen_(gen) {
  SKIFF_CHECK(e > 0 && h > 0 && e % h == 0, "MultiheadAttention: num_heads={} must be positive and divide embed_dim={}",
              h, e);
  SKIFF_CHECK(dropout >= 0 && dropout <= 1, "MultiheadAttention: expected 0 <= dropout <= 1, got {}", dropout);
  q_proj = register_module("q_proj", std::make_shared<Linear>(e, e, bias, gen));
  k_proj = register_module("k_proj", std::make_shared<Linear>(kdim > 0 ? kdim : e, e, bias, gen));
  v_proj = register_module("v_proj", std::make_shared<Linear>(vdim > 0 ? vdim : e, e, bias, gen));
  out_proj = register_module("out_proj", std::make_shared<Linear>(e, e, bias, gen));
  for (auto* p : {&q_proj, &k_proj, &v_proj}) {
    init::xavier_uniform_((*p)->weight, 1.0, gen);
    if ((*p)->bias.defined()) init::zeros_((*p)->bias);
  }
  if (out_proj->bias.defined()) init::zeros_(out_proj->bias);
}

namespace {

// [B, T, E] -> [B, H, T, Dh]
Tensor split_heads(const Tensor& x, int64_t h) {
  int64_t b = x.size(0), t = x.size(1), e = x.size(2);
  return permute(reshape(x, {b, t, h, e / h}), {0, 2, 1, 3});
}

// Turns a bool mask (true = blocked) into -inf/0 and checks a float one; result broadcasts to scores.
Tensor additive(const Tensor& mask, DType dtype, const char* what) {
  if (mask.dtype() == DType::Bool)
    return where(mask, -std::numeric_limits<double>::infinity(), zeros({}, dtype));
  SKIFF_CHECK_DTYPE(is_floating(mask.dtype()), "MultiheadAttention: {} must be bool or float, got {}", what,
                    dtype_name(mask.dtype()));
  return mask.dtype() == dtype ? mask : to(mask, dtype);
}

}  // namespace

AttentionOutput MultiheadAttention::attend(const Tensor& query, const Tensor& key, const Tensor& value,
                                           const Tensor& key_padding_mask, const Tensor& attn_mask, KVCache* cache,
                                           bool need_weights) {
  SKIFF_CHECK_SHAPE(query.dim() == 3 && query.size(2) == e_, "MultiheadAttention: expected query [B, Tq, {}], got {}",
                    e_, query.shape());
  int64_t b = query.size(0), tq = query.size(1);
  SKIFF_CHECK_SHAPE(key.dim() == 3 && value.dim() == 3 && key.size(0) == b && value.size(0) == b &&
                        key.size(1) == value.size(1),
                    "MultiheadAttention: expected key [B={0}, Tk, kdim] and value [B={0}, Tk, vdim], got {1} and {2}",
                    b, key.shape(), value.shape());
  Tensor q = split_heads((*q_proj)(query), h_);
  Tensor k = split_heads((*k_proj)(key), h_);
  Tensor v = split_heads((*v_proj)(value), h_);
  if (!rotary_inv_freq_.empty()) {
    // Positions continue after the cached steps; queries and new keys share them.
    const int64_t past = cache ? cache->length() : 0;
    auto rotate = [&](const Tensor& x) {
      const int64_t t = x.size(2);
      auto [cos, sin] = rope_cos_sin(reshape(arange(past, past + t, 1, DType::Int64), {1, t}), rotary_inv_freq_);
      const Shape shape{x.size(0), t, cos.size(-1)};  // one table for every row of the batch
      return apply_rotary(x, expand(skiff::to(cos, x.dtype()), shape), expand(skiff::to(sin, x.dtype()), shape));
    };
    SKIFF_CHECK_SHAPE(key.size(1) == tq,
                      "MultiheadAttention: rotary embeddings are for self-attention, but the query has {} steps "
                      "and the key {}", tq, key.size(1));
    q = rotate(q);
    k = rotate(k);
  }
  if (cache) {
    cache->append(k, v, "MultiheadAttention");
    k = cache->k;
    v = cache->v;
  }
  int64_t tk = k.size(2);

  // Scale q rather than the [Tq, Tk] scores: fewer multiplies.
  Tensor scores = matmul(q * (1.0 / std::sqrt(double(head_dim()))), transpose(k, -2, -1));  // [B, H, Tq, Tk]
  if (attn_mask.defined()) {
    Tensor m = attn_mask;
    if (m.dim() == 3) {
      SKIFF_CHECK_SHAPE(m.size(0) == b * h_, "MultiheadAttention: 3-D attn_mask must be [B*H={}, Tq, Tk], got {}",
                        b * h_, m.shape());
      m = reshape(m, {b, h_, m.size(1), m.size(2)});
    }
    bool ok = (m.dim() == 2 || m.dim() == 4) && m.size(-2) == tq && m.size(-1) == tk &&
              (m.dim() == 2 || (m.size(0) == b && (m.size(1) == h_ || m.size(1) == 1)));
    SKIFF_CHECK_SHAPE(ok, "MultiheadAttention: attn_mask must be [Tq={0}, Tk={1}], [B*H, {0}, {1}] or [B, H|1, {0}, {1}], got {2}",
                      tq, tk, attn_mask.shape());
    scores = scores + additive(m, scores.dtype(), "attn_mask");
  }
  if (key_padding_mask.defined()) {
    SKIFF_CHECK_SHAPE(key_padding_mask.dim() == 2 && key_padding_mask.size(0) == b && key_padding_mask.size(1) == tk,
                      "MultiheadAttention: key_padding_mask must be [B={}, Tk={}], got {}", b, tk,
                      key_padding_mask.shape());
    Tensor m = additive(key_padding_mask, scores.dtype(), "key_padding_mask");
    scores = scores + reshape(m, {b, 1, 1, tk});
  }
  Tensor weights = softmax(scores, -1);
  Tensor used = (is_training() && dropout_ > 0) ? dropout(weights, dropout_, true, gen_) : weights;
  Tensor ctx = matmul(used, v);                                      // [B, H, Tq, Dh]
  ctx = reshape(contiguous(permute(ctx, {0, 2, 1, 3})), {b, tq, e_});  // [B, Tq, E]
  return AttentionOutput{(*out_proj)(ctx), need_weights ? weights : Tensor()};
}

Tensor MultiheadAttention::forward(const Tensor& x) { return attend(x, x, x, {}, {}, nullptr, false).output; }

void MultiheadAttention::set_rotary(double theta) {
  SKIFF_CHECK(theta >= 0, "MultiheadAttention.set_rotary: expected theta >= 0 (0: off), got {}", theta);
  rotary_theta_ = theta;
  rotary_inv_freq_ = theta > 0 ? rope_inv_frequencies(head_dim(), theta) : std::vector<double>{};
}

std::string MultiheadAttention::extra_repr() const {
  std::string s = fmt::format("embed_dim={}, num_heads={}, dropout={}", e_, h_, dropout_);
  if (rotary_theta_ > 0) s += fmt::format(", rotary_theta={}", rotary_theta_);
  return s;
}

Tensor causal_mask(int64_t t, DType dtype) {
  Tensor m = zeros({t, t}, dtype);
  Tensor blocked = gt(reshape(arange(t), {1, t}), reshape(arange(t), {t, 1}));  // column > row
  return where(blocked, -std::numeric_limits<double>::infinity(), m);
}

}  // namespace skiff::nn
