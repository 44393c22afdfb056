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
///
/// sgd_step (torch.optim.SGD), with g = grad (negated with maximize) + weight_decay * param:
///   buf = first step ? g : momentum * buf + (1 - dampening) * g      (momentum != 0)
///   d = nesterov ? g + momentum * buf : buf                          (momentum != 0; else d = g)
///   param -= lr * d
/// rmsprop_step (torch.optim.RMSprop), g as above:
///   square_avg = alpha * square_avg + (1 - alpha) * g^2
///   grad_avg = lerp(grad_avg, g, 1 - alpha)                          (centered)
///   avg = sqrt(square_avg - grad_avg^2) + eps   (centered; else sqrt(square_avg) + eps)
///   buf = momentum * buf + g / avg; param -= lr * buf                (momentum > 0)
///   param -= lr * g / avg                                            (otherwise)
/// adagrad_step (torch.optim.Adagrad), g as above, lr already decayed for the step:
///   sum += g^2; param -= lr * g / (sqrt(sum) + eps)
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

struct SgdStep {
  double lr = 1e-3, momentum = 0, dampening = 0, weight_decay = 0;
  bool nesterov = false, maximize = false;
  bool first = false;  ///< the momentum buffer's first step: it starts as g
};
/// One SGD step; `momentum_buffer` is used when momentum != 0.
void sgd_step_(const Tensor& param, const Tensor& grad, const Tensor& momentum_buffer, const SgdStep& s);

struct RmspropStep {
  double lr = 1e-2, alpha = 0.99, eps = 1e-8, weight_decay = 0, momentum = 0;
  bool centered = false, maximize = false;
};
/// One RMSprop step; `grad_avg` is used when centered, `momentum_buffer` when momentum > 0.
void rmsprop_step_(const Tensor& param, const Tensor& grad, const Tensor& square_avg, const Tensor& grad_avg,
                   const Tensor& momentum_buffer, const RmspropStep& s);

struct AdagradStep {
  double lr = 1e-2;  ///< this step's rate: lr / (1 + (t - 1) * lr_decay)
  double eps = 1e-10, weight_decay = 0;
  bool maximize = false;
};
/// One Adagrad step on `param` and its running `sum` of squared gradients.
void adagrad_step_(const Tensor& param, const Tensor& grad, const Tensor& sum, const AdagradStep& s);

}  // namespace skiff
