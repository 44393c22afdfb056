// CPU dropout: y = x * keep / (1 - p), keep = (u >= p) with u uniform in [0, 1)
// derived from splitmix64(seed + index * golden-ratio constant) of the element's
// row-major index. Being counter-based, the mask does not depend on how the loop is
// split over threads, and the backward regenerates it from the same seed.
// Layout: non-contiguous inputs are copied to contiguous first (indices are logical).
// Reference: tests/framework/ops/nn/dropout_test.cpp (mask statistics, scaling,
// determinism across thread counts); exact equality.
#include <omp.h>

#include "framework/backends/cpu/loops.h"

namespace skiff::cpu {
namespace {

inline uint64_t splitmix64(uint64_t z) {
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

void dropout_cpu(const KernelContext& c) {
  const Tensor x = c.inputs[0].is_contiguous() ? c.inputs[0] : detail::contiguous_copy(c.inputs[0]);
  const double p = c.attrs.get_float("p");
  const uint64_t seed = uint64_t(c.attrs.get_int("seed"));
  const int64_t n = x.numel();
  // keep iff the top 53 bits, as a fraction of 2^53, are >= p.
  const uint64_t threshold = p >= 1.0 ? UINT64_MAX : uint64_t(p * 0x1.0p53);
  visit_floating(x.dtype(), "dropout", [&](auto tag) {
    using T = typename decltype(tag)::type;
    using A = acc_t<T>;
    const T* xp = static_cast<const T*>(x.data_ptr());
    T* yp = static_cast<T*>(c.outputs[0].data_ptr());
    const A scale = p >= 1.0 ? A(0) : A(1.0 / (1.0 - p));
    const bool par = n >= kParallelGrain && num_threads() > 1 && !omp_in_parallel();
#pragma omp parallel for schedule(static) if (par)
    for (int64_t i = 0; i < n; ++i) {
      const uint64_t bits = splitmix64(seed + uint64_t(i) * 0x9e3779b97f4a7c15ULL) >> 11;
      yp[i] = bits >= threshold ? T(A(xp[i]) * scale) : T(A(0));
    }
  });
}

}  // namespace

SKIFF_REGISTER_KERNEL(dropout, CPU, "cpu", kFloatTypes, 0, dropout_cpu);

}  // namespace skiff::cpu
