#pragma once
/// \file optim_ops.h
/// Optimizer updates as ops, so that each backend runs them with its own kernel
/// (one fused pass over the parameter and its moments) instead of the optimizer
/// looping over memory it assumes is on the CPU.
///
/// adam_step updates in place (no outputs, no gradient):
///   g = grad (negated with maximize), plus weight_decay * param unless decoupled
///   param *= 1 - lr * weight_decay                        (decoupled: AdamW)
///   exp_avg = lerp(exp_avg, g, 1 - beta1)
///   exp_avg_sq = beta2 * exp_avg_sq + (1 - beta2) * g^2
///   max_exp_avg_sq = max(max_exp_avg_sq, exp_avg_sq)        (amsgrad)
///   param -= step_size * exp_avg / (sqrt(v) / bias_correction2_sqrt + eps)
/// with step_size = lr / (1 - beta1^t), bias_correction2_sqrt = sqrt(1 - beta2^t) and
/// v = exp_avg_sq (or max_exp_avg_sq), as torch.optim.Adam/AdamW compute them.
#include "framework/tensor/tensor.h"

namespace skiff {

struct AdamStep {
  double lr = 1e-3, beta1 = 0.9, beta2 = 0.999, eps = 1e-8, weight_decay = 0;
  int64_t step = 1;  ///< t, counted from 1
  bool decoupled = false, amsgrad = false, maximize = false;
};

/// One Adam step on a contiguous float32/float64 `param` with its `grad` and moments
/// (same shape and dtype, contiguous). `max_exp_avg_sq` is used with amsgrad only.
/// \throws ShapeError / TypeError naming the op for mismatched tensors.
void adam_step_(const Tensor& param, const Tensor& grad, const Tensor& exp_avg, const Tensor& exp_avg_sq,
                const Tensor& max_exp_avg_sq, const AdamStep& s);

}  // namespace skiff
