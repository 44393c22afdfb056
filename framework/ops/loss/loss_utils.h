#pragma once
/// \file loss_utils.h
/// Helpers shared by the loss definitions (internal to framework/ops/loss).

#include <vector>

#include "framework/ops/loss/loss.h"

namespace skiff::detail {

/// Sum, mean over all elements, or the tensor itself.
Tensor reduce_loss(const Tensor& per_element, Reduction reduction);

/// \throws TypeError unless x is float16/bfloat16/float32/float64. `what` names the argument.
void check_float_input(const Tensor& x, const char* op, const char* what);

/// \throws TypeError unless t holds integers (bool excluded); returns it as int64.
Tensor class_indices(const Tensor& t, const char* op, const char* what);

/// nll_loss's op on batched inputs (log_probs [N, C, d...], target [N, d...], optional weight [C]):
/// {per-target loss [N, d...], weight each target counts with (0 where ignored)}.
std::vector<Tensor> nll_loss_elements(const Tensor& log_probs, const Tensor& target, const Tensor& weight,
                                      int64_t ignore_index);

}  // namespace skiff::detail
