// CPU kernels for binary element-wise ops. Algorithm: one strided pass with
// contiguous and scalar-broadcast fast paths (loops.h). Reference: itself (this is
// the CPU oracle); tested exactly for integers and to 1 ulp-ish for floats.
#include <cmath>

#include "framework/backends/cpu/loops.h"
#include "framework/backends/cpu/vec/vec_f32.h"

namespace skiff::cpu {
namespace {

template <typename F>
void arith(const KernelContext& c, const char* name, F f) {
  visit_numeric(c.inputs[0].dtype(), name, [&](auto tag) {
    using T = typename decltype(tag)::type;
    binary_loop<T, T>(c.outputs[0], c.inputs[0], c.inputs[1], f);
  });
}

void add_cpu(const KernelContext& c) {
  auto f = [](auto a, auto b) { return a + b; };
  if (!binary_vec_f32(c.outputs[0], c.inputs[0], c.inputs[1], vec_f32().add, f)) arith(c, "add", f);
}
void sub_cpu(const KernelContext& c) {
  auto f = [](auto a, auto b) { return a - b; };
  if (!binary_vec_f32(c.outputs[0], c.inputs[0], c.inputs[1], vec_f32().sub, f)) arith(c, "sub", f);
}
void mul_cpu(const KernelContext& c) {
  auto f = [](auto a, auto b) { return a * b; };
  if (!binary_vec_f32(c.outputs[0], c.inputs[0], c.inputs[1], vec_f32().mul, f)) arith(c, "mul", f);
}
void div_cpu(const KernelContext& c) {
  if (binary_vec_f32(c.outputs[0], c.inputs[0], c.inputs[1], vec_f32().div, [](float a, float b) { return a / b; }))
    return;
  visit_numeric(c.inputs[0].dtype(), "div", [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (std::is_integral_v<T>) {
      // Integer division by zero is undefined behaviour in C++: check first (never
      // throw inside the parallel loop).
      for (T v : c.inputs[1].to_vector<T>())
        SKIFF_CHECK(v != 0, "div: integer division by zero");
      binary_loop<T, T>(c.outputs[0], c.inputs[0], c.inputs[1], [](T a, T b) { return T(a / b); });
    } else {
      binary_loop<T, T>(c.outputs[0], c.inputs[0], c.inputs[1], [](auto a, auto b) { return a / b; });
    }
  });
}
void pow_cpu(const KernelContext& c) {
  visit_numeric(c.inputs[0].dtype(), "pow", [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (std::is_integral_v<T>) {
      binary_loop<T, T>(c.outputs[0], c.inputs[0], c.inputs[1], [](T a, T b) -> T {
        if (b < 0) return T(a == 1 ? 1 : (a == T(-1) ? ((b & 1) ? -1 : 1) : 0));
        T r = 1;
        for (T e = b, x = a; e > 0; e >>= 1, x = T(x * x))
          if (e & 1) r = T(r * x);
        return r;
      });
    } else {
      binary_loop<T, T>(c.outputs[0], c.inputs[0], c.inputs[1], [](auto a, auto b) { return std::pow(a, b); });
    }
  });
}
void maximum_cpu(const KernelContext& c) {
  visit_real(c.inputs[0].dtype(), "maximum", [&](auto tag) {
    using T = typename decltype(tag)::type;
    // NaN propagates, as in NumPy.
    binary_loop<T, T>(c.outputs[0], c.inputs[0], c.inputs[1], [](auto a, auto b) { return (a != a || a > b) ? a : b; });
  });
}
void minimum_cpu(const KernelContext& c) {
  visit_real(c.inputs[0].dtype(), "minimum", [&](auto tag) {
    using T = typename decltype(tag)::type;
    binary_loop<T, T>(c.outputs[0], c.inputs[0], c.inputs[1], [](auto a, auto b) { return (a != a || a < b) ? a : b; });
  });
}

template <typename F>
void compare(const KernelContext& c, const char* name, F f) {
  DType t = c.inputs[0].dtype();
  if (t == DType::Bool) {
    binary_loop<bool, bool>(c.outputs[0], c.inputs[0], c.inputs[1], f);
    return;
  }
  visit_real(t, name, [&](auto tag) {
    using T = typename decltype(tag)::type;
    binary_loop<bool, T>(c.outputs[0], c.inputs[0], c.inputs[1], f);
  });
}
void eq_cpu(const KernelContext& c) {
  if (is_complex(c.inputs[0].dtype())) {
    visit_numeric(c.inputs[0].dtype(), "eq", [&](auto tag) {
      using T = typename decltype(tag)::type;
      binary_loop<bool, T>(c.outputs[0], c.inputs[0], c.inputs[1], [](auto a, auto b) { return a == b; });
    });
    return;
  }
  compare(c, "eq", [](auto a, auto b) { return a == b; });
}
void ne_cpu(const KernelContext& c) { compare(c, "ne", [](auto a, auto b) { return a != b; }); }
void lt_cpu(const KernelContext& c) { compare(c, "lt", [](auto a, auto b) { return a < b; }); }
void le_cpu(const KernelContext& c) { compare(c, "le", [](auto a, auto b) { return a <= b; }); }
void gt_cpu(const KernelContext& c) { compare(c, "gt", [](auto a, auto b) { return a > b; }); }
void ge_cpu(const KernelContext& c) { compare(c, "ge", [](auto a, auto b) { return a >= b; }); }

void logical_and_cpu(const KernelContext& c) {
  binary_loop<bool, bool>(c.outputs[0], c.inputs[0], c.inputs[1], [](bool a, bool b) { return a && b; });
}
void logical_or_cpu(const KernelContext& c) {
  binary_loop<bool, bool>(c.outputs[0], c.inputs[0], c.inputs[1], [](bool a, bool b) { return a || b; });
}
void logical_xor_cpu(const KernelContext& c) {
  binary_loop<bool, bool>(c.outputs[0], c.inputs[0], c.inputs[1], [](bool a, bool b) { return a != b; });
}
void logical_not_cpu(const KernelContext& c) {
  unary_loop<bool, bool>(c.outputs[0], c.inputs[0], [](bool a) { return !a; });
}

void where_cpu(const KernelContext& c) {
  const Tensor &cond = c.inputs[0], &a = c.inputs[1], &b = c.inputs[2];
  const Tensor& out = c.outputs[0];
  visit_dtype(a.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    std::array<Shape, 4> st = {detail::broadcast_byte_strides(out, out.shape()),
                               detail::broadcast_byte_strides(cond, out.shape()),
                               detail::broadcast_byte_strides(a, out.shape()),
                               detail::broadcast_byte_strides(b, out.shape())};
    detail::for_each_strided<4>(out.shape(),
                                {static_cast<char*>(out.data_ptr()), static_cast<char*>(cond.data_ptr()),
                                 static_cast<char*>(a.data_ptr()), static_cast<char*>(b.data_ptr())},
                                st, [](char** p, const int64_t* s, int64_t n) {
      for (int64_t i = 0; i < n; ++i)
        *reinterpret_cast<T*>(p[0] + i * s[0]) = *reinterpret_cast<const bool*>(p[1] + i * s[1])
                                                     ? *reinterpret_cast<const T*>(p[2] + i * s[2])
                                                     : *reinterpret_cast<const T*>(p[3] + i * s[3]);
    });
  });
}

constexpr DTypeSet kNumeric = kFloatTypes | kIntTypes | kComplexTypes;
constexpr DTypeSet kReal = kFloatTypes | kIntTypes;

}  // namespace

