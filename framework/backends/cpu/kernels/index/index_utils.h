#pragma once
/// \file index_utils.h
/// Shared pieces of the CPU index kernels: validation of int64 index values (done
/// serially, before any parallel loop, so kernels never throw inside OpenMP), and
/// a driver that walks the 1-D lines of a tensor along one dim.

#include <omp.h>

#include <array>

#include "framework/backends/cpu/loops.h"

namespace skiff::cpu {

/// Throws IndexError naming `op`, the bad value and the dim size if any element of
/// the int64 tensor `index` lies outside [0, size).
inline void check_index_range(const Tensor& index, int64_t size, int64_t dim, const char* op) {
  Tensor c = index.is_contiguous() ? index : detail::contiguous_copy(index);
  const int64_t* p = static_cast<const int64_t*>(c.data_ptr());
  const int64_t n = c.numel();
  for (int64_t i = 0; i < n; ++i)
    if (p[i] < 0 || p[i] >= size) [[unlikely]]
      SKIFF_THROW(IndexError, "{}: index {} is out of bounds for dim {} with size {}", op, p[i], dim, size);
}

/// Calls fn(offsets) once per line of `shape` along `dim`, where offsets[k] is the
/// element offset of the line's first element in operand k (its strides with the
/// line's coordinates on every other dim). Lines write disjoint outputs in every
/// caller, so they are split over threads when the work (shape.numel()) is large.
template <int N, typename Fn>
void for_each_line(const Shape& shape, int64_t dim, const std::array<Shape, N>& strides, Fn fn) {
  const int64_t len = shape.size() == 0 ? 1 : shape[dim];
  const int64_t total = shape.numel();
  if (total == 0 || len == 0) return;
  const int64_t lines = total / len;
  auto run = [&](int64_t line) {
    std::array<int64_t, N> off{};
    int64_t rem = line;
    for (int64_t d = shape.size() - 1; d >= 0; --d) {
      if (d == dim) continue;
      int64_t c = rem % shape[d];
      rem /= shape[d];
      for (int k = 0; k < N; ++k) off[k] += c * strides[k][d];
    }
    fn(off.data());
  };
  const bool par = lines > 1 && total >= kParallelGrain && num_threads() > 1 && !omp_in_parallel();
#pragma omp parallel for schedule(static) if (par)
  for (int64_t line = 0; line < lines; ++line) run(line);
}

/// Stride of `t` along dim (0 for a 0-d tensor, which has a single element).
inline int64_t dim_stride(const Tensor& t, int64_t dim) { return t.dim() == 0 ? 0 : t.strides()[dim]; }

}  // namespace skiff::cpu
