#include "framework/backends/onednn/kernels/nn/depthwise_nchw.h"

#include <omp.h>

#include <algorithm>
#include <cstring>
#include <vector>

#include "framework/backends/onednn/v16.h"
#include "framework/core/cpu_features.h"
#include "framework/core/threading.h"

namespace skiff::onednn_detail {

namespace {

constexpr int64_t kBlock = 16;  // outputs per accumulator block: one AVX-512 register

int64_t round_up(int64_t v, int64_t m) { return (v + m - 1) / m * m; }

// One plane: padded [hp, wp] input (zero border, rows of wp floats) -> out [oh, ow].
// Each block of 16 outputs accumulates all kh * kw taps in registers before it is
// stored. Inlined into one function per ISA below.
[[gnu::always_inline]] inline void depthwise_plane_body(
    const float* __restrict padded, int64_t wp, const float* __restrict w, int64_t kh, int64_t kw, float bias,
    float* __restrict out, int64_t oh, int64_t ow) {
  const int64_t ow_blocks = round_up(ow, kBlock), full_blocks = ow / kBlock * kBlock;
  for (int64_t oy = 0; oy < oh; ++oy) {
    float* out_row = out + oy * ow;
    for (int64_t ox = 0; ox < ow_blocks; ox += kBlock) {
      float acc[kBlock];
      for (int64_t j = 0; j < kBlock; ++j) acc[j] = bias;
      for (int64_t ky = 0; ky < kh; ++ky) {
        const float* r = padded + (oy + ky) * wp + ox;
        for (int64_t kx = 0; kx < kw; ++kx) {
          const float wk = w[ky * kw + kx];
#pragma omp simd
          for (int64_t j = 0; j < kBlock; ++j) acc[j] += wk * r[kx + j];
        }
      }
      // The last block of a row may be partial: nothing is written past the row.
      if (ox < full_blocks) {
        std::memcpy(out_row + ox, acc, sizeof(acc));
      } else {
        std::memcpy(out_row + ox, acc, size_t(ow - ox) * sizeof(float));
      }
    }
  }
}

// The body compiled for AVX-512, AVX2+FMA and baseline x86-64; depthwise_plane
// picks one by active_isa(), like the vec tables (SKIFF_CPU_ISA can lower it).
using PlaneFn = void (*)(const float*, int64_t, const float*, int64_t, int64_t, float, float*, int64_t, int64_t);
[[SKIFF_TARGET_AVX512]] void depthwise_plane_avx512(const float* padded, int64_t wp, const float* w, int64_t kh,
                                                    int64_t kw, float bias, float* out, int64_t oh, int64_t ow) {
  depthwise_plane_body(padded, wp, w, kh, kw, bias, out, oh, ow);
}
[[SKIFF_TARGET_AVX2]] void depthwise_plane_avx2(const float* padded, int64_t wp, const float* w, int64_t kh,
                                                int64_t kw, float bias, float* out, int64_t oh, int64_t ow) {
  depthwise_plane_body(padded, wp, w, kh, kw, bias, out, oh, ow);
}
void depthwise_plane_baseline(const float* padded, int64_t wp, const float* w, int64_t kh, int64_t kw, float bias,
                              float* out, int64_t oh, int64_t ow) {
  depthwise_plane_body(padded, wp, w, kh, kw, bias, out, oh, ow);
}

PlaneFn depthwise_plane() {
  static const PlaneFn fn =
      onednn::for_isa<PlaneFn>(active_isa(), depthwise_plane_avx512, depthwise_plane_avx2, depthwise_plane_baseline);
  return fn;
}

// Weight gradient of one plane: taps[ky * kw + kx] += sum over (oy, ox) of
// g[oy, ox] * padded[oy * sh + ky, ox * sw + kx]. g has rows of gw_row floats (ow
// rounded up to 16, zero beyond ow), so every block is whole; padded is zero
// wherever the window leaves the input.
[[gnu::always_inline]] inline void depthwise_grad_plane_body(const float* __restrict padded, int64_t wp,
                                                             const float* __restrict g, int64_t gw_row, int64_t oh,
                                                             int64_t sh, int64_t sw, int64_t kh, int64_t kw,
                                                             double* __restrict taps) {
  for (int64_t ky = 0; ky < kh; ++ky) {
    for (int64_t kx = 0; kx < kw; ++kx) {
      float acc[kBlock] = {};
      for (int64_t oy = 0; oy < oh; ++oy) {
        const float* r = padded + (oy * sh + ky) * wp + kx;
        const float* gr = g + oy * gw_row;
        for (int64_t ox = 0; ox < gw_row; ox += kBlock) {
          if (sw == 1) {
#pragma omp simd
            for (int64_t j = 0; j < kBlock; ++j) acc[j] += gr[ox + j] * r[ox + j];
          } else {
#pragma omp simd
            for (int64_t j = 0; j < kBlock; ++j) acc[j] += gr[ox + j] * r[(ox + j) * sw];
          }
        }
      }
      double sum = 0;
      for (int64_t j = 0; j < kBlock; ++j) sum += acc[j];
      taps[ky * kw + kx] += sum;
    }
  }
}

// Unit column stride as its own instance so its loads stay contiguous vectors.
[[gnu::always_inline]] inline void depthwise_grad_plane_strides(const float* padded, int64_t wp, const float* g,
                                                                int64_t gw_row, int64_t oh, int64_t sh, int64_t sw,
                                                                int64_t kh, int64_t kw, double* taps) {
  if (sw == 1) {
    depthwise_grad_plane_body(padded, wp, g, gw_row, oh, sh, 1, kh, kw, taps);
  } else {
    depthwise_grad_plane_body(padded, wp, g, gw_row, oh, sh, sw, kh, kw, taps);
  }
}
using GradPlaneFn = void (*)(const float*, int64_t, const float*, int64_t, int64_t, int64_t, int64_t, int64_t,
                             int64_t, double*);
[[SKIFF_TARGET_AVX512]] void depthwise_grad_plane_avx512(const float* padded, int64_t wp, const float* g,
                                                         int64_t gw_row, int64_t oh, int64_t sh, int64_t sw,
                                                         int64_t kh, int64_t kw, double* taps) {
  depthwise_grad_plane_strides(padded, wp, g, gw_row, oh, sh, sw, kh, kw, taps);
}
[[SKIFF_TARGET_AVX2]] void depthwise_grad_plane_avx2(const float* padded, int64_t wp, const float* g, int64_t gw_row,
                                                     int64_t oh, int64_t sh, int64_t sw, int64_t kh, int64_t kw,
                                                     double* taps) {
  depthwise_grad_plane_strides(padded, wp, g, gw_row, oh, sh, sw, kh, kw, taps);
}
void depthwise_grad_plane_baseline(const float* padded, int64_t wp, const float* g, int64_t gw_row, int64_t oh,
                                   int64_t sh, int64_t sw, int64_t kh, int64_t kw, double* taps) {
  depthwise_grad_plane_strides(padded, wp, g, gw_row, oh, sh, sw, kh, kw, taps);
}

GradPlaneFn depthwise_grad_plane() {
  static const GradPlaneFn fn =
      onednn::for_isa<GradPlaneFn>(active_isa(), depthwise_grad_plane_avx512, depthwise_grad_plane_avx2,
                                   depthwise_grad_plane_baseline);
  return fn;
}

}  // namespace

bool depthwise_nchw_applies(const nn_detail::Conv2dParams& p) {
  return p.is_depthwise() && p.sh == 1 && p.sw == 1 && p.dh == 1 && p.dw == 1 && p.oh > 0 && p.ow > 0 &&
         p.ph < p.kh && p.pw < p.kw;
}

void depthwise_nchw_forward(const nn_detail::Conv2dParams& p, const float* x, const float* w, const float* b,
                            float* y) {
  const int64_t planes = p.n * p.c, in_plane = p.h * p.w, out_plane = p.oh * p.ow;
  // The padded plane: the blocks of the last output column read up to
  // round_up(ow, 16) + kw - 1 columns, the last output row oh + kh - 1 rows.
  const int64_t wp = round_up(p.ow, kBlock) + p.kw - 1, hp = p.oh + p.kh - 1;
  const int threads = num_threads();
  const PlaneFn run_plane = depthwise_plane();
#pragma omp parallel num_threads(threads) if (threads > 1 && planes > 1)
  {
    std::vector<float> padded(size_t(hp * wp), 0.f);
#pragma omp for schedule(static)
    for (int64_t plane = 0; plane < planes; ++plane) {
      const int64_t c = plane % p.c;
      const float* xp = x + plane * in_plane;
      // Rows and columns beyond the input stay zero: the padding.
      for (int64_t iy = 0; iy < p.h && iy + p.ph < hp; ++iy)
        std::memcpy(padded.data() + (iy + p.ph) * wp + p.pw, xp + iy * p.w,
                    size_t(std::min(p.w, wp - p.pw)) * sizeof(float));
      run_plane(padded.data(), wp, w + c * p.kh * p.kw, p.kh, p.kw, b ? b[c] : 0.f, y + plane * out_plane, p.oh,
                p.ow);
    }
  }
}

bool depthwise_nchw_backward_weight_applies(const nn_detail::Conv2dParams& p) {
  return p.is_depthwise() && p.dh == 1 && p.dw == 1 && p.n > 0 && p.oh > 0 && p.ow > 0 && p.ph < p.kh &&
         p.pw < p.kw;
}

void depthwise_nchw_backward_weight(const nn_detail::Conv2dParams& p, const float* gy, const float* x, float* gw) {
  const int64_t in_plane = p.h * p.w, out_plane = p.oh * p.ow, taps = p.kh * p.kw;
  const int64_t gw_row = round_up(p.ow, kBlock);
  // The padded plane covers every input the whole blocks read: rows up to
  // (oh - 1) * sh + kh - 1, columns up to (gw_row - 1) * sw + kw - 1.
  const int64_t wp = (gw_row - 1) * p.sw + p.kw, hp = (p.oh - 1) * p.sh + p.kh;
  const int threads = num_threads();
  const GradPlaneFn run_plane = depthwise_grad_plane();
#pragma omp parallel num_threads(threads) if (threads > 1 && p.c > 1)
  {
    std::vector<float> padded(size_t(hp * wp), 0.f), g(size_t(p.oh * gw_row), 0.f);
    std::vector<double> sums(static_cast<size_t>(taps));
#pragma omp for schedule(static)
    for (int64_t c = 0; c < p.c; ++c) {
      std::fill(sums.begin(), sums.end(), 0.0);
      for (int64_t n = 0; n < p.n; ++n) {
        const int64_t plane = n * p.c + c;
        const float* xp = x + plane * in_plane;
        for (int64_t iy = 0; iy < p.h && iy + p.ph < hp; ++iy)
          std::memcpy(padded.data() + (iy + p.ph) * wp + p.pw, xp + iy * p.w,
                      size_t(std::min(p.w, wp - p.pw)) * sizeof(float));
        for (int64_t oy = 0; oy < p.oh; ++oy)  // the row tails beyond ow stay zero
          std::memcpy(g.data() + oy * gw_row, gy + plane * out_plane + oy * p.ow, size_t(p.ow) * sizeof(float));
        run_plane(padded.data(), wp, g.data(), gw_row, p.oh, p.sh, p.sw, p.kh, p.kw, sums.data());
      }
      for (int64_t t = 0; t < taps; ++t) gw[c * taps + t] = float(sums[size_t(t)]);
    }
  }
}

}  // namespace skiff::onednn_detail
