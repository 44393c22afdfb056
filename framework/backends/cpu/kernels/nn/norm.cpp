// CPU layer_norm and batch_norm forward (outputs y, mean, biased var).
// Algorithm: one pass for the moments, one pass to write y. The moments are
// accumulated in float64 over (x - x0), x0 being the first element of the group
// (the "shifted data" variance), with 8 independent accumulators, so a large
// common offset does not cancel away the variance. y = (x - mean) * rsqrt(var + eps)
// * weight + bias in float (double for float64). Float32 planes run the vector
// table's loops (vec/vec_f32.h), compiled for the CPU's widest ISA: this file is
// built for baseline x86-64, where the same loops run two doubles at a time.
// Layout: layer_norm sees x as [M, N] (normalized dims last), batch_norm as
// [A, C, B] (statistics per C over A and B); non-contiguous inputs are copied to
// contiguous first. Work is split over statistics only: thread-count independent.
// Reference: naive two-pass loops in tests/framework/ops/nn/norm_test.cpp,
// tolerance 1e-5 (float32), 1e-12 (float64); gradients via gradcheck in float64.
#include <omp.h>

#include <algorithm>
#include <cmath>
#include <type_traits>
#include <vector>

#include "framework/backends/cpu/loops.h"
#include "framework/backends/cpu/vec/vec_f32.h"

namespace skiff::cpu {
namespace {

struct ShiftedMoments {
  double shift = 0, sum = 0, sumsq = 0;
  int64_t count = 0;

