// CPU kernels of sgd_step, rmsprop_step and adagrad_step (framework/ops/optim/optim_ops.h): one
// pass over the parameter and its state, element by element, so the result does not depend on
// the thread count. Arithmetic in the parameter's dtype with PyTorch's formulas and operation
// order, which tests/framework/optim/optimizer_test.cpp compares with torch.optim.
#include <cmath>

#include "framework/core/threading.h"
#include "framework/ops/op.h"

namespace skiff::cpu {
namespace {

template <typename Fn>
void parallel_elements(int64_t n, Fn&& fn) {
#pragma omp parallel for schedule(static) if (n > kParallelGrain) num_threads(num_threads())
  for (int64_t i = 0; i < n; ++i) fn(i);
}

/// Runs body.template operator()<T>() for the parameter's dtype (float32 or float64).
template <typename Body>
void for_param_dtype(const KernelContext& c, Body&& body) {
  if (c.inputs[0].dtype() == DType::Float64)
    body(double{});
  else
    body(float{});
}

void sgd_cpu(const KernelContext& c) {
  for_param_dtype(c, [&](auto zero) {
    using T = decltype(zero);
    const Attrs& a = c.attrs;
    T* p = c.inputs[0].data<T>();
    const T* g = c.inputs[1].data<T>();
    T* b = c.inputs.size() > 2 ? c.inputs[2].data<T>() : nullptr;
    const T lr = T(a.get_float("lr")), wd = T(a.get_float("weight_decay")), m = T(a.get_float("momentum"));
    const T one_minus_damp = T(1.0 - a.get_float("dampening"));
    const bool nesterov = a.get_bool("nesterov"), maximize = a.get_bool("maximize"), first = a.get_bool("first");
    parallel_elements(c.inputs[0].numel(), [&](int64_t i) {
      T d = maximize ? -g[i] : g[i];
      if (wd != 0) d = d + wd * p[i];
      if (b) {
        b[i] = first ? d : b[i] * m + one_minus_damp * d;
        d = nesterov ? d + m * b[i] : b[i];
      }
      p[i] = p[i] + (-lr) * d;
    });
  });
}

void rmsprop_cpu(const KernelContext& c) {
  for_param_dtype(c, [&](auto zero) {
    using T = decltype(zero);
    const Attrs& a = c.attrs;
    const bool centered = a.get_bool("centered");
    T* p = c.inputs[0].data<T>();
    const T* g = c.inputs[1].data<T>();
    T* v = c.inputs[2].data<T>();
    T* ga = centered ? c.inputs[3].data<T>() : nullptr;
    T* b = a.get_float("momentum") > 0 ? c.inputs.back().data<T>() : nullptr;
    const T lr = T(a.get_float("lr")), alpha = T(a.get_float("alpha")), w = T(1.0 - a.get_float("alpha"));
    const T eps = T(a.get_float("eps")), wd = T(a.get_float("weight_decay")), m = T(a.get_float("momentum"));
    const bool maximize = a.get_bool("maximize");
    parallel_elements(c.inputs[0].numel(), [&](int64_t i) {
      T gi = maximize ? -g[i] : g[i];
      if (wd != 0) gi = gi + wd * p[i];
      v[i] = v[i] * alpha + w * gi * gi;
      T avg;
      if (ga) {
        // lerp with weight 1-alpha (< 0.5 for the usual alpha): a + w*(b-a); else PyTorch's other branch.
        ga[i] = std::abs(w) < T(0.5) ? ga[i] + w * (gi - ga[i]) : gi - (gi - ga[i]) * (T(1) - w);
        avg = std::sqrt(v[i] + T(-1) * ga[i] * ga[i]) + eps;
      } else {
        avg = std::sqrt(v[i]) + eps;
      }
      if (b) {
        b[i] = b[i] * m + gi / avg;
        p[i] = p[i] + (-lr) * b[i];
      } else {
        p[i] = p[i] + (-lr) * (gi / avg);
      }
    });
  });
}

void adagrad_cpu(const KernelContext& c) {
  for_param_dtype(c, [&](auto zero) {
    using T = decltype(zero);
    const Attrs& a = c.attrs;
    T* p = c.inputs[0].data<T>();
    const T* g = c.inputs[1].data<T>();
    T* s = c.inputs[2].data<T>();
    const T lr = T(a.get_float("lr")), eps = T(a.get_float("eps")), wd = T(a.get_float("weight_decay"));
    const bool maximize = a.get_bool("maximize");
    parallel_elements(c.inputs[0].numel(), [&](int64_t i) {
      T gi = maximize ? -g[i] : g[i];
      if (wd != 0) gi = gi + wd * p[i];
      s[i] = s[i] + gi * gi;
      p[i] = p[i] + (-lr) * (gi / (std::sqrt(s[i]) + eps));
    });
  });
}

constexpr DTypeSet kParamTypes = dtype_bit(DType::Float32) | dtype_bit(DType::Float64);

}  // namespace

SKIFF_REGISTER_KERNEL(sgd_step, CPU, "cpu", kParamTypes, 0, sgd_cpu);
SKIFF_REGISTER_KERNEL(rmsprop_step, CPU, "cpu", kParamTypes, 0, rmsprop_cpu);
SKIFF_REGISTER_KERNEL(adagrad_step, CPU, "cpu", kParamTypes, 0, adagrad_cpu);

}  // namespace skiff::cpu
