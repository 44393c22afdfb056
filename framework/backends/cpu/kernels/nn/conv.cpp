// Reference CPU kernels for conv2d, conv2d_backward_input and conv2d_backward_weight.
// Algorithm: im2col + a plain row-major GEMM per (image, group):
//   forward          y[n, g]  = W[g] (O/g x C/g*kh*kw) * col(x[n, g])
//   backward input   gx[n, g] = col2im(W[g]^T * gy[n, g])
//   backward weight  gW[g]   += gy[n, g] * col(x[n, g])^T, summed over n in order
// Layout: NCHW / OIHW, made contiguous on entry. (image, group) tasks (forward, backward input),
// groups (backward weight) or GEMM rows run in parallel; every output element is summed in one
// fixed order, so results do not depend on the thread count (Eigen's threaded GEMM re-blocks with
// the thread count, which is why it is not used here). Speed matters little: float32 normally
// runs on oneDNN.
// Reference: naive direct loops in tests/framework/ops/nn/conv_test.cpp (float64 to 1e-12,
// float32 to 1e-4); this kernel is in turn the oracle for the oneDNN kernels.
#include <algorithm>
#include <vector>

#include "framework/backends/cpu/loops.h"
#include "framework/core/threading.h"
#include "framework/ops/nn/conv_params.h"

