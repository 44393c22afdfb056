#pragma once
/// \file norm.h
/// Softmax, normalization layers (layer, group, batch) and dropout.
///
/// All functions here take floating tensors (float32, float64, float16, bfloat16)
/// and return a new tensor of the input's dtype; integer or bool inputs throw
/// TypeError. Every one is differentiable (to any order) in its tensor inputs.
/// Statistics are accumulated in float64 inside the kernels, so float16/bfloat16
/// inputs lose no accuracy beyond their own rounding.

#include <cstdint>
#include <vector>

#include "framework/tensor/tensor.h"

namespace skiff {

class Generator;

/// Softmax along `dim`: y_i = exp(x_i - max(x)) / sum_j exp(x_j - max(x)).
/// The max shift makes it exact for large logits (1000 does not overflow).
/// x: any shape (a 0-d tensor is treated as one element). dim may be negative.
/// \throws IndexError if dim is out of range; TypeError for non-float x.
Tensor softmax(const Tensor& x, int64_t dim);

/// log(softmax(x, dim)), computed as x - max - log(sum(exp(x - max))) so it
/// stays finite where softmax underflows to 0.
/// \throws IndexError if dim is out of range; TypeError for non-float x.
Tensor log_softmax(const Tensor& x, int64_t dim);

/// Layer normalization over the trailing dims named by `normalized_shape`:
///   y = (x - mean) / sqrt(var + eps) * weight + bias,
/// with mean and biased variance taken over those trailing dims for each
/// leading index. x: [*, normalized_shape...]; weight and bias (each optional,
/// pass an undefined Tensor to omit) have shape normalized_shape and x's dtype.
/// \throws ShapeError if x's trailing dims differ from normalized_shape or
/// weight/bias have the wrong shape; ValueError if normalized_shape is empty or
/// eps < 0; TypeError for non-float inputs or mismatched dtypes.
Tensor layer_norm(const Tensor& x, const std::vector<int64_t>& normalized_shape, const Tensor& weight = Tensor(),
                  const Tensor& bias = Tensor(), double eps = 1e-5);

/// Group normalization: x [N, C, *] is split into `groups` groups of C/groups
/// channels; each (sample, group) is normalized over its channels and spatial
/// positions, then scaled and shifted per channel by weight [C] and bias [C]
/// (both optional).
/// \throws ShapeError if x has fewer than 2 dims or weight/bias are not [C];
/// ValueError if groups <= 0 or does not divide C; TypeError for non-float x.
Tensor group_norm(const Tensor& x, int64_t groups, const Tensor& weight = Tensor(), const Tensor& bias = Tensor(),
                  double eps = 1e-5);

/// Batch normalization of x [N, C, *] per channel C (PyTorch F.batch_norm).
///
/// In training mode (or when no running statistics are given) each channel is
/// normalized with its batch mean and biased variance over N and the spatial
/// dims, and, when running_mean/running_var are given, they are updated in
/// place without autograd: running = (1 - momentum) * running + momentum * stat,
/// using the unbiased batch variance. In eval mode x is normalized with the
/// running statistics. weight [C] and bias [C] are optional affine parameters.
/// running_mean and running_var ([C], any float dtype) must be both given or
/// both omitted.
/// \throws ShapeError if x has fewer than 2 dims or a [C] tensor has another
/// shape; ValueError if training with only one value per channel, if only one
/// running statistic is given, or eps < 0; TypeError for non-float x.
Tensor batch_norm(const Tensor& x, const Tensor& running_mean, const Tensor& running_var,
                  const Tensor& weight = Tensor(), const Tensor& bias = Tensor(), bool training = false,
                  double momentum = 0.1, double eps = 1e-5);

/// Dropout: during training each element is zeroed with probability p and the
/// survivors are scaled by 1 / (1 - p). The mask is a function of one 64-bit
/// draw from `gen` (the default generator when null) and the element's
/// row-major position, so the same seed gives the same mask on any thread count.
/// Returns x itself when not training or p == 0, and zeros when p == 1.
/// \throws ValueError if p is outside [0, 1]; TypeError for non-float x.
Tensor dropout(const Tensor& x, double p = 0.5, bool training = true, Generator* gen = nullptr);

}  // namespace skiff
