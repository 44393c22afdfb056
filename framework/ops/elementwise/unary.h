#pragma once
/// \file unary.h
/// Unary element-wise math and activations. Float functions applied to integer
/// tensors compute in float32 (like torch.exp on an int tensor). All are
/// differentiable for float inputs; composite ones (gelu, silu, hardswish, ...)
/// get their gradient from the primitives they are built from.

#include "framework/tensor/tensor.h"

namespace skiff {

Tensor neg(const Tensor& x);
/// |x|. Complex input gives the modulus in the real dtype (complex64 -> float32),
/// with gradient grad * z / |z| (0 at z = 0; convention in fft/complex.h).
Tensor abs(const Tensor& x);
/// -1, 0 or 1 (gradient zero).
Tensor sign(const Tensor& x);
Tensor exp(const Tensor& x);
Tensor log(const Tensor& x);
Tensor log1p(const Tensor& x);
Tensor sqrt(const Tensor& x);
Tensor rsqrt(const Tensor& x);
Tensor square(const Tensor& x);
Tensor reciprocal(const Tensor& x);
Tensor sin(const Tensor& x);
Tensor cos(const Tensor& x);
Tensor tan(const Tensor& x);
Tensor tanh(const Tensor& x);
Tensor sigmoid(const Tensor& x);
Tensor erf(const Tensor& x);
Tensor floor(const Tensor& x);
Tensor ceil(const Tensor& x);
Tensor round(const Tensor& x);
Tensor relu(const Tensor& x);
/// The gradient of relu: grad where output > 0, else 0, in one pass (relu's
/// backward; differentiable in grad to any order). \throws ShapeError /
/// TypeError unless grad and output have one shape and dtype.
Tensor relu_backward(const Tensor& grad, const Tensor& output);
/// x if x > 0 else slope * x.
Tensor leaky_relu(const Tensor& x, double negative_slope = 0.01);
/// Gaussian error linear unit: exact x*Phi(x), or the tanh approximation.
Tensor gelu(const Tensor& x, bool tanh_approximation = false);
/// x * sigmoid(x).
Tensor silu(const Tensor& x);
/// x * relu6(x + 3) / 6.
Tensor hardswish(const Tensor& x);
/// relu6(x + 3) / 6 = clamp(x / 6 + 0.5, 0, 1).
Tensor hardsigmoid(const Tensor& x);
/// log(1 + exp(beta x)) / beta, linear above `threshold`.
Tensor softplus(const Tensor& x, double beta = 1.0, double threshold = 20.0);
/// min(max(x, lo), hi). Gradient passes where lo <= x <= hi.
Tensor clamp(const Tensor& x, double lo, double hi);
Tensor clamp_min(const Tensor& x, double lo);
Tensor clamp_max(const Tensor& x, double hi);
/// min(max(x, 0), 6).
Tensor relu6(const Tensor& x);

/// In-place variants (refuse tensors tracked by autograd).
Tensor& relu_(Tensor& x);
Tensor& clamp_(Tensor& x, double lo, double hi);
Tensor& neg_(Tensor& x);
Tensor& exp_(Tensor& x);

}  // namespace skiff
