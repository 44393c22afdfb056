#include "framework/nn/rotary.h"

#include <cmath>
#include <numbers>

#include "framework/core/error.h"
#include "framework/ops/ops.h"

namespace skiff::nn {

std::string rope_scaling_name(RopeScaling::Type type) {
  switch (type) {
    case RopeScaling::Type::None: return "none";
    case RopeScaling::Type::Linear: return "linear";
    case RopeScaling::Type::Dynamic: return "dynamic";
    case RopeScaling::Type::Llama3: return "llama3";
  }
  return "?";
}

std::vector<double> rope_inv_frequencies(int64_t head_dim, double theta, const RopeScaling& s, int64_t seq_len,
                                         int64_t max_position_embeddings) {
  SKIFF_CHECK(head_dim > 0 && head_dim % 2 == 0, "rope: head_dim must be positive and even, got {}", head_dim);
  SKIFF_CHECK(theta > 0, "rope: theta must be positive, got {}", theta);
  SKIFF_CHECK(s.type == RopeScaling::Type::None || s.factor > 0, "rope: {} scaling factor must be positive, got {}",
              rope_scaling_name(s.type), s.factor);
  double base = theta;
  if (s.type == RopeScaling::Type::Dynamic) {
    int64_t limit = s.original_max_position_embeddings > 0 ? s.original_max_position_embeddings
                                                           : max_position_embeddings;
    SKIFF_CHECK(limit > 0, "rope: dynamic scaling needs max_position_embeddings");
    if (seq_len > limit)
      base = theta * std::pow(s.factor * double(seq_len) / double(limit) - (s.factor - 1.0),
                              double(head_dim) / double(head_dim - 2));
  }
  std::vector<double> f(size_t(head_dim / 2));
  for (size_t i = 0; i < f.size(); ++i) f[i] = 1.0 / std::pow(base, double(2 * i) / double(head_dim));
  if (s.type == RopeScaling::Type::Linear) {
    for (double& x : f) x /= s.factor;
  } else if (s.type == RopeScaling::Type::Llama3) {
    double old = double(s.original_max_position_embeddings);
    SKIFF_CHECK(old > 0, "rope: llama3 scaling needs original_max_position_embeddings > 0");
    SKIFF_CHECK(s.high_freq_factor > s.low_freq_factor,
                "rope: llama3 scaling needs high_freq_factor > low_freq_factor, got {} and {}", s.high_freq_factor,
                s.low_freq_factor);
    double low_wavelen = old / s.low_freq_factor, high_wavelen = old / s.high_freq_factor;
    for (double& x : f) {
      double wavelen = 2 * std::numbers::pi / x;
      if (wavelen > low_wavelen) {
        x /= s.factor;
      } else if (wavelen >= high_wavelen) {
        double smooth = (old / wavelen - s.low_freq_factor) / (s.high_freq_factor - s.low_freq_factor);
        x = (1 - smooth) * x / s.factor + smooth * x;
      }
    }
  }
  return f;
}

std::pair<Tensor, Tensor> rope_cos_sin(const Tensor& positions, const std::vector<double>& inv_freq) {
  SKIFF_CHECK_DTYPE(is_integral(positions.dtype()), "rope: positions must be integers, got {}",
                    dtype_name(positions.dtype()));
  std::vector<int64_t> pos = positions.to_vector<int64_t>();
  int64_t half = int64_t(inv_freq.size()), d = 2 * half;
  Shape shape = positions.shape();
  shape.push_back(d);
  Tensor c = empty(shape), s = empty(shape);
  float* cp = c.data<float>();
  float* sp = s.data<float>();
  for (size_t n = 0; n < pos.size(); ++n) {
    for (int64_t j = 0; j < half; ++j) {
      double a = double(pos[n]) * inv_freq[size_t(j)];
      cp[n * d + j] = cp[n * d + j + half] = float(std::cos(a));
      sp[n * d + j] = sp[n * d + j + half] = float(std::sin(a));
    }
  }
  return {c, s};
}

Tensor rotate_half(const Tensor& x) {
  int64_t d = x.size(-1);
  SKIFF_CHECK_SHAPE(d % 2 == 0, "rotate_half: last dim must be even, got {}", x.shape());
  return concat({-slice(x, -1, d / 2, d), slice(x, -1, 0, d / 2)}, -1);
}

Tensor apply_rotary(const Tensor& x, const Tensor& cos, const Tensor& sin) {
  SKIFF_CHECK_SHAPE(x.dim() == 4 && cos.dim() == 3 && cos.shape() == sin.shape() && cos.size(0) == x.size(0) &&
                        cos.size(1) == x.size(2) && cos.size(2) == x.size(3),
                    "apply_rotary: expected x [B, H, T, D] with cos/sin [B, T, D], got {}, {} and {}", x.shape(),
                    cos.shape(), sin.shape());
  Tensor c = unsqueeze(cos, 1), s = unsqueeze(sin, 1);
  return x * c + rotate_half(x) * s;
}

}  // namespace skiff::nn
