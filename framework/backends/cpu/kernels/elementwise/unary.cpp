// CPU kernels for unary element-wise ops: one strided pass (loops.h), math from
// <cmath> in the accumulation type (float for fp16/bf16).
#include <algorithm>
#include <cmath>

#include "framework/backends/cpu/loops.h"
#include "framework/backends/cpu/vec/vec_f32.h"

namespace skiff::cpu {
namespace {

// Float32 ops with a per-ISA vector kernel (vec/vec_f32.h); the others use libm.
bool try_vec_exp(const KernelContext& c) {
  return unary_vec_f32(c.outputs[0], c.inputs[0], vec_f32().exp, [](float x) { return std::exp(x); });
}
bool try_vec_sigmoid(const KernelContext& c) {
  return unary_vec_f32(c.outputs[0], c.inputs[0], vec_f32().sigmoid, [](float x) { return 1.0f / (1.0f + std::exp(-x)); });
}
bool try_vec_tanh(const KernelContext& c) {
  return unary_vec_f32(c.outputs[0], c.inputs[0], vec_f32().tanh, [](float x) { return std::tanh(x); });
}
#define SKIFF_NO_VEC(name) \
  bool try_vec_##name(const KernelContext&) { return false; }
SKIFF_NO_VEC(log) SKIFF_NO_VEC(log1p) SKIFF_NO_VEC(sqrt) SKIFF_NO_VEC(rsqrt) SKIFF_NO_VEC(reciprocal)
SKIFF_NO_VEC(sin) SKIFF_NO_VEC(cos) SKIFF_NO_VEC(tan) SKIFF_NO_VEC(erf) SKIFF_NO_VEC(floor)
SKIFF_NO_VEC(ceil) SKIFF_NO_VEC(round)
#undef SKIFF_NO_VEC

// Float-only math (the op wrappers convert integer inputs to float32 first).
#define SKIFF_FLOAT_UNARY(name, expr)                                              \
  void name##_cpu(const KernelContext& c) {                                        \
    if (try_vec_##name(c)) return;                                                 \
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
SKIFF_REAL_UNARY(square, x * x)
#undef SKIFF_REAL_UNARY

void leaky_relu_cpu(const KernelContext& c) {
  const double slope = c.attrs.get_float("negative_slope");
  visit_floating(c.inputs[0].dtype(), "leaky_relu", [&](auto tag) {
    using T = typename decltype(tag)::type;
    using A = acc_t<T>;
    const A s = A(slope);
    unary_loop<T, T>(c.outputs[0], c.inputs[0], [s](A x) -> A { return x > A(0) ? x : x * s; });
  });
}
SKIFF_REGISTER_KERNEL(leaky_relu, CPU, "cpu", kFloatTypes, 0, leaky_relu_cpu);

void relu_cpu(const KernelContext& c) {
  if (unary_vec_f32(c.outputs[0], c.inputs[0], vec_f32().relu, [](float x) { return x > 0.0f ? x : 0.0f; })) return;
  visit_real(c.inputs[0].dtype(), "relu", [&](auto tag) {
    using T = typename decltype(tag)::type;
    using A = acc_t<T>;
    unary_loop<T, T>(c.outputs[0], c.inputs[0], [](A x) -> A { return x > A(0) ? x : A(0); });
  });
}
SKIFF_REGISTER_KERNEL(relu, CPU, "cpu", kFloatTypes | kIntTypes, 0, relu_cpu);

void relu_backward_cpu(const KernelContext& c) {
  if (binary_vec_f32(c.outputs[0], c.inputs[0], c.inputs[1], vec_f32().relu_backward,
                     [](float g, float y) { return y > 0.0f ? g : 0.0f; }))
    return;
  visit_floating(c.inputs[0].dtype(), "relu_backward", [&](auto tag) {
    using T = typename decltype(tag)::type;
    using A = acc_t<T>;
    binary_loop<T, T>(c.outputs[0], c.inputs[0], c.inputs[1], [](A g, A y) -> A { return y > A(0) ? g : A(0); });
  });
}
SKIFF_REGISTER_KERNEL(relu_backward, CPU, "cpu", kFloatTypes, 0, relu_backward_cpu);

void hardswish_cpu(const KernelContext& c) {
  if (unary_vec_f32(c.outputs[0], c.inputs[0], vec_f32().hardswish,
                    [](float x) { return x * std::min(std::max(x + 3.0f, 0.0f), 6.0f) * (1.0f / 6.0f); }))
    return;
  visit_floating(c.inputs[0].dtype(), "hardswish", [&](auto tag) {
    using T = typename decltype(tag)::type;
    using A = acc_t<T>;
    unary_loop<T, T>(c.outputs[0], c.inputs[0],
                     [](A x) -> A { return x * std::min(std::max(x + A(3), A(0)), A(6)) * A(1.0 / 6.0); });
  });
}
SKIFF_REGISTER_KERNEL(hardswish, CPU, "cpu", kFloatTypes, 0, hardswish_cpu);

// d hardswish / dx: 0 below -3, (2x + 3) / 6 on [-3, 3], 1 above (PyTorch's convention at the ends).
void hardswish_backward_cpu(const KernelContext& c) {
  if (binary_vec_f32(c.outputs[0], c.inputs[0], c.inputs[1], vec_f32().hardswish_backward, [](float g, float x) {
        return x < -3.0f ? 0.0f : x <= 3.0f ? g * (x * (1.0f / 3.0f) + 0.5f) : g;
      }))
    return;
  visit_floating(c.inputs[0].dtype(), "hardswish_backward", [&](auto tag) {
    using T = typename decltype(tag)::type;
    using A = acc_t<T>;
    binary_loop<T, T>(c.outputs[0], c.inputs[0], c.inputs[1], [](A g, A x) -> A {
      return x < A(-3) ? A(0) : x <= A(3) ? g * (x * A(1.0 / 3.0) + A(0.5)) : g;
    });
  });
}
SKIFF_REGISTER_KERNEL(hardswish_backward, CPU, "cpu", kFloatTypes, 0, hardswish_backward_cpu);

void neg_cpu(const KernelContext& c) {
  visit_numeric(c.inputs[0].dtype(), "neg", [&](auto tag) {
    using T = typename decltype(tag)::type;
    using A = acc_t<T>;
    unary_loop<T, T>(c.outputs[0], c.inputs[0], [](A x) -> A { return -x; });
  });
}
SKIFF_REGISTER_KERNEL(neg, CPU, "cpu", kFloatTypes | kIntTypes | kComplexTypes, 0, neg_cpu);

void abs_cpu(const KernelContext& c) {
  if (c.inputs[0].dtype() == DType::Complex64) {
    unary_loop<float, complex64>(c.outputs[0], c.inputs[0], [](complex64 z) { return std::abs(z); });
    return;
  }
  if (c.inputs[0].dtype() == DType::Complex128) {
    unary_loop<double, complex128>(c.outputs[0], c.inputs[0], [](complex128 z) { return std::abs(z); });
    return;
  }
  visit_real(c.inputs[0].dtype(), "abs", [&](auto tag) {
    using T = typename decltype(tag)::type;
    using A = acc_t<T>;
    unary_loop<T, T>(c.outputs[0], c.inputs[0], [](A x) -> A { return x < A(0) ? A(-x) : x; });
  });
}
SKIFF_REGISTER_KERNEL(abs, CPU, "cpu", kFloatTypes | kIntTypes | kComplexTypes, 0, abs_cpu);

void clamp_cpu(const KernelContext& c) {
  double lo = c.attrs.get_float("min"), hi = c.attrs.get_float("max");
  visit_real(c.inputs[0].dtype(), "clamp", [&](auto tag) {
    using T = typename decltype(tag)::type;
    using A = acc_t<T>;
    A l = A(0), h = A(0);
    if constexpr (std::is_integral_v<A>) {
      // Bounds outside an integer type's range (or NaN) clamp nothing on that side. The
      // comparisons are in double: double(INT64_MAX) is 2^63, one past the type's range.
      constexpr A kLow = std::numeric_limits<A>::lowest(), kHigh = std::numeric_limits<A>::max();
      auto saturate = [](double v, A if_nan) {
        return std::isnan(v) ? if_nan : v <= double(kLow) ? kLow : v >= double(kHigh) ? kHigh : A(v);
      };
      l = saturate(lo, kLow);
      h = saturate(hi, kHigh);
    } else {
      l = A(lo), h = A(hi);
    }
    unary_loop<T, T>(c.outputs[0], c.inputs[0], [=](A x) -> A { return x < l ? l : (x > h ? h : x); });
  });
}
SKIFF_REGISTER_KERNEL(clamp, CPU, "cpu", kFloatTypes | kIntTypes, 0, clamp_cpu);

}  // namespace
}  // namespace skiff::cpu
