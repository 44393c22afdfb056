// CPU sum kernel: reduce_blocks + an 8-way unrolled block sum. Float32 and
// float16 accumulate in double: the loop is memory-bound, so the wider accumulator
// costs nothing and a 10^7-element sum stays exact to float precision.
// Tested against float64 references.
#include "framework/backends/cpu/reduce_utils.h"

namespace skiff::cpu {
namespace {

void sum_cpu(const KernelContext& c) {
  const Tensor &in = c.inputs[0], &out = c.outputs[0];
  const auto& dims = c.attrs.get_ints("dims");
  DType t = in.dtype();
  if (is_integral(t, true)) {
    visit_dtype(t, [&](auto tag) {
      using T = typename decltype(tag)::type;
      if constexpr (std::is_integral_v<T>)
        reduce_blocks<T, int64_t>(out, in, dims, [](const T* p, int64_t n, int64_t) {
          int64_t s = 0;
          for (int64_t i = 0; i < n; ++i) s += int64_t(p[i]);
          return s;
        });
    });
    return;
  }
  visit_numeric(t, "sum", [&](auto tag) {
    using T = typename decltype(tag)::type;
    using A = acc_t<T>;
    reduce_blocks<T, T>(out, in, dims, [](const T* p, int64_t n, int64_t) {
      if constexpr (std::is_same_v<A, float>) return T(float(block_sum<double>(p, n)));
      else return T(block_sum<A>(p, n));
    });
  });
}

}  // namespace

SKIFF_REGISTER_KERNEL(sum, CPU, "cpu", kAllTypes, 0, sum_cpu);

}  // namespace skiff::cpu
