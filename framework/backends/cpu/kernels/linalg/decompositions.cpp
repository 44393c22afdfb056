// CPU kernels of solve, inverse, cholesky and det (float32/float64), one Eigen
// factorization per matrix of the batch, in order (Eigen's blocked LU/LLT use the
// OpenMP threads for large n).
//  - solve/inverse/det: PartialPivLU. A matrix counts as singular when an LU pivot is
//    not finite or |u_ii| <= n * eps * max_j |u_jj| (PartialPivLU never fails by itself).
//  - cholesky: LLT on the lower triangle; Eigen reports a non-positive pivot.
// Inputs are copied to contiguous row-major first; errors are raised after the batch
// loop finds the first bad matrix (no OpenMP region is open then).
// Tested against hand-computed values and A X = B residuals (1e-10 in float64) in
// tests/framework/ops/linalg/decompositions_test.cpp.
#include <Eigen/Cholesky>
#include <Eigen/Core>
#include <Eigen/LU>
#include <cmath>
#include <limits>

#include "framework/backends/cpu/loops.h"

namespace skiff::cpu {
namespace {

template <typename T>
using Matrix = Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
template <typename T>
using MatrixMap = Eigen::Map<Matrix<T>>;
template <typename T>
using ConstMatrixMap = Eigen::Map<const Matrix<T>>;

template <typename T>
bool is_singular(const Eigen::PartialPivLU<Matrix<T>>& lu) {
  const auto diag = lu.matrixLU().diagonal().cwiseAbs();
  const T largest = diag.maxCoeff();
  if (!std::isfinite(largest) || largest == T(0)) return true;
  const T tolerance = T(diag.size()) * std::numeric_limits<T>::epsilon() * largest;
  return (diag.array() <= tolerance).any() || !diag.allFinite();
}

// Calls fn(T tag) for float32/float64 with the square size n and the number of matrices.
template <typename Fn>
void visit_square(const Tensor& a, const char* op, Fn&& fn) {
  const int64_t n = a.shape().back();
  const int64_t count = n == 0 ? a.numel() : a.numel() / (n * n);
  visit_floating(a.dtype(), op, [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double>) fn(tag, n, count);
    else SKIFF_THROW(NotImplementedError, "{}: dtype {} is not supported (float32/float64 only)", op,
                     dtype_name(a.dtype()));
  });
}

[[noreturn]] void throw_singular(const char* op, int64_t index, const Shape& shape) {
  SKIFF_THROW(ValueError, "{}: expected invertible matrices, got a singular one at batch index {} (A {})", op,
              index, shape);
}

void solve_cpu(const KernelContext& c) {
  Tensor a = detail::contiguous_copy(c.inputs[0]), b = detail::contiguous_copy(c.inputs[1]);
  const Tensor& out = c.outputs[0];
  visit_square(a, "solve", [&](auto tag, int64_t n, int64_t count) {
    using T = typename decltype(tag)::type;
    const int64_t k = b.shape().back();
    if (n == 0 || k == 0) return;
    for (int64_t i = 0; i < count; ++i) {
      Eigen::PartialPivLU<Matrix<T>> lu(ConstMatrixMap<T>(a.data<T>() + i * n * n, n, n));
      if (is_singular(lu)) throw_singular("solve", i, c.inputs[0].shape());
      MatrixMap<T>(out.data<T>() + i * n * k, n, k) = lu.solve(ConstMatrixMap<T>(b.data<T>() + i * n * k, n, k));
    }
  });
}

void inverse_cpu(const KernelContext& c) {
  Tensor a = detail::contiguous_copy(c.inputs[0]);
  const Tensor& out = c.outputs[0];
  visit_square(a, "inverse", [&](auto tag, int64_t n, int64_t count) {
    using T = typename decltype(tag)::type;
    if (n == 0) return;
    for (int64_t i = 0; i < count; ++i) {
      Eigen::PartialPivLU<Matrix<T>> lu(ConstMatrixMap<T>(a.data<T>() + i * n * n, n, n));
      if (is_singular(lu)) throw_singular("inverse", i, c.inputs[0].shape());
      MatrixMap<T>(out.data<T>() + i * n * n, n, n) = lu.inverse();
    }
  });
}

void cholesky_cpu(const KernelContext& c) {
  Tensor a = detail::contiguous_copy(c.inputs[0]);
  const Tensor& out = c.outputs[0];
  visit_square(a, "cholesky", [&](auto tag, int64_t n, int64_t count) {
    using T = typename decltype(tag)::type;
    if (n == 0) return;
    for (int64_t i = 0; i < count; ++i) {
      Eigen::LLT<Matrix<T>, Eigen::Lower> llt(ConstMatrixMap<T>(a.data<T>() + i * n * n, n, n));
      SKIFF_CHECK(llt.info() == Eigen::Success && llt.matrixLLT().diagonal().allFinite(),
                  "cholesky: expected symmetric positive-definite matrices, got one that is not at batch index {} "
                  "(A {})", i, c.inputs[0].shape());
      MatrixMap<T>(out.data<T>() + i * n * n, n, n) = llt.matrixL().toDenseMatrix();
    }
  });
}

void det_cpu(const KernelContext& c) {
  Tensor a = detail::contiguous_copy(c.inputs[0]);
  const Tensor& out = c.outputs[0];
  visit_square(a, "det", [&](auto tag, int64_t n, int64_t count) {
    using T = typename decltype(tag)::type;
    T* dst = out.data<T>();
    for (int64_t i = 0; i < out.numel(); ++i) {
      if (n == 0) { dst[i] = T(1); continue; }
      Eigen::PartialPivLU<Matrix<T>> lu(ConstMatrixMap<T>(a.data<T>() + i * n * n, n, n));
      dst[i] = lu.determinant();
    }
  });
}

}  // namespace

constexpr DTypeSet kDecompositionTypes = dtype_bit(DType::Float32) | dtype_bit(DType::Float64);
SKIFF_REGISTER_KERNEL(solve, CPU, "cpu", kDecompositionTypes, 0, solve_cpu);
SKIFF_REGISTER_KERNEL(inverse, CPU, "cpu", kDecompositionTypes, 0, inverse_cpu);
SKIFF_REGISTER_KERNEL(cholesky, CPU, "cpu", kDecompositionTypes, 0, cholesky_cpu);
SKIFF_REGISTER_KERNEL(det, CPU, "cpu", kDecompositionTypes, 0, det_cpu);

}  // namespace skiff::cpu
