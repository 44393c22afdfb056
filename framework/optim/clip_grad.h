#pragma once
/// \file clip_grad.h
/// Gradient clipping (torch.nn.utils.clip_grad_norm_ / clip_grad_value_).
///
/// Norms are accumulated serially in double, so the result is the same for any thread count.

#include <limits>
#include <vector>

#include "framework/tensor/tensor.h"

namespace skiff::nn {
class Module;
}

namespace skiff::optim {

inline constexpr double kInfNorm = std::numeric_limits<double>::infinity();

/// Scales the gradients of `params` in place so that their total norm is at most max_norm.
/// The total norm is the norm_type-norm of the per-tensor norms (i.e. of all gradient
/// elements concatenated); norm_type = kInfNorm takes the largest |g|. Gradients are
/// multiplied by min(1, max_norm / (total + 1e-6)). Parameters without a grad are skipped.
/// \returns the total norm before clipping (0 when no parameter has a grad).
/// \throws ValueError for norm_type <= 0, or when the norm is NaN/inf and error_if_nonfinite.
double clip_grad_norm_(const std::vector<Tensor>& params, double max_norm, double norm_type = 2.0,
                       bool error_if_nonfinite = false);
double clip_grad_norm_(const nn::Module& m, double max_norm, double norm_type = 2.0,
                       bool error_if_nonfinite = false);

/// Clamps every gradient element into [-clip_value, clip_value] in place.
/// \throws ValueError for clip_value < 0.
void clip_grad_value_(const std::vector<Tensor>& params, double clip_value);
void clip_grad_value_(const nn::Module& m, double clip_value);

/// Total norm of the gradients without modifying them (same definition as clip_grad_norm_).
double grad_norm(const std::vector<Tensor>& params, double norm_type = 2.0);

}  // namespace skiff::optim