namespace skiff::cpu {
namespace {

using nn_detail::Conv2dParams;

Tensor contiguous_input(const Tensor& t) { return t.is_contiguous() ? t : detail::contiguous_copy(t); }

bool is_pointwise(const Conv2dParams& p) {
  return p.kh == 1 && p.kw == 1 && p.sh == 1 && p.sw == 1 && p.ph == 0 && p.pw == 0;
}

/// col[(c * kh + i) * kw + j, oh * OW + ow] = x[c, oh * sh - ph + i * dh, ow * sw - pw + j * dw] (0 outside).
template <typename T>
void im2col(const T* x, int64_t channels, const Conv2dParams& p, T* col) {
  const int64_t ohw = p.oh * p.ow;
  for (int64_t c = 0; c < channels; ++c)
    for (int64_t i = 0; i < p.kh; ++i)
      for (int64_t j = 0; j < p.kw; ++j) {
        T* row = col + ((c * p.kh + i) * p.kw + j) * ohw;
        const T* plane = x + c * p.h * p.w;
        for (int64_t oy = 0; oy < p.oh; ++oy) {
          const int64_t iy = oy * p.sh - p.ph + i * p.dh;
          T* out = row + oy * p.ow;
          if (iy < 0 || iy >= p.h) {
            std::fill(out, out + p.ow, T(0));
            continue;
          }
          const T* in_row = plane + iy * p.w;
          for (int64_t ox = 0; ox < p.ow; ++ox) {
            const int64_t ix = ox * p.sw - p.pw + j * p.dw;
            out[ox] = (ix >= 0 && ix < p.w) ? in_row[ix] : T(0);
          }
        }
      }
}

/// The adjoint of im2col: x[c, iy, ix] += col[...] for every window position that reads (iy, ix).
template <typename T>
void col2im(const T* col, int64_t channels, const Conv2dParams& p, T* x) {
  const int64_t ohw = p.oh * p.ow;
  for (int64_t c = 0; c < channels; ++c)
    for (int64_t i = 0; i < p.kh; ++i)
      for (int64_t j = 0; j < p.kw; ++j) {
        const T* row = col + ((c * p.kh + i) * p.kw + j) * ohw;
        T* plane = x + c * p.h * p.w;
        for (int64_t oy = 0; oy < p.oh; ++oy) {
          const int64_t iy = oy * p.sh - p.ph + i * p.dh;
          if (iy < 0 || iy >= p.h) continue;
          T* out_row = plane + iy * p.w;
          const T* in = row + oy * p.ow;
          for (int64_t ox = 0; ox < p.ow; ++ox) {
            const int64_t ix = ox * p.sw - p.pw + j * p.dw;
            if (ix >= 0 && ix < p.w) out_row[ix] += in[ox];
          }
        }
      }
}

/// C[M, N] (+)= A[M, K] * B[K, N], all row-major and dense. The i-k-j order keeps the inner loop
/// contiguous (vectorized) and sums every C element over k in one fixed order; rows run in parallel
/// when `parallel`, so the result never depends on the thread count.
template <typename T>
void gemm(int64_t m, int64_t n, int64_t k, const T* a, const T* b, T* c, bool accumulate, bool parallel) {
#pragma omp parallel for schedule(static) if (parallel)
  for (int64_t i = 0; i < m; ++i) {
    T* __restrict crow = c + i * n;
    if (!accumulate) std::fill(crow, crow + n, T(0));
    for (int64_t p = 0; p < k; ++p) {
      const T av = a[i * k + p];
      const T* __restrict brow = b + p * n;
      for (int64_t j = 0; j < n; ++j) crow[j] += av * brow[j];
    }
  }
}

template <typename T>
void transpose(const T* src, int64_t rows, int64_t cols, T* dst) {
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < cols; ++c) dst[c * rows + r] = src[r * cols + c];
}

/// Parallelize across (image, group) tasks when there are several, else inside the GEMM.
struct Schedule {
  bool across_tasks, inside_gemm;
};
Schedule schedule(int64_t tasks, int64_t flops) {
  const bool big = flops >= kParallelGrain;
  return {big && tasks > 1, big && tasks == 1};
}

template <typename T>
void conv2d_forward_impl(const Tensor& x, const Tensor& w, const Tensor* bias, const Tensor& y,
                         const Conv2dParams& p) {
  const int64_t cg = p.c_per_group(), og = p.o_per_group(), ohw = p.oh * p.ow, k = cg * p.kh * p.kw;
  const T* xd = x.data<T>();
  const T* wd = w.data<T>();
  const T* bd = bias ? bias->data<T>() : nullptr;
  T* yd = y.data<T>();
  const bool direct = is_pointwise(p);
  const Schedule sched = schedule(p.n * p.groups, p.n * p.o * ohw * k);
#pragma omp parallel for schedule(static) if (sched.across_tasks)
  for (int64_t task = 0; task < p.n * p.groups; ++task) {
    const int64_t n = task / p.groups, g = task % p.groups;
    std::vector<T> col(direct ? 0 : size_t(k * ohw));
    const T* xg = xd + (n * p.c + g * cg) * p.h * p.w;
    if (!direct) im2col(xg, cg, p, col.data());
    T* yg = yd + (n * p.o + g * og) * ohw;
    gemm(og, ohw, k, wd + g * og * k, direct ? xg : col.data(), yg, false, sched.inside_gemm);
    if (bd)
      for (int64_t o = 0; o < og; ++o)
        for (int64_t j = 0; j < ohw; ++j) yg[o * ohw + j] += bd[g * og + o];
  }
}

template <typename T>
void conv2d_backward_input_impl(const Tensor& gy, const Tensor& w, const Tensor& gx, const Conv2dParams& p) {
  const int64_t cg = p.c_per_group(), og = p.o_per_group(), ohw = p.oh * p.ow, k = cg * p.kh * p.kw;
  const T* gyd = gy.data<T>();
  T* gxd = gx.data<T>();
  // W[g]^T for every group, once: [groups, k, og].
  std::vector<T> wt(size_t(p.groups * k * og));
  for (int64_t g = 0; g < p.groups; ++g) transpose(w.data<T>() + g * og * k, og, k, wt.data() + g * k * og);
  const bool direct = is_pointwise(p);
  const Schedule sched = schedule(p.n * p.groups, p.n * p.o * ohw * k);
#pragma omp parallel for schedule(static) if (sched.across_tasks)
  for (int64_t task = 0; task < p.n * p.groups; ++task) {
    const int64_t n = task / p.groups, g = task % p.groups;
    std::vector<T> col(direct ? 0 : size_t(k * ohw));
    T* gxg = gxd + (n * p.c + g * cg) * p.h * p.w;
    const T* gyg = gyd + (n * p.o + g * og) * ohw;
    gemm(k, ohw, og, wt.data() + g * k * og, gyg, direct ? gxg : col.data(), false, sched.inside_gemm);
    if (!direct) {
      std::fill(gxg, gxg + cg * p.h * p.w, T(0));
      col2im(col.data(), cg, p, gxg);
    }
  }
}

template <typename T>
void conv2d_backward_weight_impl(const Tensor& gy, const Tensor& x, const Tensor& gw, const Conv2dParams& p) {
  const int64_t cg = p.c_per_group(), og = p.o_per_group(), ohw = p.oh * p.ow, k = cg * p.kh * p.kw;
  const T* gyd = gy.data<T>();
  const T* xd = x.data<T>();
  T* gwd = gw.data<T>();
  std::fill(gwd, gwd + gw.numel(), T(0));
  // Groups write disjoint slices of gW; images are summed in order inside each group.
  const Schedule sched = schedule(p.groups, p.n * p.o * ohw * k);
#pragma omp parallel for schedule(static) if (sched.across_tasks)
  for (int64_t g = 0; g < p.groups; ++g) {
    std::vector<T> col(size_t(k * ohw)), col_t(size_t(k * ohw));
    for (int64_t n = 0; n < p.n; ++n) {
      const T* xg = xd + (n * p.c + g * cg) * p.h * p.w;
      if (is_pointwise(p)) std::copy(xg, xg + k * ohw, col.begin());
      else im2col(xg, cg, p, col.data());
      transpose(col.data(), k, ohw, col_t.data());
      gemm(og, k, ohw, gyd + (n * p.o + g * og) * ohw, col_t.data(), gwd + g * og * k, true, sched.inside_gemm);
    }
  }
}

template <typename Fn>
void visit_conv_dtype(DType t, const char* kernel, Fn&& fn) {
  visit_floating(t, kernel, [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double>) fn(tag);
    else SKIFF_THROW(NotImplementedError, "{}: dtype {} is not supported", kernel, dtype_name(t));
  });
}

