#pragma once
/// \file taylor.h
/// Taylor-mode (forward, higher-order) differentiation through activations.
///
/// A truncated Taylor series of z along a direction is carried as z0 (the
/// value) and z1..zK (the derivatives d^k/ds^k). activation_jet pushes it
/// through an element-wise activation in one fused pass, which is what a
/// PINN needs to form 4th-order operators of an MLP without nesting reverse
/// mode: through Linear layers the coefficients map linearly (z_k W^T).
#include <string>
#include <vector>

#include "framework/tensor/tensor.h"

namespace skiff {

/// y = act(z) for the series (z0, z[0], ..., z[G-1]); coefficients above G are zero.
///   z0:   [N, H]
///   z[0]: [M, N, H] or [M, 1, H] (the same for every point, as after a first Linear layer)
///   z[k]: [M, N, H] for k >= 1 (M directions)
/// Returns {y0 [N, H], y1, ..., y_order [M, N, H]}. activation: "tanh" or "sin";
/// order 1..4; float32/float64. Differentiable to any order: the first-order
/// backward is a fused kernel, and under create_graph the same formulas are
/// built from differentiable ops.
/// \throws ValueError for an unknown activation, order outside 1..4 or G > order;
///         ShapeError/TypeError for mismatched inputs.
std::vector<Tensor> activation_jet(const Tensor& z0, const std::vector<Tensor>& z, int order,
                                   const std::string& activation);

/// The same result computed with plain element-wise ops (the reference the
/// kernel is tested against).
std::vector<Tensor> activation_jet_reference(const Tensor& z0, const std::vector<Tensor>& z, int order,
                                             const std::string& activation);

}  // namespace skiff
