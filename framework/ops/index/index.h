#pragma once
/// \file index.h
/// Indexing ops: gather/scatter along a dim, row selection, embedding lookup,
/// one-hot encoding, masked fill, and sorting (sort, argsort, topk).
///
/// Index tensors are int64 and hold non-negative positions (no wrap-around of
/// negative values, as in PyTorch's gather/scatter/index_select). Every index is
/// validated before any data moves: an out-of-range value throws IndexError
/// naming the op, the bad value and the size of the indexed dim. Gradients flow
/// to the data inputs (never to index tensors); each backward is written with
/// other ops of this family, so higher-order gradients work.

#include <cstdint>
#include <optional>

#include "framework/ops/reduce/reduce.h"  // ValuesIndices
#include "framework/tensor/tensor.h"

namespace skiff {

/// out[i][j][k] = x[index[i][j][k]][j][k] for dim = 0 (likewise for other dims).
/// `index` has the same number of dims as `x`, and index.size(d) <= x.size(d) for
/// d != dim; the result has index's shape and x's dtype (any dtype).
/// Gradient w.r.t. x: scatter_add of the gradient into zeros at `index`.
/// \throws IndexError for a bad dim or an index outside [0, x.size(dim)),
///         TypeError if index is not int64, ShapeError for mismatched ranks/sizes.
Tensor gather(const Tensor& x, int64_t dim, const Tensor& index);

/// A copy of x with out[index[i][j]][j] = src[i][j] (dim = 0; likewise for other
/// dims). index.size(d) <= src.size(d) for every d and <= x.size(d) for d != dim;
/// only the leading index-shaped block of src is used. With duplicate positions
/// the last one written (in row-major order of index) wins.
/// Gradients: x gets the gradient with the written positions zeroed; src gets
/// gather(grad, dim, index). src is converted to x's dtype. \throws as gather.
Tensor scatter(const Tensor& x, int64_t dim, const Tensor& index, const Tensor& src);

/// Like scatter, but adds: out = x; out[index[i][j]][j] += src[i][j] (duplicates
/// accumulate, in a fixed order). Numeric dtypes only.
/// Gradients: x gets grad; src gets gather(grad, dim, index).
Tensor scatter_add(const Tensor& x, int64_t dim, const Tensor& index, const Tensor& src);

/// Entries of x at the positions `index` (1-D int64, length K) along dim:
/// the result has x's shape with size K at dim. Any dtype.
/// Gradient: index_add of the gradient into zeros. \throws IndexError for a bad
/// dim or an index outside [0, x.size(dim)), ShapeError if index is not 1-D.
Tensor index_select(const Tensor& x, int64_t dim, const Tensor& index);

/// out = x; out.select(dim, index[i]) += src.select(dim, i) for each i (duplicates
/// accumulate in order). index is 1-D int64 of length src.size(dim); src has x's
/// shape except at dim (converted to x's dtype). Numeric dtypes. Gradients: x gets grad; src gets
/// index_select(grad, dim, index).
Tensor index_add(const Tensor& x, int64_t dim, const Tensor& index, const Tensor& src);

/// Row lookup: weight [V, D] (float), indices int64 of any shape [...] -> [..., D].
/// With `padding_idx` (in [-V, V), negative counts from the end), the gradient of
/// that row stays zero. \throws IndexError for an index outside [0, V) or a bad
/// padding_idx, ShapeError if weight is not 2-D, TypeError if indices is not int64.
Tensor embedding(const Tensor& weight, const Tensor& indices, std::optional<int64_t> padding_idx = std::nullopt);

/// One-hot encoding: int64 indices [...] -> int64 [..., num_classes] with a 1 at
/// each index. num_classes = -1 uses max(indices) + 1. Not differentiable.
/// \throws IndexError for a negative index or one >= num_classes, TypeError if
/// indices is not int64.
Tensor one_hot(const Tensor& indices, int64_t num_classes = -1);

/// x with `value` written where mask is true. mask is bool and must broadcast to
/// x's shape (the result always has x's shape and dtype). Gradient flows to x
/// where mask is false (and to a tensor value where it is true).
/// \throws TypeError if mask is not bool, ShapeError if it does not broadcast to x.
Tensor masked_fill(const Tensor& x, const Tensor& mask, double value);
/// masked_fill with a 0-d tensor value (differentiable w.r.t. value).
Tensor masked_fill(const Tensor& x, const Tensor& mask, const Tensor& value);

/// The k largest (or smallest) entries along dim with their int64 positions.
/// Values come out sorted (largest first for largest = true) whether or not
/// `sorted` is set; equal values keep ascending index order. NaN counts as larger
/// than every number. Real dtypes. The gradient of values scatters back to the
/// positions. \throws IndexError for a bad dim, ValueError if k is not in [0, size(dim)].
ValuesIndices topk(const Tensor& x, int64_t k, int64_t dim = -1, bool largest = true, bool sorted = true);

/// Sorts along dim; returns the sorted values and the int64 positions they came
/// from. The sort is always stable (equal values keep their order), so `stable`
/// only documents intent. NaN sorts as larger than every number. Real and bool
/// dtypes. The gradient of values scatters back to the positions.
ValuesIndices sort(const Tensor& x, int64_t dim = -1, bool descending = false, bool stable = false);

/// The int64 positions that sort x along dim (sort(...).indices).
Tensor argsort(const Tensor& x, int64_t dim = -1, bool descending = false, bool stable = false);

}  // namespace skiff
