#pragma once
/// \file strided_loop.h
/// The element-wise iteration engine used by copies and CPU kernels.
///
/// for_each_strided<N>() walks N operands of the same (broadcast) shape, each
/// with its own byte strides, and calls `inner(ptrs, strides, n)` on runs along
/// the innermost dimension. Dimensions are coalesced first, so contiguous
/// tensors become one long run that the compiler can vectorize; large loops are
/// split over OpenMP threads by ranges of the flattened outer index, which keeps
/// results independent of the thread count.

#include <omp.h>

#include <array>
#include <cstdint>

#include "framework/core/shape.h"
#include "framework/core/threading.h"

namespace skiff::detail {

template <int N>
struct StridedLayout {
  Shape shape;                      ///< coalesced shape, innermost last
  std::array<Shape, N> strides;     ///< byte strides per operand
};

/// Drops size-1 dims and merges dims that are contiguous with their neighbour in every operand.
template <int N>
StridedLayout<N> coalesce(const Shape& shape, const std::array<Shape, N>& byte_strides) {
  StridedLayout<N> out;
  for (int64_t d = 0; d < shape.size(); ++d) {
    if (shape[d] == 1) continue;
    if (!out.shape.empty()) {
      bool mergeable = true;
      int64_t last = out.shape.size() - 1;
      for (int k = 0; k < N; ++k)
        if (out.strides[k][last] != byte_strides[k][d] * shape[d]) { mergeable = false; break; }
      if (mergeable) {
        out.shape[last] *= shape[d];
        for (int k = 0; k < N; ++k) out.strides[k][last] = byte_strides[k][d];
        continue;
      }
    }
    out.shape.push_back(shape[d]);
    for (int k = 0; k < N; ++k) out.strides[k].push_back(byte_strides[k][d]);
  }
  if (out.shape.empty()) {
    out.shape.push_back(1);
    for (int k = 0; k < N; ++k) out.strides[k].push_back(0);
  }
  return out;
}

/// Calls inner(char* ptrs[N], const int64_t strides[N], int64_t n) over every
/// innermost run. `parallel` allows OpenMP when the total work is large.
template <int N, typename Inner>
void for_each_strided(const Shape& shape, std::array<char*, N> base, const std::array<Shape, N>& byte_strides,
                      Inner&& inner, bool parallel = true) {
  if (shape.numel() == 0) return;
  StridedLayout<N> L = coalesce<N>(shape, byte_strides);
  const int64_t nd = L.shape.size();
  const int64_t inner_n = L.shape[nd - 1];
  int64_t inner_st[N];
  for (int k = 0; k < N; ++k) inner_st[k] = L.strides[k][nd - 1];
  int64_t outer = 1;
  for (int64_t d = 0; d < nd - 1; ++d) outer *= L.shape[d];
  const int64_t total = outer * inner_n;
  const bool par = parallel && total >= kParallelGrain && num_threads() > 1 && !omp_in_parallel();

  if (outer == 1) {
    // One run: split it into chunks when parallel.
    if (!par) {
      char* p[N];
      for (int k = 0; k < N; ++k) p[k] = base[k];
      inner(p, inner_st, inner_n);
      return;
    }
#pragma omp parallel
    {
      int nt = omp_get_num_threads(), t = omp_get_thread_num();
      int64_t chunk = (inner_n + nt - 1) / nt;
      int64_t lo = std::min<int64_t>(inner_n, chunk * t), hi = std::min<int64_t>(inner_n, lo + chunk);
      if (hi > lo) {
        char* p[N];
        for (int k = 0; k < N; ++k) p[k] = base[k] + lo * inner_st[k];
        inner(p, inner_st, hi - lo);
      }
    }
    return;
  }

  auto run_range = [&](int64_t lo, int64_t hi) {
    // Decompose lo into an outer multi-index, then step it like an odometer.
    int64_t idx[kMaxDims] = {};
    int64_t rem = lo;
    for (int64_t d = nd - 2; d >= 0; --d) {
      idx[d] = rem % L.shape[d];
      rem /= L.shape[d];
    }
    char* p[N];
    for (int k = 0; k < N; ++k) {
      p[k] = base[k];
      for (int64_t d = 0; d < nd - 1; ++d) p[k] += idx[d] * L.strides[k][d];
    }
    for (int64_t i = lo; i < hi; ++i) {
      inner(p, inner_st, inner_n);
      for (int64_t d = nd - 2; d >= 0; --d) {
        for (int k = 0; k < N; ++k) p[k] += L.strides[k][d];
        if (++idx[d] < L.shape[d]) break;
        for (int k = 0; k < N; ++k) p[k] -= L.strides[k][d] * L.shape[d];
        idx[d] = 0;
      }
    }
  };
  if (!par) {
    run_range(0, outer);
    return;
  }
#pragma omp parallel
  {
    int nt = omp_get_num_threads(), t = omp_get_thread_num();
    int64_t chunk = (outer + nt - 1) / nt;
    int64_t lo = std::min<int64_t>(outer, chunk * t), hi = std::min<int64_t>(outer, lo + chunk);
    if (hi > lo) run_range(lo, hi);
  }
}

/// Byte strides of `t` broadcast to `shape` (stride 0 along broadcast dims).
template <typename TensorT>
Shape broadcast_byte_strides(const TensorT& t, const Shape& shape) {
  Shape st;
  st.resize(shape.size());
  int64_t off = shape.size() - t.dim();
  for (int64_t d = 0; d < shape.size(); ++d) {
    if (d < off) { st[d] = 0; continue; }
    int64_t sd = t.shape()[d - off];
    // An empty tensor's strides may be saturated (contiguous_strides); so are its byte
    // strides then, and the loops never use them (they return when the shape is empty).
    if (sd == 1) st[d] = 0;
    else if (__builtin_mul_overflow(t.strides()[d - off], t.itemsize(), &st[d])) st[d] = INT64_MAX;
  }
  return st;
}

}  // namespace skiff::detail
