// CPU interpolate (nearest / bilinear) and interpolate_backward on [N, C, H, W].
// Algorithm: source indices and weights are computed once per output row and per
// output column, exactly as PyTorch's UpSample.h does:
//   nearest:  src = min(floor(dst * s), in - 1) in float32, s = 1/scale or in/out
//             (with the out == in and out == 2 in shortcuts);
//   linear:   s = (in-1)/(out-1) with align_corners, else 1/scale or in/out;
//             src = s*dst (align_corners) or max(s*(dst+0.5)-0.5, 0); i0 = floor(src),
//             i1 = i0 + (i0 < in-1), weights (1-l, l) with l = src - i0.
// Positions are computed in float (double for float64 tensors), matching PyTorch's opmath.
// The forward gathers; the backward scatters grad * weight into a zeroed plane.
// Planes (n, c) are independent, and the work is split over them only.
// Layout: contiguous NCHW (inputs are copied when not). Reference: hand-computed
// values and naive loops in tests/framework/ops/nn/resample_test.cpp; tolerance
// 1e-6 (float32), 1e-12 (float64).
#include <omp.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "framework/backends/cpu/loops.h"
#include "framework/ops/nn/fused.h"

namespace skiff::cpu {
namespace {

template <typename A>
struct Taps {
  std::vector<int64_t> i0, i1;
  std::vector<A> w0, w1;
};

template <typename A>
Taps<A> make_taps(int64_t in, int64_t out, double scale, bool linear, bool align_corners) {
  Taps<A> t;
  t.i0.resize(size_t(out));
  t.i1.resize(size_t(out));
  t.w0.resize(size_t(out));
  t.w1.resize(size_t(out));
  if (!linear) {
    const float s = scale > 0 ? float(1.0 / scale) : float(in) / float(out);
    for (int64_t d = 0; d < out; ++d) {
      int64_t src;
      if (out == in) src = d;
      else if (out == 2 * in) src = d >> 1;
      else src = std::min(int64_t(std::floor(float(d) * s)), in - 1);
      t.i0[size_t(d)] = t.i1[size_t(d)] = src;
      t.w0[size_t(d)] = A(1);
      t.w1[size_t(d)] = A(0);
    }
    return t;
  }
  A s;
  if (align_corners) s = out > 1 ? A(in - 1) / A(out - 1) : A(0);
  else s = scale > 0 ? A(1.0 / scale) : A(in) / A(out);
  for (int64_t d = 0; d < out; ++d) {
    A src = align_corners ? s * A(d) : std::max(s * (A(d) + A(0.5)) - A(0.5), A(0));
    int64_t i0 = std::min(int64_t(std::floor(src)), in - 1);
    A lambda = std::min(std::max(src - A(i0), A(0)), A(1));
    t.i0[size_t(d)] = i0;
    t.i1[size_t(d)] = i0 + (i0 < in - 1 ? 1 : 0);
    t.w0[size_t(d)] = A(1) - lambda;
    t.w1[size_t(d)] = lambda;
  }
  return t;
}

struct Plan {
  int64_t planes, in_h, in_w, out_h, out_w;
  double scale_h, scale_w;
  bool linear, align_corners;
};

Plan make_plan(const KernelContext& c, const Tensor& any_nc) {
  const auto& in = c.attrs.get_ints("in_size");
  const auto& out = c.attrs.get_ints("out_size");
  const auto& sc = c.attrs.get_floats("scales");
  return Plan{any_nc.shape()[0] * any_nc.shape()[1], in[0], in[1], out[0], out[1], sc[0], sc[1],
              c.attrs.get_string("mode") == "linear", c.attrs.get_bool("align_corners")};
}

bool use_parallel(const Plan& p) {
  return p.planes > 1 && p.planes * p.out_h * p.out_w >= kParallelGrain && num_threads() > 1 && !omp_in_parallel();
}

void interpolate_cpu(const KernelContext& c) {
  const Tensor x = c.inputs[0].is_contiguous() ? c.inputs[0] : detail::contiguous_copy(c.inputs[0]);
  const Plan p = make_plan(c, x);
  if (c.outputs[0].numel() == 0) return;
  visit_floating(x.dtype(), "interpolate", [&](auto tag) {
    using T = typename decltype(tag)::type;
    using A = acc_t<T>;
    const Taps<A> th = make_taps<A>(p.in_h, p.out_h, p.scale_h, p.linear, p.align_corners);
    const Taps<A> tw = make_taps<A>(p.in_w, p.out_w, p.scale_w, p.linear, p.align_corners);
    const T* xp = static_cast<const T*>(x.data_ptr());
    T* yp = static_cast<T*>(c.outputs[0].data_ptr());
#pragma omp parallel for schedule(static) if (use_parallel(p))
    for (int64_t plane = 0; plane < p.planes; ++plane) {
      const T* src = xp + plane * p.in_h * p.in_w;
      T* dst = yp + plane * p.out_h * p.out_w;
      for (int64_t h = 0; h < p.out_h; ++h) {
        const T* r0 = src + th.i0[size_t(h)] * p.in_w;
        const T* r1 = src + th.i1[size_t(h)] * p.in_w;
        const A a0 = th.w0[size_t(h)], a1 = th.w1[size_t(h)];
        T* out_row = dst + h * p.out_w;
        if (!p.linear) {
          for (int64_t w = 0; w < p.out_w; ++w) out_row[w] = r0[tw.i0[size_t(w)]];
          continue;
        }
        for (int64_t w = 0; w < p.out_w; ++w) {
          const int64_t j0 = tw.i0[size_t(w)], j1 = tw.i1[size_t(w)];
          const A b0 = tw.w0[size_t(w)], b1 = tw.w1[size_t(w)];
          out_row[w] = T(a0 * (b0 * A(r0[j0]) + b1 * A(r0[j1])) + a1 * (b0 * A(r1[j0]) + b1 * A(r1[j1])));
        }
      }
    }
  });
}

void interpolate_backward_cpu(const KernelContext& c) {
  const Tensor g = c.inputs[0].is_contiguous() ? c.inputs[0] : detail::contiguous_copy(c.inputs[0]);
  const Plan p = make_plan(c, g);
  const Tensor& gx = c.outputs[0];
  if (gx.numel() == 0) return;
  visit_floating(g.dtype(), "interpolate_backward", [&](auto tag) {
    using T = typename decltype(tag)::type;
    using A = acc_t<T>;
    const Taps<A> th = make_taps<A>(p.in_h, p.out_h, p.scale_h, p.linear, p.align_corners);
    const Taps<A> tw = make_taps<A>(p.in_w, p.out_w, p.scale_w, p.linear, p.align_corners);
    const T* gp = static_cast<const T*>(g.data_ptr());
    T* gxp = static_cast<T*>(gx.data_ptr());
#pragma omp parallel for schedule(static) if (use_parallel(p))
    for (int64_t plane = 0; plane < p.planes; ++plane) {
      std::vector<A> acc(size_t(p.in_h * p.in_w), A(0));
      const T* src = gp + plane * p.out_h * p.out_w;
      for (int64_t h = 0; h < p.out_h; ++h) {
        A* r0 = acc.data() + th.i0[size_t(h)] * p.in_w;
        A* r1 = acc.data() + th.i1[size_t(h)] * p.in_w;
        const A a0 = th.w0[size_t(h)], a1 = th.w1[size_t(h)];
        if (!p.linear) {
          for (int64_t w = 0; w < p.out_w; ++w) r0[tw.i0[size_t(w)]] += A(src[h * p.out_w + w]);
          continue;
        }
        for (int64_t w = 0; w < p.out_w; ++w) {
          const A v = A(src[h * p.out_w + w]);
          const int64_t j0 = tw.i0[size_t(w)], j1 = tw.i1[size_t(w)];
          const A b0 = tw.w0[size_t(w)], b1 = tw.w1[size_t(w)];
          r0[j0] += a0 * b0 * v;
          r0[j1] += a0 * b1 * v;
          r1[j0] += a1 * b0 * v;
          r1[j1] += a1 * b1 * v;
        }
      }
      T* dst = gxp + plane * p.in_h * p.in_w;
      for (int64_t i = 0; i < p.in_h * p.in_w; ++i) dst[i] = T(acc[size_t(i)]);
    }
  });
}

/// resize_bilinear_blocked (fused.h): x [N, B, H, W, 16], the taps and arithmetic of the forward
/// above applied to whole 16-value vectors, one output row per work item.
void resize_bilinear_blocked_cpu(const KernelContext& c) {
  constexpr int64_t L = kChannelBlock;
  const Tensor x = c.inputs[0].is_contiguous() ? c.inputs[0] : detail::contiguous_copy(c.inputs[0]);
  const Tensor& y = c.outputs[0];
  const int64_t planes = x.size(0) * x.size(1), in_h = x.size(2), in_w = x.size(3), out_h = y.size(2),
                out_w = y.size(3);
  const bool align_corners = c.attrs.get_bool("align_corners");
  if (y.numel() == 0) return;
  visit_floating(x.dtype(), "resize_bilinear_blocked", [&](auto tag) {
    using T = typename decltype(tag)::type;
    using A = acc_t<T>;
    const Taps<A> th = make_taps<A>(in_h, out_h, 0.0, true, align_corners);
    const Taps<A> tw = make_taps<A>(in_w, out_w, 0.0, true, align_corners);
    const T* xp = static_cast<const T*>(x.data_ptr());
    T* yp = static_cast<T*>(y.data_ptr());
    const int64_t rows = planes * out_h;
#pragma omp parallel for schedule(static) if (rows * out_w * L >= kParallelGrain && num_threads() > 1 && !omp_in_parallel())
    for (int64_t row = 0; row < rows; ++row) {
      const int64_t plane = row / out_h, h = row % out_h;
      const T* r0 = xp + (plane * in_h + th.i0[size_t(h)]) * in_w * L;
      const T* r1 = xp + (plane * in_h + th.i1[size_t(h)]) * in_w * L;
      const A a0 = th.w0[size_t(h)], a1 = th.w1[size_t(h)];
      T* out = yp + row * out_w * L;
      for (int64_t w = 0; w < out_w; ++w) {
        const T* p00 = r0 + tw.i0[size_t(w)] * L;
        const T* p01 = r0 + tw.i1[size_t(w)] * L;
        const T* p10 = r1 + tw.i0[size_t(w)] * L;
        const T* p11 = r1 + tw.i1[size_t(w)] * L;
        const A b0 = tw.w0[size_t(w)], b1 = tw.w1[size_t(w)];
        T* o = out + w * L;
#pragma omp simd
        for (int64_t l = 0; l < L; ++l)
          o[l] = T(a0 * (b0 * A(p00[l]) + b1 * A(p01[l])) + a1 * (b0 * A(p10[l]) + b1 * A(p11[l])));
      }
    }
  });
}

}  // namespace

SKIFF_REGISTER_KERNEL(interpolate, CPU, "cpu", kFloatTypes, 0, interpolate_cpu);
SKIFF_REGISTER_KERNEL(resize_bilinear_blocked, CPU, "cpu", dtype_bit(DType::Float32) | dtype_bit(DType::Float64), 0,
                      resize_bilinear_blocked_cpu);
SKIFF_REGISTER_KERNEL(interpolate_backward, CPU, "cpu", kFloatTypes, 0, interpolate_backward_cpu);

}  // namespace skiff::cpu
