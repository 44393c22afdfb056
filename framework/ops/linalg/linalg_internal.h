#pragma once
/// \file linalg_internal.h
/// Helpers shared by the linalg op files (not part of the public API).

#include "framework/tensor/tensor.h"

namespace skiff::detail {

/// The recorded matmul primitive: a [Ba..., M, K] x b [Bb..., K, N] -> [broadcast(Ba, Bb)..., M, N].
/// Both inputs at least 2-D and of one dtype (no promotion, no 1-D handling).
Tensor matmul_primitive(const Tensor& a, const Tensor& b);

}  // namespace skiff::detail
