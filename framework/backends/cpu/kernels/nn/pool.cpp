// Reference CPU kernels for 2-D pooling and its backward ops: max_pool2d (+ argmax),
// max_pool2d_values (without it),
// max_pool2d_backward (scatter-add to the argmax), max_pool2d_gather, avg_pool2d(_backward),
// adaptive_avg_pool2d(_backward).
// Algorithm: direct window loops, one [H, W] plane per task; planes run in parallel (each writes
// only its own plane, in a fixed order, so results do not depend on the thread count).
// Layout: NCHW, made contiguous on entry; argmax indices are flat h * W + w within the plane
// (-1 for a window that holds no input element, which no gradient reaches).
// Reference: hand-computed values and naive loops in tests/framework/ops/nn/pool_test.cpp
// (exact for max, 1e-12 in float64 for averages); gradients by float64 gradcheck.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

#include "framework/backends/cpu/loops.h"
#include "framework/core/threading.h"
#include "framework/ops/nn/conv_params.h"
#include "framework/ops/nn/fused.h"

namespace skiff::cpu {
namespace {

using nn_detail::Pool2dParams;

Tensor contiguous_input(const Tensor& t) { return t.is_contiguous() ? t : detail::contiguous_copy(t); }

template <typename Fn>
void visit_pool_dtype(DType t, const char* kernel, Fn&& fn) {
  visit_floating(t, kernel, [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double>) fn(tag);
    else SKIFF_THROW(NotImplementedError, "{}: dtype {} is not supported", kernel, dtype_name(t));
  });
}

/// Runs body(plane) for planes [0, planes), in parallel when there is enough work.
template <typename Body>
void for_each_plane(int64_t planes, int64_t work_per_plane, Body body) {
  const bool parallel = planes > 1 && planes * work_per_plane >= kParallelGrain;
#pragma omp parallel for schedule(static) if (parallel)
  for (int64_t i = 0; i < planes; ++i) body(i);
}

// ---- max ---------------------------------------------------------------------------------

/// Window by window, with the argmax when `id` is not null.
void max_pool_windows(const KernelContext& c, int64_t* id) {
  Tensor x = contiguous_input(c.inputs[0]);
  Pool2dParams p = Pool2dParams::from(x.shape(), c.attrs);
  const Tensor& y = c.outputs[0];
  visit_pool_dtype(x.dtype(), "max_pool2d_cpu", [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* xd = x.data<T>();
    T* yd = y.data<T>();
    for_each_plane(p.n * p.c, p.oh * p.ow * p.kh * p.kw, [&](int64_t plane) {
      const T* in = xd + plane * p.h * p.w;
      T* out = yd + plane * p.oh * p.ow;
      int64_t* out_idx = id ? id + plane * p.oh * p.ow : nullptr;
      for (int64_t oy = 0; oy < p.oh; ++oy)
        for (int64_t ox = 0; ox < p.ow; ++ox) {
          T best = -std::numeric_limits<T>::infinity();
          int64_t best_idx = -1;
          for (int64_t i = 0; i < p.kh; ++i) {
            const int64_t iy = oy * p.sh - p.ph + i * p.dh;
            if (iy < 0 || iy >= p.h) continue;
            for (int64_t j = 0; j < p.kw; ++j) {
              const int64_t ix = ox * p.sw - p.pw + j * p.dw;
              if (ix < 0 || ix >= p.w) continue;
              const T v = in[iy * p.w + ix];
              // NaN wins (and stays): pooling propagates NaN like max() does.
              if (best_idx < 0 || v > best || (std::isnan(v) && !std::isnan(best))) {
                best = v;
                best_idx = iy * p.w + ix;
              }
            }
          }
          out[oy * p.ow + ox] = best;
          if (out_idx) out_idx[oy * p.ow + ox] = best_idx;
        }
    });
  });
}

void max_pool2d_cpu(const KernelContext& c) { max_pool_windows(c, c.outputs[1].data<int64_t>()); }
void max_pool2d_values_cpu(const KernelContext& c) { max_pool_windows(c, nullptr); }

/// Checks indices against the plane size before any parallel loop reads them.
void check_indices(const char* op, const int64_t* idx, int64_t count, int64_t plane_size) {
  for (int64_t i = 0; i < count; ++i)
    SKIFF_CHECK_INDEX(idx[i] >= -1 && idx[i] < plane_size, "{}: expected indices in [-1, {}), got {}", op,
                      plane_size, idx[i]);
}

void max_pool2d_backward_cpu(const KernelContext& c) {
  Tensor gy = contiguous_input(c.inputs[0]), idx = contiguous_input(c.inputs[1]);
  const Tensor& gx = c.outputs[0];
  const int64_t planes = gx.size(0) * gx.size(1), hw = gx.size(2) * gx.size(3);
  const int64_t per_plane = gy.size(2) * gy.size(3);
  const int64_t* id = idx.data<int64_t>();
  check_indices("max_pool2d_backward", id, idx.numel(), hw);
  visit_pool_dtype(gy.dtype(), "max_pool2d_backward_cpu", [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* g = gy.data<T>();
    T* out = gx.data<T>();
    for_each_plane(planes, hw + per_plane, [&](int64_t plane) {
      T* o = out + plane * hw;
      std::fill(o, o + hw, T(0));
      const int64_t* pi = id + plane * per_plane;
      const T* pg = g + plane * per_plane;
      for (int64_t k = 0; k < per_plane; ++k)
        if (pi[k] >= 0) o[pi[k]] += pg[k];
    });
  });
}

void max_pool2d_gather_cpu(const KernelContext& c) {
  Tensor x = contiguous_input(c.inputs[0]), idx = contiguous_input(c.inputs[1]);
  const Tensor& y = c.outputs[0];
  const int64_t planes = x.size(0) * x.size(1), hw = x.size(2) * x.size(3);
  const int64_t per_plane = idx.size(2) * idx.size(3);
  const int64_t* id = idx.data<int64_t>();
  check_indices("max_pool2d_gather", id, idx.numel(), hw);
  visit_pool_dtype(x.dtype(), "max_pool2d_gather_cpu", [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* xd = x.data<T>();
    T* out = y.data<T>();
    for_each_plane(planes, per_plane, [&](int64_t plane) {
      const int64_t* pi = id + plane * per_plane;
      for (int64_t k = 0; k < per_plane; ++k)
        out[plane * per_plane + k] = pi[k] >= 0 ? xd[plane * hw + pi[k]] : T(0);
    });
  });
}

// ---- average -----------------------------------------------------------------------------

/// Window of output (oy, ox) clipped to the input, and its divisor (PyTorch's avg_pool2d rule).
struct AvgWindow {
  int64_t y0, y1, x0, x1;
  int64_t divisor;
};

AvgWindow avg_window(const Pool2dParams& p, int64_t oy, int64_t ox) {
  int64_t y0 = oy * p.sh - p.ph, x0 = ox * p.sw - p.pw;
  int64_t y1 = std::min(y0 + p.kh, p.h + p.ph), x1 = std::min(x0 + p.kw, p.w + p.pw);
  const int64_t padded_size = (y1 - y0) * (x1 - x0);
  y0 = std::max<int64_t>(y0, 0), x0 = std::max<int64_t>(x0, 0);
  y1 = std::min(y1, p.h), x1 = std::min(x1, p.w);
  const int64_t real_size = std::max<int64_t>(y1 - y0, 0) * std::max<int64_t>(x1 - x0, 0);
  return {y0, y1, x0, x1, p.count_include_pad ? padded_size : real_size};
}

void avg_pool2d_cpu(const KernelContext& c) {
  Tensor x = contiguous_input(c.inputs[0]);
  Pool2dParams p = Pool2dParams::from(x.shape(), c.attrs);
  visit_pool_dtype(x.dtype(), "avg_pool2d_cpu", [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* xd = x.data<T>();
    T* yd = c.outputs[0].data<T>();
    for_each_plane(p.n * p.c, p.oh * p.ow * p.kh * p.kw, [&](int64_t plane) {
      const T* in = xd + plane * p.h * p.w;
      T* out = yd + plane * p.oh * p.ow;
      for (int64_t oy = 0; oy < p.oh; ++oy)
        for (int64_t ox = 0; ox < p.ow; ++ox) {
          AvgWindow win = avg_window(p, oy, ox);
          T s = 0;
          for (int64_t iy = win.y0; iy < win.y1; ++iy)
            for (int64_t ix = win.x0; ix < win.x1; ++ix) s += in[iy * p.w + ix];
          out[oy * p.ow + ox] = win.divisor > 0 ? s / T(win.divisor) : T(0);
        }
    });
  });
}

void avg_pool2d_backward_cpu(const KernelContext& c) {
  Tensor gy = contiguous_input(c.inputs[0]);
  Pool2dParams p = Pool2dParams::from(Shape(c.attrs.get_ints("input_size")), c.attrs);
  visit_pool_dtype(gy.dtype(), "avg_pool2d_backward_cpu", [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* g = gy.data<T>();
    T* gx = c.outputs[0].data<T>();
    for_each_plane(p.n * p.c, p.oh * p.ow * p.kh * p.kw, [&](int64_t plane) {
      T* out = gx + plane * p.h * p.w;
      const T* in = g + plane * p.oh * p.ow;
      std::fill(out, out + p.h * p.w, T(0));
      for (int64_t oy = 0; oy < p.oh; ++oy)
        for (int64_t ox = 0; ox < p.ow; ++ox) {
          AvgWindow win = avg_window(p, oy, ox);
          if (win.divisor <= 0) continue;
          const T v = in[oy * p.ow + ox] / T(win.divisor);
          for (int64_t iy = win.y0; iy < win.y1; ++iy)
            for (int64_t ix = win.x0; ix < win.x1; ++ix) out[iy * p.w + ix] += v;
        }
    });
  });
}

// ---- adaptive average --------------------------------------------------------------------

struct AdaptiveGeometry {
  int64_t planes, h, w, oh, ow;
};

template <typename T, bool kBackward>
void adaptive_avg_loop(const T* src, T* dst, const AdaptiveGeometry& g) {
  using nn_detail::adaptive_end;
  using nn_detail::adaptive_start;
  for_each_plane(g.planes, g.h * g.w + g.oh * g.ow, [&](int64_t plane) {
    const int64_t in_off = plane * (kBackward ? g.oh * g.ow : g.h * g.w);
    const int64_t out_off = plane * (kBackward ? g.h * g.w : g.oh * g.ow);
    if constexpr (kBackward) std::fill(dst + out_off, dst + out_off + g.h * g.w, T(0));
    for (int64_t oy = 0; oy < g.oh; ++oy) {
      const int64_t y0 = adaptive_start(oy, g.h, g.oh), y1 = adaptive_end(oy, g.h, g.oh);
      for (int64_t ox = 0; ox < g.ow; ++ox) {
        const int64_t x0 = adaptive_start(ox, g.w, g.ow), x1 = adaptive_end(ox, g.w, g.ow);
        const T inv = T(1) / T((y1 - y0) * (x1 - x0));
        if constexpr (kBackward) {
          const T v = src[in_off + oy * g.ow + ox] * inv;
          for (int64_t iy = y0; iy < y1; ++iy)
            for (int64_t ix = x0; ix < x1; ++ix) dst[out_off + iy * g.w + ix] += v;
        } else {
          T s = 0;
          for (int64_t iy = y0; iy < y1; ++iy)
            for (int64_t ix = x0; ix < x1; ++ix) s += src[in_off + iy * g.w + ix];
          dst[out_off + oy * g.ow + ox] = s * inv;
        }
      }
    }
  });
}

void adaptive_avg_pool2d_cpu(const KernelContext& c) {
  Tensor x = contiguous_input(c.inputs[0]);
  const Tensor& y = c.outputs[0];
  AdaptiveGeometry g{x.size(0) * x.size(1), x.size(2), x.size(3), y.size(2), y.size(3)};
  if (x.numel() == 0) return detail::fill(y, 0.0);
  visit_pool_dtype(x.dtype(), "adaptive_avg_pool2d_cpu", [&](auto tag) {
    using T = typename decltype(tag)::type;
    adaptive_avg_loop<T, false>(x.data<T>(), y.data<T>(), g);
  });
}

void adaptive_avg_pool2d_backward_cpu(const KernelContext& c) {
  Tensor gy = contiguous_input(c.inputs[0]);
  const Tensor& gx = c.outputs[0];
  AdaptiveGeometry g{gx.size(0) * gx.size(1), gx.size(2), gx.size(3), gy.size(2), gy.size(3)};
  if (gx.numel() == 0) return;
  visit_pool_dtype(gy.dtype(), "adaptive_avg_pool2d_backward_cpu", [&](auto tag) {
    using T = typename decltype(tag)::type;
    adaptive_avg_loop<T, true>(gy.data<T>(), gx.data<T>(), g);
  });
}

// ---- float32 row kernels ---------------------------------------------------------------
// Max pooling without the argmax, average pooling without padding and global averages
// take float32 planes row by row: per output row, the elementwise max / sum of the
// window's input rows (contiguous, vectorized), then the max / sum over the window's
// columns of that row. These are what the inference engine runs; the window kernels
// above remain the reference.

/// max(a, b) where a NaN in either wins (as in the window kernel); branch-free so loops vectorize.
template <typename T>
inline T max_nan(T a, T b) {
  return ((b > a) | (b != b)) ? b : a;
}

bool is_f32_cpu(const Tensor& x) { return x.dtype() == DType::Float32 && x.device() == kCPU; }

/// Rounding up gives the sizes rounding down gives, so every window ends inside the padded input.
bool floor_sizes(const Pool2dParams& p) {
  auto floor_size = [](int64_t in, int64_t k, int64_t s, int64_t pad, int64_t d) {
    const int64_t span = in + 2 * pad - d * (k - 1) - 1;
    return span < 0 ? int64_t(0) : span / s + 1;
  };
  return p.oh == floor_size(p.h, p.kh, p.sh, p.ph, p.dh) && p.ow == floor_size(p.w, p.kw, p.sw, p.pw, p.dw);
}

template <bool kMax>
void pool_rows(const KernelContext& c) {
  const Tensor x = contiguous_input(c.inputs[0]);
  const Pool2dParams p = Pool2dParams::from(x.shape(), c.attrs);
  const float* xp = x.data<float>();
  float* yp = c.outputs[0].data<float>();
  const int64_t planes = p.n * p.c, h = p.h, w = p.w, oh = p.oh, ow = p.ow;
  const float lowest = -std::numeric_limits<float>::infinity();
  const float inv_count = 1.f / float(p.kh * p.kw);
#pragma omp parallel num_threads(num_threads()) if (planes * oh * ow * p.kh * p.kw > 65536)
  {
    // One row of column maxima (sums), with -inf in the left/right padding so the column pass
    // needs no bounds checks (floor sizes: every window ends within pw + w + pw).
    std::vector<float> row(static_cast<size_t>(w + 2 * p.pw), lowest);
    float* r = row.data();
    float* rin = r + p.pw;
#pragma omp for schedule(static)
    for (int64_t pi = 0; pi < planes; ++pi) {
      const float* src = xp + pi * h * w;
      float* dst = yp + pi * oh * ow;
      for (int64_t oy = 0; oy < oh; ++oy) {
        bool first = true;
        for (int64_t i = 0; i < p.kh; ++i) {
          const int64_t iy = oy * p.sh - p.ph + i * p.dh;
          if (iy < 0 || iy >= h) continue;
          const float* s = src + iy * w;
          if (first) {
            std::memcpy(rin, s, size_t(w) * sizeof(float));
            first = false;
            continue;
          }
          if constexpr (kMax) {
#pragma omp simd
            for (int64_t j = 0; j < w; ++j) rin[j] = max_nan(rin[j], s[j]);
          } else {
#pragma omp simd
            for (int64_t j = 0; j < w; ++j) rin[j] += s[j];
          }
        }
        if (first) std::fill(rin, rin + w, lowest);  // the window holds no input row
        float* d = dst + oy * ow;
#pragma omp simd
        for (int64_t ox = 0; ox < ow; ++ox) d[ox] = r[ox * p.sw];
        for (int64_t j = 1; j < p.kw; ++j) {
          const float* rj = r + j * p.dw;
          if constexpr (kMax) {
#pragma omp simd
            for (int64_t ox = 0; ox < ow; ++ox) d[ox] = max_nan(d[ox], rj[ox * p.sw]);
          } else {
#pragma omp simd
            for (int64_t ox = 0; ox < ow; ++ox) d[ox] += rj[ox * p.sw];
          }
        }
        if constexpr (!kMax) {
#pragma omp simd
          for (int64_t ox = 0; ox < ow; ++ox) d[ox] *= inv_count;
        }
      }
    }
  }
}

bool max_rows_apply(const KernelContext& c) {
  return is_f32_cpu(c.inputs[0]) && floor_sizes(Pool2dParams::from(c.inputs[0].shape(), c.attrs));
}
// Averages: only unpadded, undilated windows (all full, so count_include_pad does not matter).
bool avg_rows_apply(const KernelContext& c) {
  if (!is_f32_cpu(c.inputs[0])) return false;
  const Pool2dParams p = Pool2dParams::from(c.inputs[0].shape(), c.attrs);
  return p.ph == 0 && p.pw == 0 && p.dh == 1 && p.dw == 1 && floor_sizes(p);
}

/// Global average (adaptive to 1 x 1): each plane summed in float32 with vector partial sums.
void global_avg_rows(const KernelContext& c) {
  const Tensor x = contiguous_input(c.inputs[0]);
  const int64_t planes = x.size(0) * x.size(1), plane = x.size(2) * x.size(3);
  const float* xp = x.data<float>();
  float* yp = c.outputs[0].data<float>();
  const double inv = 1.0 / double(plane);
#pragma omp parallel for num_threads(num_threads()) schedule(static) if (planes * plane > 65536)
  for (int64_t pi = 0; pi < planes; ++pi) {
    const float* s = xp + pi * plane;
    float sum = 0.f;
#pragma omp simd reduction(+ : sum)
    for (int64_t j = 0; j < plane; ++j) sum += s[j];
    const double total = sum;
    yp[pi] = float(total * inv);
  }
}

bool global_avg_rows_apply(const KernelContext& c) {
  const auto& size = c.attrs.get_ints("output_size");
  return is_f32_cpu(c.inputs[0]) && size[0] == 1 && size[1] == 1;
}

// ---- channel-blocked max pooling ---------------------------------------------------------
// x [N, B, H, W, 16] (fused.h): an output pixel is the lane-wise max over its window's 16-value
// vectors (taps outside the input skipped, i.e. -inf padding). Whole vectors per tap, so the
// loop vectorizes at any ISA; one output row per work item.

template <typename T>
void max_pool_blocked_loop(const T* x, T* y, const Pool2dParams& p, int64_t planes) {
  constexpr int64_t L = kChannelBlock;
  const int64_t rows = planes * p.oh;
#pragma omp parallel for num_threads(num_threads()) schedule(static) if (rows * p.ow * p.kh * p.kw * L > 65536)
  for (int64_t row = 0; row < rows; ++row) {
    const int64_t plane = row / p.oh, oy = row % p.oh;
    const T* src = x + plane * p.h * p.w * L;
    T* dst = y + row * p.ow * L;
    for (int64_t ox = 0; ox < p.ow; ++ox) {
      T acc[L];
      for (int64_t l = 0; l < L; ++l) acc[l] = -std::numeric_limits<T>::infinity();
      for (int64_t i = 0; i < p.kh; ++i) {
        const int64_t iy = oy * p.sh - p.ph + i * p.dh;
        if (iy < 0 || iy >= p.h) continue;
        for (int64_t j = 0; j < p.kw; ++j) {
          const int64_t ix = ox * p.sw - p.pw + j * p.dw;
          if (ix < 0 || ix >= p.w) continue;
          const T* s = src + (iy * p.w + ix) * L;
#pragma omp simd
          for (int64_t l = 0; l < L; ++l) acc[l] = max_nan(acc[l], s[l]);
        }
      }
      std::copy(acc, acc + L, dst + ox * L);
    }
  }
}

void max_pool2d_blocked_cpu(const KernelContext& c) {
  const Tensor x = contiguous_input(c.inputs[0]);
  const Pool2dParams p = Pool2dParams::from({x.size(0), x.size(1) * kChannelBlock, x.size(2), x.size(3)}, c.attrs);
  if (c.outputs[0].numel() == 0) return;
  visit_pool_dtype(x.dtype(), "max_pool2d_blocked_cpu", [&](auto tag) {
    using T = typename decltype(tag)::type;
    max_pool_blocked_loop<T>(x.data<T>(), c.outputs[0].data<T>(), p, x.size(0) * x.size(1));
  });
}

constexpr DTypeSet kPoolTypes = dtype_bit(DType::Float32) | dtype_bit(DType::Float64);
constexpr DTypeSet kF32 = dtype_bit(DType::Float32);

}  // namespace

