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

#include <atomic>
#include <cstring>

#include "framework/backends/cpu/kernels/linalg/gemm_layout.h"
#include "framework/ops/op.h"

namespace skiff::onednn {
namespace {

namespace gemm = cpu::gemm;

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
