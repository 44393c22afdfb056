#pragma once
/// \file rotary.h
/// Rotary position embeddings (RoFormer, Su et al. 2021) in the "rotate_half"
/// convention of Hugging Face's LLaMA: a head vector x of even size D is split into
/// halves (x1, x2) = (x[:D/2], x[D/2:]), and position p rotates pair (x1[i], x2[i]) by
/// the angle p * inv_freq[i]:
///
///   rotate_half(x) = concat(-x2, x1)
///   apply_rotary(x) = x * cos + rotate_half(x) * sin,  cos/sin = [cos(p f), cos(p f)] (both halves)
///
/// with inv_freq[i] = theta^(-2i/D), i = 0 .. D/2-1, optionally rescaled for long
/// contexts (RopeScaling). Frequencies and angles are computed in float64 and the
/// cos/sin tables returned in float32. The rotation is written with differentiable
/// ops (slice, concat, mul, add), so gradients flow to x.

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "framework/tensor/tensor.h"

namespace skiff::nn {

/// How inv_freq is rescaled for contexts longer than the model was trained on
/// (Hugging Face's `rope_scaling` config entry).
struct RopeScaling {
  enum class Type {
    None,     ///< plain theta^(-2i/D)
    Linear,   ///< position interpolation: every frequency / factor
    Dynamic,  ///< dynamic NTK: theta grows with the sequence length past max_position_embeddings
    Llama3,   ///< Llama 3.1: low frequencies / factor, high ones kept, a smooth ramp between
  };
  Type type = Type::None;
  double factor = 1.0;
  double low_freq_factor = 1.0;   ///< llama3
  double high_freq_factor = 4.0;  ///< llama3
  /// llama3: the training context; dynamic: the length past which theta grows
  /// (0 = the model's max_position_embeddings).
  int64_t original_max_position_embeddings = 0;
};

/// Name of a scaling type as configs spell it ("none", "linear", "dynamic", "llama3").
std::string rope_scaling_name(RopeScaling::Type type);

/// inv_freq [D/2] for head size `head_dim`, base `theta` and `scaling`:
///  - Linear: inv_freq / factor.
///  - Dynamic (NTK-aware): when seq_len > L (L = original_max_position_embeddings, or
///    max_position_embeddings when that is 0), theta' = theta * (factor * seq_len / L -
///    (factor - 1))^(D / (D - 2)); otherwise unchanged.
///  - Llama3: with wavelen = 2 pi / f, old = original_max_position_embeddings:
///    wavelen > old / low_freq_factor -> f / factor; wavelen < old / high_freq_factor -> f;
///    otherwise (1 - s) f / factor + s f with s = (old / wavelen - low) / (high - low).
/// \throws ValueError for an odd or non-positive head_dim, theta <= 0, factor <= 0, or a
/// llama3 scaling without original_max_position_embeddings or with high <= low.
std::vector<double> rope_inv_frequencies(int64_t head_dim, double theta, const RopeScaling& scaling = {},
                                         int64_t seq_len = 0, int64_t max_position_embeddings = 0);

/// cos and sin tables for integer positions [*] (any integer dtype): each [*, D] float32,
/// D = 2 * inv_freq.size(), entry [..., j] = cos/sin(position * inv_freq[j mod D/2]).
std::pair<Tensor, Tensor> rope_cos_sin(const Tensor& positions, const std::vector<double>& inv_freq);

/// concat(-x[..., D/2:], x[..., :D/2]) along the last dim. \throws ShapeError for an odd last dim.
Tensor rotate_half(const Tensor& x);

/// x * cos + rotate_half(x) * sin. x [B, H, T, D]; cos and sin [B, T, D] (broadcast over
/// the heads). \throws ShapeError on mismatched shapes.
Tensor apply_rotary(const Tensor& x, const Tensor& cos, const Tensor& sin);

}  // namespace skiff::nn
