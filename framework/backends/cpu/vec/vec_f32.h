#pragma once
/// \file vec_f32.h
/// Float32 contiguous-array kernels compiled once per ISA (baseline SSE2, AVX2+FMA,
/// AVX-512) and chosen at run time from active_isa(), so the binary targets
/// baseline x86-64 and still uses the wide units where they exist.
///
/// Each function processes n contiguous elements; callers split work over threads.
/// exp is a range-reduced degree-7 polynomial (max relative error ~2 ulp, tested
/// against double std::exp); it flushes results below FLT_MIN to zero.

#include <cstdint>

#include "framework/core/cpu_features.h"

namespace skiff::cpu {

struct VecF32Kernels {
  const char* isa;
  void (*add)(const float* a, const float* b, float* out, int64_t n);
  void (*sub)(const float* a, const float* b, float* out, int64_t n);
  void (*mul)(const float* a, const float* b, float* out, int64_t n);
  void (*div)(const float* a, const float* b, float* out, int64_t n);
  void (*exp)(const float* x, float* out, int64_t n);
  void (*sigmoid)(const float* x, float* out, int64_t n);
  void (*relu)(const float* x, float* out, int64_t n);
  /// out = y > 0 ? g : 0 (relu's gradient from its output y).
  void (*relu_backward)(const float* g, const float* y, float* out, int64_t n);
  /// Odd polynomial below |x| = 0.2, 1 - 2 / (exp(2|x|) + 1) above (max relative error ~3 ulp).
  void (*tanh)(const float* x, float* out, int64_t n);
  /// out[r] = dot(w + r * ldw, x) over k elements, for r in [0, rows): a matrix-vector
  /// product with a row-major matrix (a Linear layer's weight times one token), reading
  /// each row once, four rows per pass over x. Sums in vector lanes, so the rounding
  /// differs from a sequential sum by a few ulp.
  void (*gemv_rows)(const float* w, int64_t ldw, const float* x, int64_t k, float* out, int64_t rows);
  /// out = x * clamp(x + 3, 0, 6) / 6.
  void (*hardswish)(const float* x, float* out, int64_t n);
  /// out = 0 below x = -3, g * (x / 3 + 1/2) on [-3, 3], g above (hardswish's gradient).
  void (*hardswish_backward)(const float* g, const float* x, float* out, int64_t n);
  /// Normalisation statistics: *sum += sum(x - shift), *sumsq += sum((x - shift)^2), in
  /// float64 with 8 interleaved accumulators (the same sums on every ISA).
  void (*shifted_moments)(const float* x, int64_t n, double shift, double* sum, double* sumsq);
  /// out = (x - mean) * scale + shift.
  void (*centered_affine)(const float* x, float* out, int64_t n, float mean, float scale, float shift);
  /// *sum_g += sum(g), *sum_gx += sum(g * (x - mean)): sums in vector lanes (float),
  /// so the rounding differs from a sequential sum.
  void (*grad_moments)(const float* g, const float* x, int64_t n, float mean, float* sum_g, float* sum_gx);
  /// out = g * a + x * b + c (batch norm's input gradient).
  void (*grad_affine)(const float* g, const float* x, float* out, int64_t n, float a, float b, float c);
};

/// The table for this machine (respects SKIFF_CPU_ISA).
const VecF32Kernels& vec_f32();
/// The table for a given ISA (for tests comparing ISA variants). An ISA above
/// active_isa() (the CPU lacks it, or SKIFF_CPU_ISA lowers it) gives the active
/// ISA's table instead: check the table's `isa` to know which one runs.
const VecF32Kernels& vec_f32_for(CpuIsa isa);

}  // namespace skiff::cpu