  template <typename T>
  void add(const T* p, int64_t n) {
    if (n == 0) return;
    if (count == 0) shift = double(p[0]);
    if constexpr (std::is_same_v<T, float>) {  // the same sums, compiled for the CPU's widest ISA
      vec_f32().shifted_moments(p, n, shift, &sum, &sumsq);
      count += n;
      return;
    }
    double s[8] = {}, q[8] = {};
    int64_t i = 0;
    for (; i + 8 <= n; i += 8)
      for (int k = 0; k < 8; ++k) {
        double d = double(p[i + k]) - shift;
        s[k] += d;
        q[k] += d * d;
      }
    for (; i < n; ++i) {
      double d = double(p[i]) - shift;
      s[0] += d;
      q[0] += d * d;
    }
    for (int k = 0; k < 8; ++k) {
      sum += s[k];
      sumsq += q[k];
    }
    count += n;
  }
  double mean() const { return count ? shift + sum / double(count) : NAN; }
  double var() const {
    if (count == 0) return NAN;
    double m = sum / double(count);
    return std::max(0.0, sumsq / double(count) - m * m);
  }
};

Tensor contiguous_input(const Tensor& t) { return t.is_contiguous() ? t : detail::contiguous_copy(t); }

template <typename T>
const T* optional_param(const std::vector<Tensor>& in, std::vector<Tensor>& keep, bool present, size_t& slot) {
  if (!present) return nullptr;
  keep.push_back(contiguous_input(in[slot++]));
  return static_cast<const T*>(keep.back().data_ptr());
}

void layer_norm_cpu(const KernelContext& c) {
  const Tensor x = contiguous_input(c.inputs[0]);
  const int64_t axis = c.attrs.get_int("axis");
  int64_t rows = 1, n = 1;
  for (int64_t d = 0; d < x.dim(); ++d) (d < axis ? rows : n) *= x.shape()[d];
  const double eps = c.attrs.get_float("eps");
  visit_floating(x.dtype(), "layer_norm", [&](auto tag) {
    using T = typename decltype(tag)::type;
    using A = acc_t<T>;
    std::vector<Tensor> keep;
    size_t slot = 1;
    const T* w = optional_param<T>(c.inputs, keep, c.attrs.get_bool("has_weight"), slot);
    const T* b = optional_param<T>(c.inputs, keep, c.attrs.get_bool("has_bias"), slot);
    const T* xp = static_cast<const T*>(x.data_ptr());
    T* yp = static_cast<T*>(c.outputs[0].data_ptr());
    T* mean_out = static_cast<T*>(c.outputs[1].data_ptr());
    T* var_out = static_cast<T*>(c.outputs[2].data_ptr());
    const bool par = rows > 1 && rows * n >= kParallelGrain && num_threads() > 1 && !omp_in_parallel();
#pragma omp parallel for schedule(static) if (par)
    for (int64_t r = 0; r < rows; ++r) {
      const T* xr = xp + r * n;
      T* yr = yp + r * n;
      ShiftedMoments m;
      m.add(xr, n);
      const double mean = m.mean(), var = m.var();
      mean_out[r] = T(mean);
      var_out[r] = T(var);
      // (x - mean) first: subtracting close values is exact, x * rstd - mean * rstd is not.
      const A rstd = A(1.0 / std::sqrt(var + eps)), mean_a = A(mean);
      if (w && b) {
        for (int64_t i = 0; i < n; ++i) yr[i] = T((A(xr[i]) - mean_a) * rstd * A(w[i]) + A(b[i]));
      } else if (w) {
        for (int64_t i = 0; i < n; ++i) yr[i] = T((A(xr[i]) - mean_a) * rstd * A(w[i]));
      } else if (b) {
        for (int64_t i = 0; i < n; ++i) yr[i] = T((A(xr[i]) - mean_a) * rstd + A(b[i]));
      } else {
        for (int64_t i = 0; i < n; ++i) yr[i] = T((A(xr[i]) - mean_a) * rstd);
      }
    }
  });
}

void batch_norm_cpu(const KernelContext& c) {
  const Tensor x = contiguous_input(c.inputs[0]);
  const int64_t outer = x.shape()[0], channels = x.shape()[1];
  int64_t inner = 1;
  for (int64_t d = 2; d < x.dim(); ++d) inner *= x.shape()[d];
  const double eps = c.attrs.get_float("eps");
  visit_floating(x.dtype(), "batch_norm", [&](auto tag) {
    using T = typename decltype(tag)::type;
    using A = acc_t<T>;
    std::vector<Tensor> keep;
    size_t slot = 1;
    const T* w = optional_param<T>(c.inputs, keep, c.attrs.get_bool("has_weight"), slot);
    const T* b = optional_param<T>(c.inputs, keep, c.attrs.get_bool("has_bias"), slot);
    const T* xp = static_cast<const T*>(x.data_ptr());
    T* yp = static_cast<T*>(c.outputs[0].data_ptr());
    T* mean_out = static_cast<T*>(c.outputs[1].data_ptr());
    T* var_out = static_cast<T*>(c.outputs[2].data_ptr());
    const bool par = channels > 1 && x.numel() >= kParallelGrain && num_threads() > 1 && !omp_in_parallel();
#pragma omp parallel for schedule(static) if (par)
    for (int64_t ch = 0; ch < channels; ++ch) {
      ShiftedMoments m;
      for (int64_t o = 0; o < outer; ++o) m.add(xp + (o * channels + ch) * inner, inner);
      const double mean = m.mean(), var = m.var();
      mean_out[ch] = T(mean);
      var_out[ch] = T(var);
      const double rstd = 1.0 / std::sqrt(var + eps);
      const double scale = rstd * (w ? double(w[ch]) : 1.0);
      const A scale_a = A(scale), mean_a = A(mean), shift_a = A(b ? double(b[ch]) : 0.0);
      for (int64_t o = 0; o < outer; ++o) {
        const T* xs = xp + (o * channels + ch) * inner;
        T* ys = yp + (o * channels + ch) * inner;
        if constexpr (std::is_same_v<T, float>) {
          vec_f32().centered_affine(xs, ys, inner, mean_a, scale_a, shift_a);
        } else {
          for (int64_t i = 0; i < inner; ++i) ys[i] = T((A(xs[i]) - mean_a) * scale_a + shift_a);
        }
      }
    }
  });
}

// batch_norm's first-order gradients, per channel c over its n = A * B values:
//   x_hat = (x - mean) rstd, grad_bias = sum g, grad_weight = sum g x_hat,
//   grad_x = w rstd g + a + b x_hat with
//   a = -w rstd sum(g) / n + grad_mean / n,  b = -w rstd sum(g x_hat) / n + 2 grad_var / (n rstd)
// (the composite normalize_backward in ops/nn/norm.cpp, fused). Inputs: g, x,
// mean, var, grad_mean, grad_var, [weight]; sums in float64.
void batch_norm_backward_cpu(const KernelContext& c) {
  const Tensor g = contiguous_input(c.inputs[0]);
  const Tensor x = contiguous_input(c.inputs[1]);
  const int64_t outer = x.shape()[0], channels = x.shape()[1];
  int64_t inner = 1;
  for (int64_t d = 2; d < x.dim(); ++d) inner *= x.shape()[d];
  const double eps = c.attrs.get_float("eps");
  const bool has_weight = c.attrs.get_bool("has_weight");
  visit_floating(x.dtype(), "batch_norm_backward", [&](auto tag) {
    using T = typename decltype(tag)::type;
    using A = acc_t<T>;
    std::vector<Tensor> keep;
    auto per_channel = [&](size_t i) {
      keep.push_back(contiguous_input(c.inputs[i]));
      return static_cast<const T*>(keep.back().data_ptr());
    };
    const T* mean = per_channel(2);
    const T* var = per_channel(3);
    const T* grad_mean = per_channel(4);
    const T* grad_var = per_channel(5);
    const T* w = has_weight ? per_channel(6) : nullptr;
    const T* gp = static_cast<const T*>(g.data_ptr());
    const T* xp = static_cast<const T*>(x.data_ptr());
    T* gx = static_cast<T*>(c.outputs[0].data_ptr());
    T* gw = static_cast<T*>(c.outputs[1].data_ptr());
    T* gb = static_cast<T*>(c.outputs[2].data_ptr());
    const double n = double(outer * inner);
    const bool par = channels > 1 && x.numel() >= kParallelGrain && num_threads() > 1 && !omp_in_parallel();
#pragma omp parallel for schedule(static) if (par)
    for (int64_t ch = 0; ch < channels; ++ch) {
      const A mu = A(mean[ch]);
      double sum_g = 0, sum_gx = 0;  // sum g, sum g (x - mean)
      for (int64_t o = 0; o < outer; ++o) {
        const T* gs = gp + (o * channels + ch) * inner;
        const T* xs = xp + (o * channels + ch) * inner;
        A s = 0, sx = 0;
        if constexpr (std::is_same_v<T, float>) {
          vec_f32().grad_moments(gs, xs, inner, mu, &s, &sx);
        } else {
          for (int64_t i = 0; i < inner; ++i) {
            s += A(gs[i]);
            sx += A(gs[i]) * (A(xs[i]) - mu);
          }
        }
        sum_g += double(s);
        sum_gx += double(sx);
      }
      const double rstd = 1.0 / std::sqrt(double(var[ch]) + eps);
      const double weight = w ? double(w[ch]) : 1.0;
      gb[ch] = T(sum_g);
      gw[ch] = T(sum_gx * rstd);
      const double coef_a = -weight * rstd * sum_g / n + double(grad_mean[ch]) / n;
      const double coef_b = -weight * rstd * (sum_gx * rstd) / n + 2.0 * double(grad_var[ch]) / (n * rstd);
      // grad_x = g (w rstd) + (coef_a - mean rstd coef_b) + x (rstd coef_b)
      const A scale_g = A(weight * rstd), scale_x = A(rstd * coef_b),
              shift = A(coef_a - double(mean[ch]) * rstd * coef_b);
      for (int64_t o = 0; o < outer; ++o) {
        const T* gs = gp + (o * channels + ch) * inner;
        const T* xs = xp + (o * channels + ch) * inner;
        T* out = gx + (o * channels + ch) * inner;
        if constexpr (std::is_same_v<T, float>) {
          vec_f32().grad_affine(gs, xs, out, inner, scale_g, scale_x, shift);
        } else {
          for (int64_t i = 0; i < inner; ++i) out[i] = T(A(gs[i]) * scale_g + A(xs[i]) * scale_x + shift);
        }
      }
    }
  });
}

}  // namespace

SKIFF_REGISTER_KERNEL(batch_norm_backward, CPU, "cpu", kFloatTypes, 0, batch_norm_backward_cpu);
SKIFF_REGISTER_KERNEL(layer_norm, CPU, "cpu", kFloatTypes, 0, layer_norm_cpu);
SKIFF_REGISTER_KERNEL(batch_norm, CPU, "cpu", kFloatTypes, 0, batch_norm_cpu);

}  // namespace skiff::cpu
