// CPU reference kernel of the batched, broadcasting matmul primitive.
//  - float32/float64: Eigen GEMM on Eigen::Map views of the operands, compiled for
//    baseline/AVX2/AVX-512 and picked at run time (eigen_gemm.h). Row-major and
//    transposed (column-major) operands are mapped in place; other layouts are copied
//    to contiguous first (gemm_layout.h). Eigen parallelizes one large GEMM with OpenMP.
//  - float16/bfloat16: converted to float32, multiplied as above, rounded once at the end.
//  - complex64/complex128: Eigen's complex GEMM on strided Eigen::Map views (baseline
//    ISA, no per-ISA copies: complex products are rare next to float32 ones).
//  - integers: i-k-j loops accumulating in uint64 (wraps like NumPy, without signed
//    overflow UB), reading arbitrary strides directly.
// Many small matrices are spread over threads one matrix each (kParallelGrain); each
// output matrix is computed by one code path, so batching does not change results.
// Tested against naive double loops in tests/framework/ops/linalg/matmul_test.cpp
// (float32 at 1e-5 relative, float64 at 1e-12, integers exact).
#include <Eigen/Core>
#include <complex>
#include <cstring>

#include "framework/backends/cpu/kernels/linalg/eigen_gemm.h"
#include "framework/backends/cpu/loops.h"
#include "framework/core/cpu_features.h"

namespace skiff::cpu {
namespace {

// The Eigen GEMM variant for this CPU (eigen_gemm.h).
template <typename T>
gemm::EigenGemmFn<T> pick_eigen_gemm() {
  const CpuIsa isa = active_isa();
  if constexpr (std::is_same_v<T, float>)
    return isa == CpuIsa::Avx512 ? gemm::eigen_gemm_f32_avx512
           : isa == CpuIsa::Avx2 ? gemm::eigen_gemm_f32_avx2
                                 : gemm::eigen_gemm_f32_baseline;
  else
    return isa == CpuIsa::Avx512 ? gemm::eigen_gemm_f64_avx512
           : isa == CpuIsa::Avx2 ? gemm::eigen_gemm_f64_avx2
                                 : gemm::eigen_gemm_f64_baseline;
}

template <typename T>
void matmul_float(const Tensor& a_in, const Tensor& b_in, const Tensor& out) {
  Tensor a = gemm::blas_ready(a_in), b = gemm::blas_ready(b_in);
  const gemm::MatrixLayout la = *gemm::blas_layout(a), lb = *gemm::blas_layout(b);
  gemm::BatchPlan p = gemm::plan_batches(a, b, out);
  const T* pa = a.data<T>();
  const T* pb = b.data<T>();
  T* pc = out.data<T>();
  const gemm::EigenGemmFn<T> eigen_gemm = pick_eigen_gemm<T>();
  gemm::for_each_matrix(p, [&](int64_t i) {
    eigen_gemm(pa + p.a_offsets[size_t(i)], la, pb + p.b_offsets[size_t(i)], lb, pc + i * p.m * p.n, p.m, p.n, p.k);
  });
}

template <typename T>
void matmul_complex(const Tensor& a, const Tensor& b, const Tensor& out) {
  using Mat = Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
  using Strided = Eigen::Map<const Mat, 0, Eigen::Stride<Eigen::Dynamic, Eigen::Dynamic>>;
  gemm::BatchPlan p = gemm::plan_batches(a, b, out);
  const Eigen::Stride<Eigen::Dynamic, Eigen::Dynamic> sa(a.strides()[a.dim() - 2], a.strides()[a.dim() - 1]);
  const Eigen::Stride<Eigen::Dynamic, Eigen::Dynamic> sb(b.strides()[b.dim() - 2], b.strides()[b.dim() - 1]);
  const T* pa = a.data<T>();
  const T* pb = b.data<T>();
  T* pc = out.data<T>();
  gemm::for_each_matrix(p, [&](int64_t i) {
    Eigen::Map<Mat> cm(pc + i * p.m * p.n, p.m, p.n);
    cm.noalias() = Strided(pa + p.a_offsets[size_t(i)], p.m, p.k, sa) * Strided(pb + p.b_offsets[size_t(i)], p.k, p.n, sb);
  });
}

template <typename T>
void matmul_integer(const Tensor& a, const Tensor& b, const Tensor& out) {
  gemm::BatchPlan p = gemm::plan_batches(a, b, out);
  const int64_t ars = a.strides()[a.dim() - 2], acs = a.strides()[a.dim() - 1];
  const int64_t brs = b.strides()[b.dim() - 2], bcs = b.strides()[b.dim() - 1];
  const T* pa = a.data<T>();
  const T* pb = b.data<T>();
  T* pc = out.data<T>();
  const int64_t rows = p.batch() * p.m;
  const bool par = rows > 1 && rows * p.n * p.k >= kParallelGrain && num_threads() > 1 && !omp_in_parallel();
#pragma omp parallel if (par)
  {
    std::vector<uint64_t> acc(size_t(p.n));
#pragma omp for schedule(static)
    for (int64_t r = 0; r < rows; ++r) {
      const int64_t bi = r / p.m, i = r % p.m;
      const T* arow = pa + p.a_offsets[size_t(bi)] + i * ars;
      const T* bmat = pb + p.b_offsets[size_t(bi)];
      std::fill(acc.begin(), acc.end(), 0);
      for (int64_t kk = 0; kk < p.k; ++kk) {
        const uint64_t av = uint64_t(int64_t(arow[kk * acs]));
        const T* brow = bmat + kk * brs;
        for (int64_t j = 0; j < p.n; ++j) acc[size_t(j)] += av * uint64_t(int64_t(brow[j * bcs]));
      }
      T* crow = pc + r * p.n;
      for (int64_t j = 0; j < p.n; ++j) crow[j] = T(acc[size_t(j)]);
    }
  }
}

void matmul_cpu(const KernelContext& c) {
  const Tensor &a = c.inputs[0], &b = c.inputs[1], &out = c.outputs[0];
  if (out.numel() == 0) return;
  const int64_t k = a.shape()[a.dim() - 1];
  if (k == 0) {
    std::memset(out.data_ptr(), 0, size_t(out.nbytes()));
    return;
  }
  DType t = out.dtype();
  if (t == DType::Float16 || t == DType::BFloat16) {
    Tensor acc = empty(out.shape(), DType::Float32);
    matmul_float<float>(detail::cast(a, DType::Float32), detail::cast(b, DType::Float32), acc);
    detail::copy_into(out, acc);
    return;
  }
  if (t == DType::Complex64) return matmul_complex<complex64>(a, b, out);
  if (t == DType::Complex128) return matmul_complex<complex128>(a, b, out);
  visit_real(t, "matmul", [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double>) matmul_float<T>(a, b, out);
    else if constexpr (std::is_integral_v<T>) matmul_integer<T>(a, b, out);
  });
}

}  // namespace

SKIFF_REGISTER_KERNEL(matmul, CPU, "cpu", kFloatTypes | kIntTypes | kComplexTypes, 0, matmul_cpu);

}  // namespace skiff::cpu
