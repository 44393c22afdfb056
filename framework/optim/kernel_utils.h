#pragma once
/// \file kernel_utils.h
/// Internal helpers for optimizer kernels: element loops and typed access.
/// Not part of the public API.

#include <cstdint>

#include "framework/core/threading.h"
#include "framework/tensor/tensor.h"

namespace skiff::optim::detail {

/// Runs fn(i) for i in [0, n). Iterations must be independent (element-wise), which
/// makes the result independent of the thread count.
template <typename Fn>
void parallel_elements(int64_t n, Fn&& fn) {
#pragma omp parallel for schedule(static) if (n > kParallelGrain) num_threads(num_threads())
  for (int64_t i = 0; i < n; ++i) fn(i);
}

/// Calls fn(TypeTag<float>) or fn(TypeTag<double>) for a compute dtype.
template <typename Fn>
void visit_compute(DType t, Fn&& fn) {
  if (t == DType::Float64)
    fn(TypeTag<double>{});
  else
    fn(TypeTag<float>{});
}

/// Writes `value` into a contiguous compute-dtype tensor `work` and, when `work` is a
/// separate working copy, back into `target` (converting dtype / strides).
void commit(const Tensor& target, const Tensor& work);

/// Contiguous compute-dtype working tensor for `p`: an alias of p's memory when p is
/// already contiguous and of the compute dtype, otherwise a copy (write back with commit()).
Tensor working_copy(const Tensor& p);
/// Contiguous tensor of dtype `t` holding g's values (no copy when already so).
Tensor as_contiguous(const Tensor& g, DType t);

}  // namespace skiff::optim::detail
