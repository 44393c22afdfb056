#pragma once
/// \file reduce_internal.h
/// Helpers shared by the reduction op definitions in this folder (not public API).

#include <algorithm>
#include <vector>

#include "framework/ops/shape/shape_ops.h"
#include "framework/tensor/tensor.h"

namespace skiff::reduce_detail {

/// Shape after reducing `dims` (sorted, non-negative) of `in`.
inline Shape reduced_shape(const Shape& in, const std::vector<int64_t>& dims, bool keepdim) {
  Shape out;
  for (int64_t d = 0; d < in.size(); ++d) {
    bool reduced = std::find(dims.begin(), dims.end(), d) != dims.end();
    if (!reduced) out.push_back(in[d]);
    else if (keepdim) out.push_back(1);
  }
  return out;
}

/// A reduced result (or its gradient) reshaped so it broadcasts against the input:
/// reduced dims become size 1. Differentiable.
inline Tensor unsqueeze_reduced(const Tensor& t, const Shape& in_shape, const std::vector<int64_t>& dims,
                                bool keepdim) {
  return keepdim ? t : reshape(t, reduced_shape(in_shape, dims, true));
}

/// Number of elements each output of a reduction over `dims` combines.
inline int64_t reduced_count(const Shape& in, const std::vector<int64_t>& dims) {
  int64_t n = 1;
  for (int64_t d : dims) n *= in[d];
  return n;
}

}  // namespace skiff::reduce_detail
