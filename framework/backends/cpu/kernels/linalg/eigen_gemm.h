#pragma once
// Eigen GEMM compiled once per ISA (eigen_gemm_{baseline,avx2,avx512}.cpp) and picked at
// run time from active_isa(). Each variant renames Eigen's namespace before including it,
// so the three copies of Eigen's inline templates never merge at link time (an ODR merge
// could otherwise run AVX-512 code on a CPU without it).
#include <cstdint>

#include "framework/backends/cpu/kernels/linalg/gemm_layout.h"

namespace skiff::cpu::gemm {

/// c[m, n] (contiguous row-major) = a[m, k] x b[k, n], a and b in BLAS layouts.
template <typename T>
using EigenGemmFn = void (*)(const T* a, MatrixLayout la, const T* b, MatrixLayout lb, T* c, int64_t m, int64_t n,
                             int64_t k);

#define SKIFF_DECLARE_EIGEN_GEMM(isa)                                                                       \
  void eigen_gemm_f32_##isa(const float*, MatrixLayout, const float*, MatrixLayout, float*, int64_t, int64_t, \
                            int64_t);                                                                       \
  void eigen_gemm_f64_##isa(const double*, MatrixLayout, const double*, MatrixLayout, double*, int64_t,       \
                            int64_t, int64_t);
SKIFF_DECLARE_EIGEN_GEMM(baseline)
SKIFF_DECLARE_EIGEN_GEMM(avx2)
SKIFF_DECLARE_EIGEN_GEMM(avx512)
#undef SKIFF_DECLARE_EIGEN_GEMM

}  // namespace skiff::cpu::gemm
