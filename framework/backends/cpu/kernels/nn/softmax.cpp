// CPU softmax / log_softmax.
// Algorithm: the input is viewed as [outer, n, inner] (n = size of the softmax dim);
// each (outer, inner) line is shifted by its max before exp, so logits of any size
// stay finite; log_softmax is x - max - log(sum exp(x - max)). inner == 1 walks
// contiguous rows; inner > 1 processes blocks of adjacent lines so loads stay
// contiguous. Arithmetic in float (double for float64). Work is split over whole
// lines only, so results do not depend on the thread count.
// Layout: non-contiguous inputs are copied to contiguous first; output is contiguous.
// Reference: naive loops in tests/framework/ops/nn/softmax_test.cpp, tolerance 1e-6
// relative (float32), 1e-12 (float64).
#include <omp.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "framework/backends/cpu/loops.h"
#include "framework/backends/cpu/vec/vec_f32.h"

namespace skiff::cpu {
namespace {

constexpr int64_t kLineBlock = 64;  // lines processed together when inner > 1

template <typename T, bool kLog>
void softmax_lines(const T* x, T* y, int64_t outer, int64_t n, int64_t inner) {
  using A = acc_t<T>;
  const int64_t blocks_per_outer = (inner + kLineBlock - 1) / kLineBlock;
  const int64_t tasks = outer * blocks_per_outer;
  const bool par = tasks > 1 && outer * n * inner >= kParallelGrain && num_threads() > 1 && !omp_in_parallel();
#pragma omp parallel for schedule(static) if (par)
  for (int64_t task = 0; task < tasks; ++task) {
    const int64_t o = task / blocks_per_outer;
    const int64_t j0 = (task % blocks_per_outer) * kLineBlock;
    const int64_t w = std::min(kLineBlock, inner - j0);
    const T* xb = x + o * n * inner + j0;
    T* yb = y + o * n * inner + j0;
    A mx[kLineBlock], total[kLineBlock];
    for (int64_t j = 0; j < w; ++j) {
      mx[j] = -std::numeric_limits<A>::infinity();
      total[j] = A(0);
    }
    for (int64_t k = 0; k < n; ++k)
      for (int64_t j = 0; j < w; ++j) mx[j] = std::max(mx[j], A(xb[k * inner + j]));
    // A line of all -inf has max -inf; shifting by 0 instead keeps exp(-inf) = 0 (then 0/0 = nan, like PyTorch).
    for (int64_t j = 0; j < w; ++j)
      if (std::isinf(mx[j]) && mx[j] < 0) mx[j] = A(0);
    for (int64_t k = 0; k < n; ++k)
      for (int64_t j = 0; j < w; ++j) total[j] += std::exp(A(xb[k * inner + j]) - mx[j]);
    if constexpr (kLog) {
      for (int64_t j = 0; j < w; ++j) mx[j] += std::log(total[j]);
      for (int64_t k = 0; k < n; ++k)
        for (int64_t j = 0; j < w; ++j) yb[k * inner + j] = T(A(xb[k * inner + j]) - mx[j]);
    } else {
      for (int64_t j = 0; j < w; ++j) total[j] = A(1) / total[j];
      for (int64_t k = 0; k < n; ++k)
        for (int64_t j = 0; j < w; ++j) yb[k * inner + j] = T(std::exp(A(xb[k * inner + j]) - mx[j]) * total[j]);
    }
  }
}

// inner == 1: every line is a contiguous row.
template <typename T, bool kLog>
void softmax_rows(const T* x, T* y, int64_t rows, int64_t n) {
  using A = acc_t<T>;
  const bool par = rows > 1 && rows * n >= kParallelGrain && num_threads() > 1 && !omp_in_parallel();
#pragma omp parallel for schedule(static) if (par)
  for (int64_t r = 0; r < rows; ++r) {
    const T* xr = x + r * n;
    T* yr = y + r * n;
    A mx = -std::numeric_limits<A>::infinity();
    for (int64_t k = 0; k < n; ++k) mx = std::max(mx, A(xr[k]));
    if (std::isinf(mx) && mx < 0) mx = A(0);
    A total = A(0);
    if constexpr (kLog) {
      for (int64_t k = 0; k < n; ++k) total += std::exp(A(xr[k]) - mx);
      const A shift = mx + std::log(total);
      for (int64_t k = 0; k < n; ++k) yr[k] = T(A(xr[k]) - shift);
    } else if constexpr (std::is_same_v<T, float>) {
      // The vector exp (vec_f32.h, ~2 ulp): libm's scalar expf was most of a long causal
      // prefill, and slowest on masked scores, whose underflow takes its errno path.
      for (int64_t k = 0; k < n; ++k) yr[k] = xr[k] - mx;
      vec_f32().exp(yr, yr, n);
      for (int64_t k = 0; k < n; ++k) total += yr[k];
      const float inv = 1.0f / total;
      for (int64_t k = 0; k < n; ++k) yr[k] *= inv;
    } else {
      // Store exp once, then rescale: one exp per element.
      for (int64_t k = 0; k < n; ++k) {
        A e = std::exp(A(xr[k]) - mx);
        total += e;
        yr[k] = T(e);
      }
      const A inv = A(1) / total;
      if constexpr (std::is_same_v<T, A>) {
        for (int64_t k = 0; k < n; ++k) yr[k] *= inv;
      } else {
        // 16-bit outputs: recompute from the input instead of re-rounding a rounded value.
        for (int64_t k = 0; k < n; ++k) yr[k] = T(std::exp(A(xr[k]) - mx) * inv);
      }
    }
  }
}

template <bool kLog>
void softmax_cpu(const KernelContext& c) {
  const Tensor x = c.inputs[0].is_contiguous() ? c.inputs[0] : detail::contiguous_copy(c.inputs[0]);
  const Tensor& y = c.outputs[0];
  if (x.numel() == 0) return;
  const int64_t dim = c.attrs.get_int("dim");
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < dim; ++d) outer *= x.shape()[d];
  for (int64_t d = dim + 1; d < x.dim(); ++d) inner *= x.shape()[d];
  const int64_t n = x.shape()[dim];
  visit_floating(x.dtype(), kLog ? "log_softmax" : "softmax", [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* xp = static_cast<const T*>(x.data_ptr());
    T* yp = static_cast<T*>(y.data_ptr());
    if (inner == 1) softmax_rows<T, kLog>(xp, yp, outer, n);
    else softmax_lines<T, kLog>(xp, yp, outer, n, inner);
  });
}

}  // namespace

SKIFF_REGISTER_KERNEL(softmax, CPU, "cpu", kFloatTypes, 0, softmax_cpu<false>);
SKIFF_REGISTER_KERNEL(log_softmax, CPU, "cpu", kFloatTypes, 0, softmax_cpu<true>);

}  // namespace skiff::cpu