void conv2d_cpu(const KernelContext& c) {
  Tensor x = contiguous_input(c.inputs[0]), w = contiguous_input(c.inputs[1]);
  Tensor b = c.inputs.size() > 2 ? contiguous_input(c.inputs[2]) : Tensor();
  Conv2dParams p = Conv2dParams::from(x.shape(), w.shape(), c.attrs);
  if (c.outputs[0].numel() == 0) return;
  visit_conv_dtype(x.dtype(), "conv2d_cpu", [&](auto tag) {
    conv2d_forward_impl<typename decltype(tag)::type>(x, w, b.defined() ? &b : nullptr, c.outputs[0], p);
  });
}

void conv2d_backward_input_cpu(const KernelContext& c) {
  Tensor gy = contiguous_input(c.inputs[0]), w = contiguous_input(c.inputs[1]);
  Conv2dParams p = Conv2dParams::from(Shape(c.attrs.get_ints("input_size")), w.shape(), c.attrs);
  const Tensor& gx = c.outputs[0];
  if (gx.numel() == 0) return;
  if (p.o == 0) return detail::fill(gx, 0.0);
  visit_conv_dtype(gy.dtype(), "conv2d_backward_input_cpu",
                   [&](auto tag) { conv2d_backward_input_impl<typename decltype(tag)::type>(gy, w, gx, p); });
}

void conv2d_backward_weight_cpu(const KernelContext& c) {
  Tensor gy = contiguous_input(c.inputs[0]), x = contiguous_input(c.inputs[1]);
  Conv2dParams p = Conv2dParams::from(x.shape(), Shape(c.attrs.get_ints("weight_size")), c.attrs);
  const Tensor& gw = c.outputs[0];
  if (gw.numel() == 0) return;
  visit_conv_dtype(gy.dtype(), "conv2d_backward_weight_cpu",
                   [&](auto tag) { conv2d_backward_weight_impl<typename decltype(tag)::type>(gy, x, gw, p); });
}

}  // namespace

SKIFF_REGISTER_KERNEL(conv2d, CPU, "cpu", dtype_bit(DType::Float32) | dtype_bit(DType::Float64), 0, conv2d_cpu);
SKIFF_REGISTER_KERNEL(conv2d_backward_input, CPU, "cpu", dtype_bit(DType::Float32) | dtype_bit(DType::Float64), 0,
                      conv2d_backward_input_cpu);
SKIFF_REGISTER_KERNEL(conv2d_backward_weight, CPU, "cpu", dtype_bit(DType::Float32) | dtype_bit(DType::Float64), 0,
                      conv2d_backward_weight_cpu);

}  // namespace skiff::cpu
