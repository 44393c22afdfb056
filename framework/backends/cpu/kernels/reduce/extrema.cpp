// CPU kernels for amax/amin (any dims) and max_dim/min_dim (one dim, with int64
// positions).
//
// Algorithm: reduce_blocks moves the reduced dims last, then each output scans
// its contiguous block once. NaN propagates (the first NaN wins, and its position
// is reported), like PyTorch; otherwise a strict comparison keeps the first
// occurrence of the extreme value. Works on bool, integer and float dtypes
// (16-bit floats compare in float). Exact (no arithmetic), tested for equality
// against naive loops in tests/framework/ops/reduce/extrema_test.cpp.
#include <cmath>

#include "framework/backends/cpu/reduce_utils.h"

namespace skiff::cpu {
namespace {

template <typename Fn>
void visit_ordered(DType t, const char* kernel, Fn&& fn) {
  if (t == DType::Bool) fn(TypeTag<bool>{});
  else visit_real(t, kernel, std::forward<Fn>(fn));
}

template <typename A>
bool is_nan(A v) {
  if constexpr (std::is_floating_point_v<A>) return std::isnan(v);
  else return false;
}

// Position of the extreme value in p[0..n) (n > 0); the first NaN if there is one.
template <bool kMax, typename T>
int64_t extreme_position(const T* p, int64_t n) {
  using A = acc_t<T>;
  A best = A(p[0]);
  int64_t at = 0;
  if (is_nan(best)) return 0;
  for (int64_t i = 1; i < n; ++i) {
    const A v = A(p[i]);
    if (is_nan(v)) return i;
    if (kMax ? v > best : v < best) {
      best = v;
      at = i;
    }
  }
  return at;
}

template <bool kMax>
void extreme_cpu(const KernelContext& c) {
  const Tensor &in = c.inputs[0], &out = c.outputs[0];
  visit_ordered(in.dtype(), kMax ? "amax" : "amin", [&](auto tag) {
    using T = typename decltype(tag)::type;
    reduce_blocks<T, T>(out, in, c.attrs.get_ints("dims"),
                        [](const T* p, int64_t n, int64_t) { return p[extreme_position<kMax>(p, n)]; });
  });
}

template <bool kMax>
void extreme_dim_cpu(const KernelContext& c) {
  const Tensor &in = c.inputs[0], &values = c.outputs[0], &indices = c.outputs[1];
  int64_t* ip = static_cast<int64_t*>(indices.data_ptr());
  visit_ordered(in.dtype(), kMax ? "max" : "min", [&](auto tag) {
    using T = typename decltype(tag)::type;
    reduce_blocks<T, T>(values, in, {c.attrs.get_int("dim")}, [ip](const T* p, int64_t n, int64_t i) {
      const int64_t at = extreme_position<kMax>(p, n);
      ip[i] = at;
      return p[at];
    });
  });
}

}  // namespace

SKIFF_REGISTER_KERNEL(amax, CPU, "cpu", kFloatTypes | kIntTypes | kBoolType, 0, extreme_cpu<true>);
SKIFF_REGISTER_KERNEL(amin, CPU, "cpu", kFloatTypes | kIntTypes | kBoolType, 0, extreme_cpu<false>);
SKIFF_REGISTER_KERNEL(max_dim, CPU, "cpu", kFloatTypes | kIntTypes | kBoolType, 0, extreme_dim_cpu<true>);
SKIFF_REGISTER_KERNEL(min_dim, CPU, "cpu", kFloatTypes | kIntTypes | kBoolType, 0, extreme_dim_cpu<false>);

}  // namespace skiff::cpu
