#pragma once
/// \file reduce_utils.h
/// The reduction driver for CPU kernels: reduced dims are moved last (through a
/// contiguous copy when needed) so every output element reduces one contiguous
/// block. Work is split over outputs only, so results do not depend on the
/// thread count.

#include <omp.h>

#include <algorithm>
#include <numeric>

#include "framework/backends/cpu/loops.h"

namespace skiff::cpu {

/// Input re-laid out as [outer, R] contiguous, where R is the product of reduced dims.
struct ReduceLayout {
  Tensor data;        ///< contiguous, reduced dims last
  int64_t outer = 1;  ///< number of output elements
  int64_t inner = 1;  ///< elements per reduction block
};

inline ReduceLayout reduce_layout(const Tensor& in, const std::vector<int64_t>& dims) {
  std::vector<int64_t> perm;
  Shape s, st;
  ReduceLayout L;
  for (int64_t d = 0; d < in.dim(); ++d)
    if (std::find(dims.begin(), dims.end(), d) == dims.end()) {
      perm.push_back(d);
      L.outer *= in.shape()[d];
    }
  for (int64_t d : dims) {
    perm.push_back(d);
    L.inner *= in.shape()[d];
  }
  for (int64_t d : perm) {
    s.push_back(in.shape()[d]);
    st.push_back(in.strides()[d]);
  }
  Tensor v = detail::make_view(in, s, st, in.offset());
  L.data = v.is_contiguous() ? v : detail::contiguous_copy(v);
  return L;
}

/// out[i] = fn(block_i, R, i) for each output element i (out must be contiguous).
template <typename T, typename Out, typename BlockFn>
void reduce_blocks(const Tensor& out, const Tensor& in, const std::vector<int64_t>& dims, BlockFn fn) {
  ReduceLayout L = reduce_layout(in, dims);
  const T* src = static_cast<const T*>(L.data.data_ptr());
  Out* dst = static_cast<Out*>(out.data_ptr());
  const int64_t outer = L.outer, inner = L.inner;
  const bool par = outer > 1 && outer * inner >= kParallelGrain && num_threads() > 1 && !omp_in_parallel();
#pragma omp parallel for schedule(static) if (par)
  for (int64_t i = 0; i < outer; ++i) dst[i] = fn(src + i * inner, inner, i);
}

/// Sum of n values with a fixed blocking (so it is the same on any thread count)
/// and 8 independent accumulators the compiler can keep in vector registers.
template <typename A, typename T>
A block_sum(const T* p, int64_t n) {
  A acc[8] = {};
  int64_t i = 0;
  for (; i + 8 <= n; i += 8)
    for (int k = 0; k < 8; ++k) acc[k] += A(p[i + k]);
  A total = A(0);
  for (int k = 0; k < 8; ++k) total += acc[k];
  for (; i < n; ++i) total += A(p[i]);
  return total;
}

}  // namespace skiff::cpu
