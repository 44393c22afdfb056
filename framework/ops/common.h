#pragma once
/// \file common.h
/// Helpers shared by op definitions: standard shape/dtype rules and the
/// broadcasting-aware gradient reduction.

#include <vector>

#include "framework/ops/node.h"

namespace skiff {

/// Output = input 0's shape and dtype.
std::vector<TensorMeta> infer_same_as_input(const std::vector<Tensor>& in, const Attrs& attrs);
/// Output = broadcast of all input shapes, dtype of input 0 (wrappers promote first).
std::vector<TensorMeta> infer_broadcast(const std::vector<Tensor>& in, const Attrs& attrs);
/// Broadcast shape, bool dtype (comparisons, logical ops).
std::vector<TensorMeta> infer_broadcast_bool(const std::vector<Tensor>& in, const Attrs& attrs);

/// Sums `grad` down to `shape` (the inverse of broadcasting `shape` up to grad's shape).
/// Differentiable. Returns grad itself when the shapes already match.
Tensor sum_to(const Tensor& grad, const Shape& shape);

/// A 0-d tensor holding `value` with the dtype a binary op with `like` should use
/// (PyTorch's rule: a Python scalar does not widen a tensor's float type; an integral
/// tensor with a non-integral scalar becomes float32).
Tensor scalar_like(const Tensor& like, double value);

/// Normalizes a list of dims (negative allowed, empty = all) to sorted unique dims. A 0-d
/// tensor accepts dim 0 or -1 (its implicit dim) and gets {}: nothing to reduce over.
/// \throws IndexError naming `op`.
std::vector<int64_t> normalize_dims(const std::vector<int64_t>& dims, int64_t ndim, const char* op);

}  // namespace skiff
