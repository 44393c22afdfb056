// CPU kernels for prod (any dims) and cumsum (one dim, forward or reverse).
//
// prod: reduce_blocks + a serial product per output; bool/integer inputs multiply
// in int64 (wrapping like PyTorch), floats in double (float32 and the 16-bit
// types round once at the end). cumsum: the input is viewed as contiguous
// [pre, n, post]; work is split over (pre, column block) tasks and each task runs
// its n rows in order, keeping one running sum per column, so results do not
// depend on the thread count. Sums accumulate in int64 (integers, bool) or double
// (floats). Tested against naive loops (exact for integers, 1e-6 relative for floats).
#include <omp.h>

#include <vector>

#include "framework/backends/cpu/reduce_utils.h"

namespace skiff::cpu {
namespace {

// Accumulator for running sums and products: int64 for bool/integers, double for
// real floats, the type itself for complex.
template <typename T>
using wide_t = std::conditional_t<std::is_integral_v<T>, int64_t,
                                  std::conditional_t<detail::is_complex_v<T>, T, double>>;

void prod_cpu(const KernelContext& c) {
  const Tensor &in = c.inputs[0], &out = c.outputs[0];
  const auto& dims = c.attrs.get_ints("dims");
  auto body = [&](auto tag) {
    using T = typename decltype(tag)::type;
    using W = wide_t<T>;
    using Out = std::conditional_t<std::is_integral_v<T>, int64_t, T>;
    reduce_blocks<T, Out>(out, in, dims, [](const T* p, int64_t n, int64_t) {
      W acc = W(1);
      for (int64_t i = 0; i < n; ++i) acc *= W(detail::convert<W>(p[i]));
      return detail::convert<Out>(acc);
    });
  };
  if (in.dtype() == DType::Bool) body(TypeTag<bool>{});
  else visit_numeric(in.dtype(), "prod", body);
}

void cumsum_cpu(const KernelContext& c) {
  const Tensor& out = c.outputs[0];
  const Tensor in = c.inputs[0].is_contiguous() ? c.inputs[0] : detail::contiguous_copy(c.inputs[0]);
  const int64_t dim = c.attrs.get_int("dim");
  const bool reverse = c.attrs.get_bool("reverse");
  int64_t pre = 1, n = in.shape()[dim], post = 1;
  for (int64_t d = 0; d < dim; ++d) pre *= in.shape()[d];
  for (int64_t d = dim + 1; d < in.dim(); ++d) post *= in.shape()[d];
  if (in.numel() == 0) return;
  constexpr int64_t kBlock = 256;
  const int64_t blocks = (post + kBlock - 1) / kBlock, tasks = pre * blocks;
  auto body = [&](auto tag) {
    using T = typename decltype(tag)::type;
    using W = wide_t<T>;
    using Out = std::conditional_t<std::is_integral_v<T>, int64_t, T>;
    const T* src = static_cast<const T*>(in.data_ptr());
    Out* dst = static_cast<Out*>(out.data_ptr());
    const bool par = tasks > 1 && in.numel() >= kParallelGrain && num_threads() > 1 && !omp_in_parallel();
#pragma omp parallel for schedule(static) if (par)
    for (int64_t t = 0; t < tasks; ++t) {
      const int64_t p = t / blocks, q0 = (t % blocks) * kBlock, q1 = std::min(post, q0 + kBlock);
      W acc[kBlock];
      for (int64_t q = 0; q < q1 - q0; ++q) acc[q] = W(0);
      for (int64_t step = 0; step < n; ++step) {
        const int64_t k = reverse ? n - 1 - step : step;
        const int64_t row = (p * n + k) * post;
        for (int64_t q = q0; q < q1; ++q) {
          acc[q - q0] += detail::convert<W>(src[row + q]);
          dst[row + q] = detail::convert<Out>(acc[q - q0]);
        }
      }
    }
  };
  if (in.dtype() == DType::Bool) body(TypeTag<bool>{});
  else visit_numeric(in.dtype(), "cumsum", body);
}

}  // namespace

SKIFF_REGISTER_KERNEL(prod, CPU, "cpu", kAllTypes, 0, prod_cpu);
SKIFF_REGISTER_KERNEL(cumsum, CPU, "cpu", kAllTypes, 0, cumsum_cpu);

}  // namespace skiff::cpu
