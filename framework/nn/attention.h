#pragma once
/// \file attention.h
/// Multi-head scaled dot-product attention (Vaswani et al. 2017), batch first.
///
/// Shapes: query [B, Tq, E], key [B, Tk, kdim], value [B, Tk, vdim] (kdim and
/// vdim default to E); output [B, Tq, E]; attention weights [B, H, Tq, Tk].
///
/// Masks follow PyTorch's nn.MultiheadAttention:
///  - key_padding_mask [B, Tk]: bool (true = this key is padding, ignore it) or
///    float (added to the scores).
///  - attn_mask [Tq, Tk], [B * H, Tq, Tk] or [B, H|1, Tq, Tk]: bool (true = not
///    allowed to attend) or float (added to the scores, e.g. -inf above the diagonal).
/// A masked key gets exactly zero weight. A query whose every key is masked gets
/// NaN weights (as in PyTorch): that is a bug in the caller's mask.
///
/// Incremental decoding: pass a KVCache. The new keys/values (after projection)
/// are appended to the cache and attention runs over everything cached, so
/// feeding a sequence one token at a time gives the same outputs as one call on
/// the whole sequence with a causal mask. When the cache is used, attn_mask, if
/// given, spans [Tq, T_cached + Tk].

#include <string>

#include "framework/core/rng.h"
#include "framework/nn/linear.h"
#include "framework/nn/module.h"

namespace skiff::nn {

/// Keys and values seen so far, already projected and split into heads.
struct KVCache {
  Tensor k;  ///< [B, H, T_cached, head_dim]; undefined when empty
  Tensor v;  ///< [B, H, T_cached, head_dim]
  /// Number of cached time steps.
  int64_t length() const { return k.defined() ? k.size(2) : 0; }
  void reset() { *this = KVCache(); }
  /// Appends new steps k_new / v_new [B, H, T, head_dim]; k and v then view every cached
  /// step. The steps live in buffers that double when full, so decoding copies each new
  /// step once instead of the whole cache per step. Under autograd (inputs that require
  /// grad) it concatenates instead, which the backward pass can follow. `who` names the
  /// caller in the error for a batch or head count other than the cached one.
  void append(const Tensor& k_new, const Tensor& v_new, const char* who);

 private:
  Tensor k_buf_, v_buf_;  // [B, H, capacity, head_dim]; k and v are their first length() steps
};

/// Result of MultiheadAttention::attend.
struct AttentionOutput {
  Tensor output;   ///< [B, Tq, E]
  Tensor weights;  ///< [B, H, Tq, Tk], before dropout; undefined unless need_weights
};

/// Multi-head attention with separate q/k/v input projections (children q_proj,
/// k_proj, v_proj, out_proj: state-dict keys "q_proj.weight", ...).
/// Initialization: xavier_uniform input projections with zero biases (as
/// PyTorch), out_proj default Linear init with a zero bias.
/// Dropout (probability `dropout`) applies to the attention weights in training.
/// \throws ValueError if num_heads does not divide embed_dim.
class MultiheadAttention : public Module {
 public:
  MultiheadAttention(int64_t embed_dim, int64_t num_heads, double dropout = 0.0, bool bias = true, int64_t kdim = -1,
                     int64_t vdim = -1, Generator* gen = nullptr);
  std::string type_name() const override { return "MultiheadAttention"; }

  /// Full interface. Undefined masks mean "none"; cache may be null.
  /// \throws ShapeError on inconsistent shapes (names the argument), TypeError on
  /// a mask of a non-bool, non-float dtype.
  AttentionOutput attend(const Tensor& query, const Tensor& key, const Tensor& value,
                         const Tensor& key_padding_mask = Tensor(), const Tensor& attn_mask = Tensor(),
                         KVCache* cache = nullptr, bool need_weights = true);
  /// Self-attention without masks: attend(x, x, x).output.
  Tensor forward(const Tensor& x) override;

  int64_t embed_dim() const { return e_; }
  int64_t num_heads() const { return h_; }
  int64_t head_dim() const { return e_ / h_; }

  /// Rotary position embeddings (rotary.h, base `theta`; 0 turns them off, the default):
  /// queries and keys are rotated by their positions (0, 1, ... after what the KV cache
  /// holds) before the scores, so attention sees relative positions. For self-attention.
  /// \throws ValueError for an odd head_dim or theta < 0.
  void set_rotary(double theta);
  double rotary_theta() const { return rotary_theta_; }

  std::shared_ptr<Linear> q_proj, k_proj, v_proj, out_proj;

 protected:
  std::string extra_repr() const override;

 private:
  int64_t e_, h_;
  double dropout_;
  Generator* gen_;
  double rotary_theta_ = 0;
  std::vector<double> rotary_inv_freq_;  // empty: no rotary embeddings
};

/// Additive causal mask [T, T] (0 on and below the diagonal, -inf above), the
/// attn_mask for decoder self-attention.
Tensor causal_mask(int64_t t, DType dtype = DType::Float32);

}  // namespace skiff::nn
