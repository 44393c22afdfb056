// oneDNN kernel of the float32 matmul primitive: one dnnl_sgemm call (row-major,
// JIT-compiled for the CPU's ISA) per output matrix. Transposed (column-major)
// operands are passed as transa/transb with their leading dimension, so t(w) and
// transpose(k, -1, -2) views are never copied; other layouts are copied to contiguous
// (gemm_layout.h). Many small matrices are spread over threads one matrix each
// (inside an OpenMP region sgemm runs single-threaded); large ones use oneDNN's own
// threading, which shares skiff's OpenMP pool.
// Why sgemm and not the dnnl::matmul primitive: for f32 both end in the same GEMM
// driver in oneDNN 2.6 and measured the same here (single thread, 512..2048: within
// run-to-run noise, the primitive a few % lower at 2048), while the primitive would need
// a descriptor per (shape, strides) and a cache; sgemm takes any leading dimension as is.
// Reference: the "cpu" matmul kernel; tested within 1e-4 relative in matmul_test.cpp.
#include <dnnl.h>

#include <algorithm>
#include <atomic>
#include <cstring>

#include "framework/backends/cpu/kernels/linalg/gemm_layout.h"
#include "framework/backends/cpu/vec/vec_f32.h"
#include "framework/ops/op.h"

namespace skiff::onednn {
namespace {

namespace gemm = cpu::gemm;

// c[n] = dot(a, b row n) for n < rows: b holds `rows` rows of k floats, ldb apart. The rows
// are split over the threads in blocks, so each thread streams its own part of b.
void gemv_transposed(const float* a, const float* b, int64_t ldb, int64_t k, int64_t rows, float* c) {
  const auto& vec = cpu::vec_f32();
  constexpr int64_t kBlock = 64;  // rows per task: 64 x k floats is far above the parallel grain
  const int64_t blocks = (rows + kBlock - 1) / kBlock;
  const bool parallel = num_threads() > 1 && blocks > 1 && !omp_in_parallel();
#pragma omp parallel for schedule(static) if (parallel)
  for (int64_t blk = 0; blk < blocks; ++blk) {
    const int64_t r0 = blk * kBlock, n = std::min(kBlock, rows - r0);
    vec.gemv_rows(b + r0 * ldb, ldb, a, k, c + r0, n);
  }
}

void matmul_onednn(const KernelContext& c) {
  const Tensor& out = c.outputs[0];
  if (out.numel() == 0) return;
  Tensor a = gemm::blas_ready(c.inputs[0]), b = gemm::blas_ready(c.inputs[1]);
  if (a.shape()[a.dim() - 1] == 0) {
    std::memset(out.data_ptr(), 0, size_t(out.nbytes()));
    return;
  }
  const gemm::MatrixLayout la = *gemm::blas_layout(a), lb = *gemm::blas_layout(b);
  const gemm::BatchPlan p = gemm::plan_batches(a, b, out);
  const float* pa = a.data<float>();
  const float* pb = b.data<float>();
  float* pc = out.data<float>();
  if (p.m == 1 && lb.transposed && p.batch() == 1 && p.k >= 64) {
    // One row times a transposed row-major matrix, as a Linear layer decodes one token:
    // a matrix-vector product that streams the weight once. sgemm's M=1 path decoded 10
    // to 15% slower on bench/compare_llamacpp.sh's 78.6M model (best of three: 47 vs 53
    // tokens/s on one thread, 83 vs 98 on two).
    gemv_transposed(pa + p.a_offsets[0], pb + p.b_offsets[0], lb.ld, p.k, p.n, pc);
    return;
  }
  const char ta = la.transposed ? 'T' : 'N', tb = lb.transposed ? 'T' : 'N';
  // Errors cannot leave an OpenMP region: remember the first one and throw after.
  std::atomic<int> failure{int(dnnl_success)};
  gemm::for_each_matrix(p, [&](int64_t i) {
    dnnl_status_t st = dnnl_sgemm(ta, tb, p.m, p.n, p.k, 1.0f, pa + p.a_offsets[size_t(i)], la.ld,
                                  pb + p.b_offsets[size_t(i)], lb.ld, 0.0f, pc + i * p.m * p.n, p.n);
    if (st != dnnl_success) failure.store(int(st));
  });
  SKIFF_CHECK_T(DeviceError, failure.load() == int(dnnl_success),
                "matmul: dnnl_sgemm failed with status {} for a {} x b {} (M={}, N={}, K={}, lda={}, ldb={})",
                failure.load(), c.inputs[0].shape(), c.inputs[1].shape(), p.m, p.n, p.k, la.ld, lb.ld);
}

}  // namespace

SKIFF_REGISTER_KERNEL(matmul, CPU, "onednn", dtype_bit(DType::Float32), 10, matmul_onednn);

}  // namespace skiff::onednn
