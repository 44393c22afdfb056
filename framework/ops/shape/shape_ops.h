#pragma once
/// \file shape_ops.h
/// Views, layout and dtype changes. View ops return tensors that share storage
/// with their input (no copy); all of them are differentiable.

#include <vector>

#include "framework/tensor/tensor.h"

namespace skiff {

/// New shape with the same number of elements; one entry may be -1 (inferred).
/// A view when the input is contiguous, otherwise a copy. \throws ShapeError.
Tensor reshape(const Tensor& x, const Shape& shape);
/// Same as reshape (kept for users coming from PyTorch).
inline Tensor view(const Tensor& x, const Shape& shape) { return reshape(x, shape); }
/// Merges dims start..end (inclusive, negative allowed) into one.
Tensor flatten(const Tensor& x, int64_t start_dim = 0, int64_t end_dim = -1);
/// Reorders dims: out.shape[i] = x.shape[dims[i]]. \throws IndexError if dims is not a permutation.
Tensor permute(const Tensor& x, const std::vector<int64_t>& dims);
/// Swaps two dims.
Tensor transpose(const Tensor& x, int64_t dim0, int64_t dim1);
/// 2-D transpose.
Tensor t(const Tensor& x);
/// Elements start, start+step, ... < end along `dim` (Python slicing; negative and
/// out-of-range start/end are clamped like Python). step must be positive.
Tensor slice(const Tensor& x, int64_t dim, int64_t start, int64_t end, int64_t step = 1);
/// `length` elements from `start` along dim. \throws IndexError if out of range.
Tensor narrow(const Tensor& x, int64_t dim, int64_t start, int64_t length);
/// Index `index` along dim, removing the dim. \throws IndexError if out of range.
Tensor select(const Tensor& x, int64_t dim, int64_t index);
/// Broadcasts size-1 dims (and new leading dims) to `shape` without copying; -1 keeps a size.
Tensor expand(const Tensor& x, const Shape& shape);
/// Removes every size-1 dim.
Tensor squeeze(const Tensor& x);
/// Removes dim if its size is 1 (no-op otherwise).
Tensor squeeze(const Tensor& x, int64_t dim);
/// Inserts a size-1 dim at `dim` (in [-ndim-1, ndim]).
Tensor unsqueeze(const Tensor& x, int64_t dim);
/// The diagonal of the 2-D planes (dim1, dim2) with an offset, as the last dim.
Tensor diagonal(const Tensor& x, int64_t offset = 0, int64_t dim1 = 0, int64_t dim2 = 1);
/// x itself when contiguous, else a contiguous copy.
Tensor contiguous(const Tensor& x);
/// Always a fresh contiguous copy (gradient flows through).
Tensor clone(const Tensor& x);
/// Converts the dtype (x itself when it already has it). Gradients flow back for
/// float-to-float conversions.
Tensor to(const Tensor& x, DType dtype);
/// A tensor sharing x's data that autograd does not track.
Tensor detach(const Tensor& x);

/// Joins tensors along an existing dim. \throws ShapeError if other dims differ.
Tensor concat(const std::vector<Tensor>& xs, int64_t dim = 0);
/// Joins tensors along a new dim.
Tensor stack(const std::vector<Tensor>& xs, int64_t dim = 0);
/// Splits into pieces of `split_size` along dim (the last may be smaller). Views.
std::vector<Tensor> split(const Tensor& x, int64_t split_size, int64_t dim = 0);
/// Splits into pieces with the given sizes (must sum to the dim size). Views.
std::vector<Tensor> split(const Tensor& x, const std::vector<int64_t>& sizes, int64_t dim = 0);
/// Splits into `chunks` nearly equal pieces. Views.
std::vector<Tensor> chunk(const Tensor& x, int64_t chunks, int64_t dim = 0);

}  // namespace skiff
