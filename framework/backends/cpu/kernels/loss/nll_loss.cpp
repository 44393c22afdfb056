// CPU kernels for nll_loss and nll_loss_backward.
// Algorithm: log_probs is viewed as [N, C, S] (S = product of the trailing dims), target as
// [N, S]. Forward: loss[n, s] = -w[t] * x[n, t, s], counted weight w[t] (both 0 where t is
// ignore_index). Backward: zeros [N, C, S], then out[n, t, s] = -w[t] * g[n, s].
// Layout: non-contiguous inputs are copied to contiguous first; outputs are contiguous.
// Targets are validated in a serial pass before the (parallel) main loop.
// Reference: tests/framework/ops/loss/nll_loss_test.cpp (naive loops); exact in float32/float64.
#include "framework/backends/cpu/loops.h"
#include "framework/core/threading.h"

namespace skiff::cpu {
namespace {

Tensor contiguous_input(const Tensor& t) { return t.is_contiguous() ? t : detail::contiguous_copy(t); }

void check_targets(const int64_t* target, int64_t count, int64_t num_classes, int64_t ignore_index, const char* op) {
  for (int64_t i = 0; i < count; ++i) {
    const int64_t t = target[i];
    if (t == ignore_index) continue;
    SKIFF_CHECK_INDEX(t >= 0 && t < num_classes,
                      "{}: expected target values in [0, C) = [0, {}) or ignore_index {}, got {} at flat position {}",
                      op, num_classes, ignore_index, t, i);
  }
}

void nll_loss_cpu(const KernelContext& c) {
  const Tensor x = contiguous_input(c.inputs[0]);
  const Tensor target = contiguous_input(c.inputs[1]);
  const Tensor weight = contiguous_input(c.inputs[2]);
  const int64_t ignore_index = c.attrs.get_int("ignore_index");
  const int64_t n = x.shape()[0], num_classes = x.shape()[1];
  const int64_t inner = n * num_classes == 0 ? 0 : x.numel() / (n * num_classes);
  const int64_t count = target.numel();
  const int64_t* tgt = target.data<int64_t>();
  check_targets(tgt, count, num_classes, ignore_index, "nll_loss");
  visit_floating(x.dtype(), "nll_loss", [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* xp = x.data<T>();
    const T* wp = weight.data<T>();
    T* loss = c.outputs[0].data<T>();
    T* counted = c.outputs[1].data<T>();
    const bool par = count >= kParallelGrain && num_threads() > 1;
#pragma omp parallel for schedule(static) if (par)
    for (int64_t i = 0; i < count; ++i) {
      const int64_t t = tgt[i];
      if (t == ignore_index) {
        loss[i] = T(0.0f);
        counted[i] = T(0.0f);
        continue;
      }
      const int64_t b = i / inner, s = i % inner;
      const acc_t<T> w = acc_t<T>(wp[t]);
      loss[i] = T(-w * acc_t<T>(xp[(b * num_classes + t) * inner + s]));
      counted[i] = wp[t];
    }
  });
}

void nll_loss_backward_cpu(const KernelContext& c) {
  const Tensor g = contiguous_input(c.inputs[0]);
  const Tensor target = contiguous_input(c.inputs[1]);
  const Tensor weight = contiguous_input(c.inputs[2]);
  const Tensor& out = c.outputs[0];
  const int64_t ignore_index = c.attrs.get_int("ignore_index");
  const int64_t num_classes = c.attrs.get_int("num_classes");
  const int64_t count = target.numel();
  const int64_t inner = count == 0 ? 0 : count / g.shape()[0];
  const int64_t* tgt = target.data<int64_t>();
  check_targets(tgt, count, num_classes, ignore_index, "nll_loss_backward");
  SKIFF_CHECK_SHAPE(weight.numel() == num_classes, "nll_loss_backward: expected weight [{}], got {}", num_classes,
                    weight.shape());
  detail::fill(out, 0.0);
  visit_floating(g.dtype(), "nll_loss_backward", [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* gp = g.data<T>();
    const T* wp = weight.data<T>();
    T* op = out.data<T>();
    const bool par = count >= kParallelGrain && num_threads() > 1;
#pragma omp parallel for schedule(static) if (par)
    for (int64_t i = 0; i < count; ++i) {
      const int64_t t = tgt[i];
      if (t == ignore_index) continue;
      const int64_t b = i / inner, s = i % inner;
      op[(b * num_classes + t) * inner + s] = T(-acc_t<T>(wp[t]) * acc_t<T>(gp[i]));
    }
  });
}

}  // namespace

SKIFF_REGISTER_KERNEL(nll_loss, CPU, "cpu", kFloatTypes, 0, nll_loss_cpu);
SKIFF_REGISTER_KERNEL(nll_loss_backward, CPU, "cpu", kFloatTypes, 0, nll_loss_backward_cpu);

}  // namespace skiff::cpu