SKIFF_REGISTER_KERNEL(add, CPU, "cpu", kNumeric, 0, add_cpu);
SKIFF_REGISTER_KERNEL(sub, CPU, "cpu", kNumeric, 0, sub_cpu);
SKIFF_REGISTER_KERNEL(mul, CPU, "cpu", kNumeric, 0, mul_cpu);
SKIFF_REGISTER_KERNEL(div, CPU, "cpu", kNumeric, 0, div_cpu);
SKIFF_REGISTER_KERNEL(pow, CPU, "cpu", kNumeric, 0, pow_cpu);
SKIFF_REGISTER_KERNEL(maximum, CPU, "cpu", kReal, 0, maximum_cpu);
SKIFF_REGISTER_KERNEL(minimum, CPU, "cpu", kReal, 0, minimum_cpu);
SKIFF_REGISTER_KERNEL(eq, CPU, "cpu", kAllTypes, 0, eq_cpu);
SKIFF_REGISTER_KERNEL(ne, CPU, "cpu", kReal | kBoolType, 0, ne_cpu);
SKIFF_REGISTER_KERNEL(lt, CPU, "cpu", kReal | kBoolType, 0, lt_cpu);
SKIFF_REGISTER_KERNEL(le, CPU, "cpu", kReal | kBoolType, 0, le_cpu);
SKIFF_REGISTER_KERNEL(gt, CPU, "cpu", kReal | kBoolType, 0, gt_cpu);
SKIFF_REGISTER_KERNEL(ge, CPU, "cpu", kReal | kBoolType, 0, ge_cpu);
SKIFF_REGISTER_KERNEL(logical_and, CPU, "cpu", kBoolType, 0, logical_and_cpu);
SKIFF_REGISTER_KERNEL(logical_or, CPU, "cpu", kBoolType, 0, logical_or_cpu);
SKIFF_REGISTER_KERNEL(logical_xor, CPU, "cpu", kBoolType, 0, logical_xor_cpu);
SKIFF_REGISTER_KERNEL(logical_not, CPU, "cpu", kBoolType, 0, logical_not_cpu);
SKIFF_REGISTER_KERNEL(where, CPU, "cpu", kAllTypes, 0, where_cpu);

}  // namespace skiff::cpu
