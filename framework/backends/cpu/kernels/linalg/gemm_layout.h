#pragma once
// Shared by the CPU and oneDNN matmul kernels: how a strided operand maps onto a
// BLAS-style (row-major or transposed, leading dimension) matrix, and the per-batch
// element offsets of a broadcast batched product. Header-only so the oneDNN backend
// does not link the CPU backend.
#include <omp.h>

#include <algorithm>
#include <cstdint>
#include <optional>
#include <vector>

#include "framework/core/threading.h"
#include "framework/tensor/tensor.h"

namespace skiff::cpu::gemm {

/// A [rows, cols] matrix stored either row-major (element (i, j) at i * ld + j) or
/// transposed, i.e. column-major (element (i, j) at i + j * ld).
struct MatrixLayout {
  bool transposed = false;
  int64_t ld = 1;
};

/// The BLAS layout of a matrix with the given element strides, if it has one.
/// Strides of size-1 dims do not matter (they come out of views arbitrary).
inline std::optional<MatrixLayout> blas_layout(int64_t rows, int64_t cols, int64_t row_stride, int64_t col_stride) {
  if (cols == 1 || col_stride == 1) {
    int64_t ld = rows == 1 ? std::max<int64_t>(cols, 1) : row_stride;
    if (ld >= std::max<int64_t>(cols, 1)) return MatrixLayout{false, ld};
  }
  if (rows == 1 || row_stride == 1) {
    int64_t ld = cols == 1 ? std::max<int64_t>(rows, 1) : col_stride;
    if (ld >= std::max<int64_t>(rows, 1)) return MatrixLayout{true, ld};
  }
  return std::nullopt;
}

inline std::optional<MatrixLayout> blas_layout(const Tensor& t) {
  int64_t d = t.dim();
  return blas_layout(t.shape()[d - 2], t.shape()[d - 1], t.strides()[d - 2], t.strides()[d - 1]);
}

/// `t` itself when its matrices have a BLAS layout, else a contiguous copy.
inline Tensor blas_ready(const Tensor& t) { return blas_layout(t) ? t : detail::contiguous_copy(t); }

/// A batched product out[b] = a[b] x b[b] with broadcast batch dims, flattened to a
/// list of element offsets (one per output matrix, in output order).
struct BatchPlan {
  int64_t m = 0, n = 0, k = 0;
  std::vector<int64_t> a_offsets, b_offsets;
  int64_t batch() const { return int64_t(a_offsets.size()); }
};

/// Plans a [Ba..., M, K] x b [Bb..., K, N] -> out [B..., M, N] (out's shape already broadcast).
inline BatchPlan plan_batches(const Tensor& a, const Tensor& b, const Tensor& out) {
  BatchPlan p;
  p.m = a.shape()[a.dim() - 2];
  p.k = a.shape()[a.dim() - 1];
  p.n = b.shape()[b.dim() - 1];
  const int64_t nb = out.dim() - 2;
  Shape batch(out.shape().begin(), out.shape().begin() + nb);
  // Element strides of a and b along the output's batch dims (0 where broadcast).
  auto batch_strides = [&](const Tensor& t) {
    Shape st;
    st.resize(nb);
    const int64_t lead = nb - (t.dim() - 2);
    for (int64_t d = lead; d < nb; ++d) st[d] = t.shape()[d - lead] == 1 ? 0 : t.strides()[d - lead];
    return st;
  };
  Shape sa = batch_strides(a), sb = batch_strides(b);
  const int64_t count = batch.numel();
  p.a_offsets.resize(size_t(count));
  p.b_offsets.resize(size_t(count));
  Shape idx;
  idx.resize(nb);
  int64_t oa = 0, ob = 0;
  for (int64_t i = 0; i < count; ++i) {
    p.a_offsets[size_t(i)] = oa;
    p.b_offsets[size_t(i)] = ob;
    for (int64_t d = nb - 1; d >= 0; --d) {  // odometer increment, innermost batch dim fastest
      oa += sa[d];
      ob += sb[d];
      if (++idx[d] < batch[d]) break;
      oa -= sa[d] * batch[d];
      ob -= sb[d] * batch[d];
      idx[d] = 0;
    }
  }
  return p;
}

// Runs one(i) for every matrix of the batch: one matrix per thread when there are
// enough of them to keep every thread busy and they are not huge, else in order
// (each GEMM then uses the threads itself).
template <typename Fn>
void for_each_matrix(const BatchPlan& p, Fn&& one) {
  const int64_t work = p.m * p.n * std::max<int64_t>(p.k, 1);
  const int64_t threads = num_threads();
  const bool balanced = p.batch() >= 4 * threads || p.batch() % threads == 0;
  const bool across = threads > 1 && p.batch() >= threads && balanced && work < 256 * 256 * 256 &&
                      p.batch() * work >= kParallelGrain && !omp_in_parallel();
  if (!across) {
    for (int64_t i = 0; i < p.batch(); ++i) one(i);
    return;
  }
#pragma omp parallel for schedule(static)
  for (int64_t i = 0; i < p.batch(); ++i) one(i);
}

}  // namespace skiff::cpu::gemm
