// CPU kernel of adam_step (framework/ops/optim/optim_ops.h): one pass over the
// parameter and its moments, element by element, so the result does not depend on the
// thread count. Arithmetic in the parameter's dtype with PyTorch's formulas (its CPU
// lerp, the bias corrections as scalars), which tests/framework/optim compare with
// torch.optim to the last bit.
#include <algorithm>
#include <cmath>

#include "framework/core/threading.h"
#include "framework/ops/op.h"

namespace skiff::cpu {
namespace {

/// PyTorch's CPU lerp: two formulas so the result is exact at both ends.
template <typename T>
inline T lerp(T a, T b, T w) {
  return std::abs(w) < T(0.5) ? a + w * (b - a) : b - (b - a) * (T(1) - w);
}

template <typename T>
void adam(const KernelContext& c) {
  const Attrs& a = c.attrs;
  T* p = c.inputs[0].data<T>();
  const T* g = c.inputs[1].data<T>();
  T* m = c.inputs[2].data<T>();
  T* v = c.inputs[3].data<T>();
  T* vmax = a.get_bool("amsgrad") ? c.inputs[4].data<T>() : nullptr;
  const double lr = a.get_float("lr"), wd = a.get_float("weight_decay");
  const bool maximize = a.get_bool("maximize"), decoupled = a.get_bool("decoupled");
  const T wdT = T(wd), decay = T(1.0 - lr * wd), w1 = T(1.0 - a.get_float("beta1"));
  const T b2 = T(a.get_float("beta2")), w2 = T(1.0 - a.get_float("beta2"));
  const T step_size = T(a.get_float("step_size")), bc2 = T(a.get_float("bias_correction2_sqrt"));
  const T eps = T(a.get_float("eps"));
  const int64_t n = c.inputs[0].numel();
#pragma omp parallel for schedule(static) if (n > kParallelGrain) num_threads(num_threads())
  for (int64_t i = 0; i < n; ++i) {
    T gi = maximize ? -g[i] : g[i];
    if (wd != 0) {
      if (decoupled)
        p[i] = p[i] * decay;
      else
        gi = gi + wdT * p[i];
    }
    m[i] = lerp(m[i], gi, w1);
    v[i] = v[i] * b2 + w2 * gi * gi;
    T vv = v[i];
    if (vmax) vv = vmax[i] = std::max(vmax[i], v[i]);
    const T denom = std::sqrt(vv) / bc2 + eps;
    p[i] = p[i] + (-step_size) * (m[i] / denom);
  }
}

void adam_cpu(const KernelContext& c) {
  if (c.inputs[0].dtype() == DType::Float64) adam<double>(c);
  else adam<float>(c);
}

}  // namespace
}  // namespace skiff::cpu

SKIFF_REGISTER_KERNEL(adam_step, CPU, "cpu", ::skiff::dtype_bit(::skiff::DType::Float32) |
                                                 ::skiff::dtype_bit(::skiff::DType::Float64),
                      0, ::skiff::cpu::adam_cpu);