SKIFF_REGISTER_KERNEL(max_pool2d, CPU, "cpu", kPoolTypes, 0, max_pool2d_cpu);
SKIFF_REGISTER_KERNEL(max_pool2d_values, CPU, "cpu", kPoolTypes, 0, max_pool2d_values_cpu);
SKIFF_REGISTER_KERNEL(max_pool2d_blocked, CPU, "cpu", kPoolTypes, 0, max_pool2d_blocked_cpu);
SKIFF_REGISTER_KERNEL_IF(max_pool2d_values, CPU, "cpu-rows", kF32, 5, pool_rows<true>, max_rows_apply);
SKIFF_REGISTER_KERNEL_IF(avg_pool2d, CPU, "cpu-rows", kF32, 5, pool_rows<false>, avg_rows_apply);
SKIFF_REGISTER_KERNEL_IF(adaptive_avg_pool2d, CPU, "cpu-rows", kF32, 5, global_avg_rows, global_avg_rows_apply);
SKIFF_REGISTER_KERNEL(max_pool2d_backward, CPU, "cpu", kPoolTypes, 0, max_pool2d_backward_cpu);
SKIFF_REGISTER_KERNEL(max_pool2d_gather, CPU, "cpu", kPoolTypes, 0, max_pool2d_gather_cpu);
SKIFF_REGISTER_KERNEL(avg_pool2d, CPU, "cpu", kPoolTypes, 0, avg_pool2d_cpu);
SKIFF_REGISTER_KERNEL(avg_pool2d_backward, CPU, "cpu", kPoolTypes, 0, avg_pool2d_backward_cpu);
SKIFF_REGISTER_KERNEL(adaptive_avg_pool2d, CPU, "cpu", kPoolTypes, 0, adaptive_avg_pool2d_cpu);
SKIFF_REGISTER_KERNEL(adaptive_avg_pool2d_backward, CPU, "cpu", kPoolTypes, 0, adaptive_avg_pool2d_backward_cpu);

}  // namespace skiff::cpu
