// CPU kernels for unary element-wise ops: one strided pass (loops.h), math from
// <cmath> in the accumulation type (float for fp16/bf16).
#include <cmath>

#include "framework/backends/cpu/loops.h"

namespace skiff::cpu {
namespace {

// Float-only math (the op wrappers convert integer inputs to float32 first).
#define SKIFF_FLOAT_UNARY(name, expr)                                              \
  void name##_cpu(const KernelContext& c) {                                        \
    visit_floating(c.inputs[0].dtype(), #name, [&](auto tag) {                     \
      using T = typename decltype(tag)::type;                                      \
      using A = acc_t<T>;                                                          \
      unary_loop<T, T>(c.outputs[0], c.inputs[0], [&](A x) -> A { return expr; }); \
    });                                                                            \
  }                                                                                \
  SKIFF_REGISTER_KERNEL(name, CPU, "cpu", kFloatTypes, 0, name##_cpu);

SKIFF_FLOAT_UNARY(exp, std::exp(x))
SKIFF_FLOAT_UNARY(log, std::log(x))
SKIFF_FLOAT_UNARY(log1p, std::log1p(x))
SKIFF_FLOAT_UNARY(sqrt, std::sqrt(x))
SKIFF_FLOAT_UNARY(rsqrt, A(1) / std::sqrt(x))
SKIFF_FLOAT_UNARY(reciprocal, A(1) / x)
SKIFF_FLOAT_UNARY(sin, std::sin(x))
SKIFF_FLOAT_UNARY(cos, std::cos(x))
SKIFF_FLOAT_UNARY(tan, std::tan(x))
SKIFF_FLOAT_UNARY(tanh, std::tanh(x))
SKIFF_FLOAT_UNARY(sigmoid, A(1) / (A(1) + std::exp(-x)))
SKIFF_FLOAT_UNARY(erf, std::erf(x))
SKIFF_FLOAT_UNARY(floor, std::floor(x))
SKIFF_FLOAT_UNARY(ceil, std::ceil(x))
SKIFF_FLOAT_UNARY(round, std::nearbyint(x))
SKIFF_FLOAT_UNARY(leaky_relu, x > A(0) ? x : x * A(c.attrs.get_float("negative_slope")))
#undef SKIFF_FLOAT_UNARY

// Ops defined for every real type.
#define SKIFF_REAL_UNARY(name, expr)                                               \
  void name##_cpu(const KernelContext& c) {                                        \
    visit_real(c.inputs[0].dtype(), #name, [&](auto tag) {                         \
      using T = typename decltype(tag)::type;                                      \
      using A = acc_t<T>;                                                          \
      unary_loop<T, T>(c.outputs[0], c.inputs[0], [&](A x) -> A { return expr; }); \
    });                                                                            \
  }                                                                                \
  SKIFF_REGISTER_KERNEL(name, CPU, "cpu", kFloatTypes | kIntTypes, 0, name##_cpu);

SKIFF_REAL_UNARY(sign, A((x > A(0)) - (x < A(0))))
SKIFF_REAL_UNARY(relu, x > A(0) ? x : A(0))
SKIFF_REAL_UNARY(square, x * x)
#undef SKIFF_REAL_UNARY

void neg_cpu(const KernelContext& c) {
  visit_numeric(c.inputs[0].dtype(), "neg", [&](auto tag) {
    using T = typename decltype(tag)::type;
    using A = acc_t<T>;
    unary_loop<T, T>(c.outputs[0], c.inputs[0], [](A x) -> A { return -x; });
  });
}
SKIFF_REGISTER_KERNEL(neg, CPU, "cpu", kFloatTypes | kIntTypes | kComplexTypes, 0, neg_cpu);

void abs_cpu(const KernelContext& c) {
  visit_real(c.inputs[0].dtype(), "abs", [&](auto tag) {
    using T = typename decltype(tag)::type;
    using A = acc_t<T>;
    unary_loop<T, T>(c.outputs[0], c.inputs[0], [](A x) -> A { return x < A(0) ? A(-x) : x; });
  });
}
SKIFF_REGISTER_KERNEL(abs, CPU, "cpu", kFloatTypes | kIntTypes, 0, abs_cpu);

void clamp_cpu(const KernelContext& c) {
  double lo = c.attrs.get_float("min"), hi = c.attrs.get_float("max");
  visit_real(c.inputs[0].dtype(), "clamp", [&](auto tag) {
    using T = typename decltype(tag)::type;
    using A = acc_t<T>;
    // Bounds outside an integer type's range clamp nothing on that side.
    const double tlo = std::is_integral_v<A> ? std::max(lo, double(std::numeric_limits<A>::lowest())) : lo;
    const double thi = std::is_integral_v<A> ? std::min(hi, double(std::numeric_limits<A>::max())) : hi;
    const A l = A(tlo), h = A(thi);
    unary_loop<T, T>(c.outputs[0], c.inputs[0], [=](A x) -> A { return x < l ? l : (x > h ? h : x); });
  });
}
SKIFF_REGISTER_KERNEL(clamp, CPU, "cpu", kFloatTypes | kIntTypes, 0, clamp_cpu);

}  // namespace
}  // namespace skiff::cpu
