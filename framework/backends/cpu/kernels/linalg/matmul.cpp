// CPU reference kernel of the batched, broadcasting matmul primitive.
//  - float32/float64: Eigen GEMM on Eigen::Map views of the operands. Row-major and
//    transposed (column-major) operands are mapped in place; other layouts are copied
//    to contiguous first (gemm_layout.h). Eigen parallelizes one large GEMM with OpenMP.
//  - float16/bfloat16: converted to float32, multiplied as above, rounded once at the end.
//  - integers: i-k-j loops accumulating in uint64 (wraps like NumPy, without signed
//    overflow UB), reading arbitrary strides directly.
// Many small matrices are spread over threads one matrix each (kParallelGrain); each
// output matrix is computed by one code path, so batching does not change results.
// Tested against naive double loops in tests/framework/ops/linalg/matmul_test.cpp
// (float32 at 1e-5 relative, float64 at 1e-12, integers exact).
#include <Eigen/Core>
#include <cstring>

#include "framework/backends/cpu/kernels/linalg/gemm_layout.h"
#include "framework/backends/cpu/loops.h"

namespace skiff::cpu {
namespace {

using gemm::MatrixLayout;

template <typename T>
using RowMajorMap = Eigen::Map<const Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>, 0,
                               Eigen::OuterStride<>>;
template <typename T>
using ColMajorMap = Eigen::Map<const Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic, Eigen::ColMajor>, 0,
                               Eigen::OuterStride<>>;

// c[m, n] (contiguous) = a[m, k] x b[k, n] with a and b in BLAS layouts.
template <typename T>
void eigen_gemm(const T* a, MatrixLayout la, const T* b, MatrixLayout lb, T* c, int64_t m, int64_t n, int64_t k) {
  Eigen::Map<Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>> cm(c, m, n);
  auto with_b = [&](const auto& am) {
    if (lb.transposed) cm.noalias() = am * ColMajorMap<T>(b, k, n, Eigen::OuterStride<>(lb.ld));
    else cm.noalias() = am * RowMajorMap<T>(b, k, n, Eigen::OuterStride<>(lb.ld));
  };
  if (la.transposed) with_b(ColMajorMap<T>(a, m, k, Eigen::OuterStride<>(la.ld)));
  else with_b(RowMajorMap<T>(a, m, k, Eigen::OuterStride<>(la.ld)));
}

template <typename T>
void matmul_float(const Tensor& a_in, const Tensor& b_in, const Tensor& out) {
  Tensor a = gemm::blas_ready(a_in), b = gemm::blas_ready(b_in);
  const MatrixLayout la = *gemm::blas_layout(a), lb = *gemm::blas_layout(b);
  gemm::BatchPlan p = gemm::plan_batches(a, b, out);
  const T* pa = a.data<T>();
  const T* pb = b.data<T>();
  T* pc = out.data<T>();
  gemm::for_each_matrix(p, [&](int64_t i) {
    eigen_gemm<T>(pa + p.a_offsets[size_t(i)], la, pb + p.b_offsets[size_t(i)], lb, pc + i * p.m * p.n, p.m, p.n,
                  p.k);
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
  visit_real(t, "matmul", [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double>) matmul_float<T>(a, b, out);
    else if constexpr (std::is_integral_v<T>) matmul_integer<T>(a, b, out);
  });
}

}  // namespace

SKIFF_REGISTER_KERNEL(matmul, CPU, "cpu", kFloatTypes | kIntTypes, 0, matmul_cpu);

}  // namespace skiff::cpu
