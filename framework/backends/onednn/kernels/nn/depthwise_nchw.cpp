#include "framework/backends/onednn/kernels/nn/depthwise_nchw.h"

#include <omp.h>

#include <algorithm>
#include <cstring>
#include <vector>

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
[[gnu::target("avx512f,avx512vl,avx512bw,avx512dq,avx2,fma")]] void depthwise_plane_avx512(
    const float* padded, int64_t wp, const float* w, int64_t kh, int64_t kw, float bias, float* out, int64_t oh,
    int64_t ow) {
  depthwise_plane_body(padded, wp, w, kh, kw, bias, out, oh, ow);
}
[[gnu::target("avx2,fma")]] void depthwise_plane_avx2(const float* padded, int64_t wp, const float* w, int64_t kh,
                                                      int64_t kw, float bias, float* out, int64_t oh, int64_t ow) {
  depthwise_plane_body(padded, wp, w, kh, kw, bias, out, oh, ow);
}
void depthwise_plane_baseline(const float* padded, int64_t wp, const float* w, int64_t kh, int64_t kw, float bias,
                              float* out, int64_t oh, int64_t ow) {
  depthwise_plane_body(padded, wp, w, kh, kw, bias, out, oh, ow);
}

PlaneFn depthwise_plane() {
  static const PlaneFn fn = [] {
    switch (active_isa()) {
      case CpuIsa::Avx512: return &depthwise_plane_avx512;
      case CpuIsa::Avx2: return &depthwise_plane_avx2;
      default: return &depthwise_plane_baseline;
    }
  }();
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

}  // namespace skiff::onednn_detail
