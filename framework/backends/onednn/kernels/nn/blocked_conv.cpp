#include "framework/backends/onednn/kernels/nn/blocked_conv.h"

#include <omp.h>

#include <algorithm>
#include <cmath>
#include <cstring>

#include "framework/backends/onednn/v16.h"
#include "framework/core/error.h"
#include "framework/core/threading.h"

namespace skiff::onednn {

using nn_detail::Conv2dParams;

namespace {

int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

/// What every tile of one call shares.
struct Job {
  const float* src;
  const float* weights;
  const float* bias;  // ceil(O / 16) * 16 floats, zero past O
  const float* residual;
  float* dst;
  const PostStep* chain;
  size_t chain_len;
  m16 last_lanes;  // lanes of the last output block that hold channels (the rest are written 0)
  int64_t out_blocks;
  // Pointwise: `images` of `pixels` pixels; element (pixel, channel block) of an image at
  // pixel * 16 + block * blk (src: x_*, dst and residual: y_*).
  int64_t images, pixels, c, x_image, x_blk, y_image, y_blk;
  // Depthwise.
  const Conv2dParams* p;
};

/// The post-op chain on N vectors (their residuals, for a Sum step, 16 floats apart from
/// `res`). One switch per step for all N: the step kinds are known only at
/// run time, and a switch per vector cost more than the arithmetic.
template <int N>
[[gnu::always_inline]] inline void apply_chain(v16 (&v)[N], const PostStep* chain, size_t chain_len,
                                               const float* res) {
  for (size_t i = 0; i < chain_len; ++i) {
    const PostStep& s = chain[i];
    switch (s.kind) {
      case PostOpKind::Relu:
        #pragma GCC unroll 16
        for (int n = 0; n < N; ++n) v[n] = v[n] > 0.f ? v[n] : splat(0.f);
        break;
      case PostOpKind::LeakyRelu:
        #pragma GCC unroll 16
        for (int n = 0; n < N; ++n) v[n] = v[n] > 0.f ? v[n] : v[n] * s.alpha;
        break;
      case PostOpKind::Clip:
        #pragma GCC unroll 16
        for (int n = 0; n < N; ++n) {
          v[n] = v[n] < s.alpha ? splat(s.alpha) : v[n];
          v[n] = v[n] > s.beta ? splat(s.beta) : v[n];
        }
        break;
      case PostOpKind::HardSwish:
        #pragma GCC unroll 16
        for (int n = 0; n < N; ++n) {
          v16 t = v[n] + 3.f;
          t = t < 0.f ? splat(0.f) : t;
          t = t > 6.f ? splat(6.f) : t;
          v[n] = v[n] * t / 6.f;
        }
        break;
      case PostOpKind::Linear:
        #pragma GCC unroll 16
        for (int n = 0; n < N; ++n) v[n] = v[n] * s.alpha + s.beta;
        break;
      case PostOpKind::Logistic:
        for (int n = 0; n < N; ++n) v[n] = 1.f / (1.f + exp16(-v[n]));
        break;
      case PostOpKind::Swish:
        for (int n = 0; n < N; ++n) v[n] = v[n] / (1.f + exp16(-s.alpha * v[n]));
        break;
      case PostOpKind::Sum:
        if (!res) break;  // callers without a residual reject Sum steps up front
        #pragma GCC unroll 16
        for (int n = 0; n < N; ++n) v[n] += load(res + n * 16);
        break;
    }
  }
}

/// apply_chain() for vectors of output block `block`, whose padded channels stay zero (a
/// Linear or Clip step would move them).
template <int N>
[[gnu::always_inline]] inline void finish(v16 (&v)[N], const Job& job, int64_t block, const float* res) {
  apply_chain<N>(v, job.chain, job.chain_len, res);
  if (block == job.out_blocks - 1) {
    #pragma GCC unroll 16
    for (int n = 0; n < N; ++n) v[n] = job.last_lanes ? v[n] : splat(0.f);
  }
}

/// finish() on N stored vectors from `out`.
template <int N>
[[gnu::always_inline]] inline void chain_in_place(float* out, const Job& job, int64_t block, const float* res) {
  v16 v[N];
  #pragma GCC unroll 16
  for (int n = 0; n < N; ++n) v[n] = load(out + n * 16);
  finish<N>(v, job, block, res);
  #pragma GCC unroll 16
  for (int n = 0; n < N; ++n) store(out + n * 16, v[n]);
}

// ---- pointwise -----------------------------------------------------------------------------

/// Input channel k of one channel block into the sums of R pixels (XS floats apart) times OBT
/// output blocks: the input value is broadcast once and multiplied into OBT weight vectors.
template <int OBT, int R, int XS = 16>
[[gnu::always_inline]] inline void pointwise_step(v16 (&acc)[OBT][R], const float* xb, const float* const (&wb)[OBT],
                                                  int k) {
  v16 wv[OBT];
  #pragma GCC unroll 16
  for (int o = 0; o < OBT; ++o) wv[o] = load(wb[o] + k * 16);
  #pragma GCC unroll 16
  for (int r = 0; r < R; ++r) {
    const float xv = xb[r * XS + k];  // XS: floats between the tile's pixels
    #pragma GCC unroll 16
    for (int o = 0; o < OBT; ++o) acc[o][r] += xv * wv[o];
  }
}

/// Sums of OBT output blocks from `ob` times R pixels, started at the bias.
template <int OBT, int R>
[[gnu::always_inline]] inline void start_at_bias(v16 (&acc)[OBT][R], const Job& j, int64_t ob) {
  #pragma GCC unroll 16
  for (int o = 0; o < OBT; ++o) {
    const v16 b = load(j.bias + (ob + o) * 16);
    #pragma GCC unroll 16
    for (int r = 0; r < R; ++r) acc[o][r] = b;
  }
}

/// One input channel block (`channels` <= 16 of them used) into the sums.
template <int OBT, int R, int XS>
[[gnu::always_inline]] inline void add_channel_block(v16 (&acc)[OBT][R], const float* xb,
                                                     const float* const (&wb)[OBT], int64_t channels) {
  if (channels == 16) {
    #pragma GCC unroll 16
    for (int k = 0; k < 16; ++k) pointwise_step<OBT, R, XS>(acc, xb, wb, k);
  } else {
    for (int k = 0; k < channels; ++k) pointwise_step<OBT, R, XS>(acc, xb, wb, k);
  }
}

/// The chain on the sums, then stored: block o's R vectors from dst + at + o * block_stride.
template <int OBT, int R>
[[gnu::always_inline]] inline void finish_and_store(v16 (&acc)[OBT][R], const Job& j, int64_t ob, int64_t at,
                                                    int64_t block_stride) {
  #pragma GCC unroll 16
  for (int o = 0; o < OBT; ++o) {
    const int64_t at_o = at + o * block_stride;
    finish<R>(acc[o], j, ob + o, j.residual ? j.residual + at_o : nullptr);
    #pragma GCC unroll 16
    for (int r = 0; r < R; ++r) store(j.dst + at_o + r * 16, acc[o][r]);
  }
}

/// R pixels from `pixel` of one image times OBT output blocks from `ob`, all sums in registers.
template <int OBT, int R>
[[gnu::always_inline]] inline void pointwise_tile(const Job& j, int64_t image, int64_t ob, int64_t pixel) {
  const float* x = j.src + image * j.x_image + pixel * 16;
  v16 acc[OBT][R];
  start_at_bias<OBT, R>(acc, j, ob);
  for (int64_t cb = 0; cb * 16 < j.c; ++cb) {
    const float* wb[OBT];
    #pragma GCC unroll 16
    for (int o = 0; o < OBT; ++o) wb[o] = j.weights + ((ob + o) * j.c + cb * 16) * 16;
    add_channel_block<OBT, R, 16>(acc, x + cb * j.x_blk, wb, std::min<int64_t>(16, j.c - cb * 16));
  }
  finish_and_store<OBT, R>(acc, j, ob, image * j.y_image + pixel * 16 + ob * j.y_blk, j.y_blk);
}

/// The last `count` (< R) pixels of a run: the tile of exactly that width.
template <int OBT, int R>
[[gnu::always_inline]] inline void pointwise_tail(const Job& j, int64_t image, int64_t ob, int64_t pixel,
                                                  int64_t count) {
  if constexpr (R > 0) {
    if (count == R) pointwise_tile<OBT, R>(j, image, ob, pixel);
    else pointwise_tail<OBT, R - 1>(j, image, ob, pixel, count);
  }
}

/// Work items [begin, end) of (image, tile of R pixels, group of OBT output blocks), in that
/// order: a tile's inputs (R x C floats) stay in L1 while every group's weights stream past
/// (contiguous, from L2), so the input is read from memory once.
template <int OBT, int R>
[[gnu::always_inline]] inline void pointwise_items(const Job& j, int64_t begin, int64_t end) {
  const int64_t groups = ceil_div(j.out_blocks, OBT), tiles = ceil_div(j.pixels, R);
  for (int64_t item = begin; item < end; ++item) {
    const int64_t group = item % groups, tile = (item / groups) % tiles, image = item / (tiles * groups);
    const int64_t ob = group * OBT, pixel = tile * R, count = std::min<int64_t>(R, j.pixels - pixel);
    if (ob + OBT <= j.out_blocks) {
      if (count == R) pointwise_tile<OBT, R>(j, image, ob, pixel);
      else pointwise_tail<OBT, R - 1>(j, image, ob, pixel, count);
    } else {  // an odd last block
      for (int64_t o = ob; o < j.out_blocks; ++o) {
        if (count == R) pointwise_tile<1, R>(j, image, o, pixel);
        else pointwise_tail<1, R - 1>(j, image, o, pixel, count);
      }
    }
  }
}

// ---- dense -----------------------------------------------------------------------------------

/// R outputs of row `oy` from column `ox` times OBT output blocks from `ob`, columns SW apart in
/// the input. With R > 1 every tap of every output lies inside the input (the caller checks);
/// R == 1 serves the edges and skips the taps outside.
template <int OBT, int R, int SW>
[[gnu::always_inline]] inline void dense_tile(const Job& j, int64_t n, int64_t oy, int64_t ox, int64_t ob) {
  const Conv2dParams& p = *j.p;
  const int64_t in_blocks = ceil_div(p.c, 16), taps = p.kh * p.kw;
  v16 acc[OBT][R];
  start_at_bias<OBT, R>(acc, j, ob);
  for (int64_t cb = 0; cb < in_blocks; ++cb) {
    const float* plane = j.src + (n * in_blocks + cb) * p.h * p.w * 16;
    const int64_t channels = std::min<int64_t>(16, p.c - cb * 16);
    for (int64_t ky = 0; ky < p.kh; ++ky) {
      const int64_t iy = oy * p.sh - p.ph + ky * p.dh;
      if (iy < 0 || iy >= p.h) continue;
      for (int64_t kx = 0; kx < p.kw; ++kx) {
        const int64_t ix = ox * SW - p.pw + kx * p.dw;
        if (R == 1 && (ix < 0 || ix >= p.w)) continue;
        const float* wb[OBT];
        #pragma GCC unroll 16
        for (int o = 0; o < OBT; ++o) wb[o] = j.weights + (((ob + o) * in_blocks + cb) * taps + ky * p.kw + kx) * 256;
        add_channel_block<OBT, R, SW * 16>(acc, plane + (iy * p.w + ix) * 16, wb, channels);
      }
    }
  }
  const int64_t block_stride = p.oh * p.ow * 16;
  finish_and_store<OBT, R>(acc, j, ob, ((n * j.out_blocks + ob) * p.oh + oy) * p.ow * 16 + ox * 16, block_stride);
}

/// The last `count` (< R) interior columns of a row from `ox`: the tile of exactly that width.
template <int OBT, int R, int SW>
[[gnu::always_inline]] inline void dense_tail(const Job& j, int64_t n, int64_t oy, int64_t ox, int64_t ob,
                                              int64_t count) {
  if constexpr (R > 1) {
    if (count == R) dense_tile<OBT, R, SW>(j, n, oy, ox, ob);
    else dense_tail<OBT, R - 1, SW>(j, n, oy, ox, ob, count);
  } else {
    dense_tile<OBT, 1, SW>(j, n, oy, ox, ob);
  }
}

/// One output row for OBT output blocks from `ob`: interior columns R at a time and their
/// remainder as one narrower tile (13-wide maps would otherwise run a pixel at a time), the
/// edge columns one by one.
template <int OBT, int R, int SW>
[[gnu::always_inline]] inline void dense_row(const Job& j, int64_t n, int64_t oy, int64_t ob) {
  const Conv2dParams& p = *j.p;
  // Columns whose whole window lies inside the input: [lo, hi].
  const int64_t lo = std::min(ceil_div(p.pw, SW), p.ow);
  const int64_t span = p.w - 1 + p.pw - (p.kw - 1) * p.dw;
  const int64_t hi = std::min(span < 0 ? int64_t(-1) : span / SW, p.ow - 1);
  int64_t ox = 0;
  for (; ox < lo; ++ox) dense_tile<OBT, 1, SW>(j, n, oy, ox, ob);
  for (; ox + R - 1 <= hi; ox += R) dense_tile<OBT, R, SW>(j, n, oy, ox, ob);
  if (ox <= hi) {
    dense_tail<OBT, R - 1, SW>(j, n, oy, ox, ob, hi - ox + 1);
    ox = hi + 1;
  }
  for (; ox < p.ow; ++ox) dense_tile<OBT, 1, SW>(j, n, oy, ox, ob);
}

/// Work items [begin, end) of (image, output row, group of OBT output blocks): consecutive items
/// read the same input rows.
template <int OBT, int R, int SW>
[[gnu::always_inline]] inline void dense_items(const Job& j, int64_t begin, int64_t end) {
  const Conv2dParams& p = *j.p;
  const int64_t groups = ceil_div(j.out_blocks, OBT);
  for (int64_t item = begin; item < end; ++item) {
    const int64_t group = item % groups, oy = (item / groups) % p.oh, n = item / (groups * p.oh);
    const int64_t ob = group * OBT;
    if (ob + OBT <= j.out_blocks) {
      dense_row<OBT, R, SW>(j, n, oy, ob);
    } else {  // an odd last block
      for (int64_t o = ob; o < j.out_blocks; ++o) dense_row<1, R, SW>(j, n, oy, o);
    }
  }
}

template <int OBT, int R>
[[gnu::always_inline]] inline void dense_any(const Job& j, int64_t begin, int64_t end) {
  if (j.p->sw == 1) dense_items<OBT, R, 1>(j, begin, end);
  else dense_items<OBT, R, 2>(j, begin, end);
}

// ---- depthwise -----------------------------------------------------------------------------

/// R outputs of one row from column `ox`, every tap inside the input (no bounds checks). With
/// KW > 0 (column stride and dilation 1, a KW-wide window) each input column is loaded once
/// and multiplied into the up to KW outputs that read it: R + KW - 1 loads per window row
/// instead of R * KW.
template <int R, int KW>
[[gnu::always_inline]] inline void depthwise_tile(const Job& j, const float* plane, const float* w, v16 b,
                                                  int64_t oy, int64_t ox, float* out) {
  const Conv2dParams& p = *j.p;
  v16 acc[R];
  #pragma GCC unroll 16
  for (int r = 0; r < R; ++r) acc[r] = b;
  for (int64_t ky = 0; ky < p.kh; ++ky) {
    const int64_t iy = oy * p.sh - p.ph + ky * p.dh;  // rows may be strided (PP-OCR rec: stride 2 x 1)
    if (iy < 0 || iy >= p.h) continue;
    const float* row = plane + iy * p.w * 16;
    if constexpr (KW > 0) {
      const float* in = row + (ox - p.pw) * 16;
      v16 wv[KW];
      #pragma GCC unroll 16
      for (int kx = 0; kx < KW; ++kx) wv[kx] = load(w + (ky * KW + kx) * 16);
      #pragma GCC unroll 32
      for (int i = 0; i < R + KW - 1; ++i) {
        const v16 xv = load(in + i * 16);
        #pragma GCC unroll 16
        for (int kx = 0; kx < KW; ++kx)
          if (i - kx >= 0 && i - kx < R) acc[i - kx] += xv * wv[kx];
      }
    } else {
      for (int64_t kx = 0; kx < p.kw; ++kx) {
        const v16 wv = load(w + (ky * p.kw + kx) * 16);
        const float* in = row + (ox * p.sw - p.pw + kx * p.dw) * 16;
        #pragma GCC unroll 16
        for (int r = 0; r < R; ++r) acc[r] += load(in + r * p.sw * 16) * wv;
      }
    }
  }
  #pragma GCC unroll 16
  for (int r = 0; r < R; ++r) store(out + (ox + r) * 16, acc[r]);
}

/// One output at column `ox` near an edge: taps outside the input are skipped.
[[gnu::always_inline]] inline void depthwise_edge(const Job& j, const float* plane, const float* w, v16 b, int64_t oy,
                                                  int64_t ox, float* out) {
  const Conv2dParams& p = *j.p;
  v16 acc = b;
  for (int64_t ky = 0; ky < p.kh; ++ky) {
    const int64_t iy = oy * p.sh - p.ph + ky * p.dh;
    if (iy < 0 || iy >= p.h) continue;
    for (int64_t kx = 0; kx < p.kw; ++kx) {
      const int64_t ix = ox * p.sw - p.pw + kx * p.dw;
      if (ix < 0 || ix >= p.w) continue;
      acc += load(plane + (iy * p.w + ix) * 16) * load(w + (ky * p.kw + kx) * 16);
    }
  }
  store(out + ox * 16, acc);
}

/// Output rows [begin, end) of (image, channel block, row), interior columns R at a time.
template <int R, int KW>
[[gnu::always_inline]] inline void depthwise_rows(const Job& j, int64_t begin, int64_t end) {
  const Conv2dParams& p = *j.p;
  // Columns whose whole window lies inside the input: [lo, hi].
  const int64_t lo = ceil_div(p.pw, p.sw);
  const int64_t span = p.w - 1 + p.pw - (p.kw - 1) * p.dw;
  const int64_t hi = span < 0 ? -1 : span / p.sw;
  for (int64_t row = begin; row < end; ++row) {
    const int64_t oy = row % p.oh, plane_index = row / p.oh, cb = plane_index % j.out_blocks;
    const float* plane = j.src + plane_index * p.h * p.w * 16;
    const float* w = j.weights + cb * p.kh * p.kw * 16;
    const v16 b = load(j.bias + cb * 16);
    const int64_t at = row * p.ow * 16;
    float* out = j.dst + at;
    for (int64_t ox = 0; ox < p.ow;) {
      if (ox >= lo && ox + R - 1 <= hi) {
        depthwise_tile<R, KW>(j, plane, w, b, oy, ox, out);
        ox += R;
      } else {
        depthwise_edge(j, plane, w, b, oy, ox, out);
        ++ox;
      }
    }
    // The chain, in a second pass over the row while it is in L1, 8 vectors at a time.
    const float* res = j.residual ? j.residual + at : nullptr;
    constexpr int kRun = 8;
    for (int64_t ox = 0; ox < p.ow;) {
      if (ox + kRun <= p.ow) {
        chain_in_place<kRun>(out + ox * 16, j, cb, res ? res + ox * 16 : nullptr);
        ox += kRun;
      } else {
        chain_in_place<1>(out + ox * 16, j, cb, res ? res + ox * 16 : nullptr);
        ++ox;
      }
    }
  }
}

// ---- per-ISA entry points ------------------------------------------------------------------

using RangeFn = void (*)(const Job&, int64_t, int64_t);

/// One ISA's pointwise loop and its tile: OBT output blocks times R pixels.
struct PointwiseImpl {
  RangeFn fn;
  int obt, r;
};

// Register budgets: AVX-512 holds 2 x 12 pointwise sums (24 of 32 zmm) and 8 depthwise ones
// (12 with the sliding window, beside up to 5 weights); AVX2 splits each vector in two (6 x 2
// and 4 x 2 of 16 ymm); SSE in four.
[[SKIFF_TARGET_AVX512]] void pointwise_avx512(const Job& j, int64_t b, int64_t e) { pointwise_items<2, 12>(j, b, e); }
[[SKIFF_TARGET_AVX2]] void pointwise_avx2(const Job& j, int64_t b, int64_t e) { pointwise_items<1, 6>(j, b, e); }
void pointwise_baseline(const Job& j, int64_t b, int64_t e) { pointwise_items<1, 3>(j, b, e); }

/// 3- and 5-wide windows at column stride 1 (most depthwise layers) get the sliding-window tile.
template <int R, int RS1>
[[gnu::always_inline]] inline void depthwise_any(const Job& j, int64_t b, int64_t e) {
  const Conv2dParams& p = *j.p;
  const bool s1 = p.sw == 1 && p.dw == 1;
  if (s1 && p.kw == 3) depthwise_rows<RS1, 3>(j, b, e);
  else if (s1 && p.kw == 5) depthwise_rows<RS1, 5>(j, b, e);
  else depthwise_rows<R, 0>(j, b, e);
}
[[SKIFF_TARGET_AVX512]] void depthwise_avx512(const Job& j, int64_t b, int64_t e) { depthwise_any<8, 12>(j, b, e); }
[[SKIFF_TARGET_AVX512]] void dense_avx512(const Job& j, int64_t b, int64_t e) { dense_any<2, 12>(j, b, e); }
[[SKIFF_TARGET_AVX2]] void dense_avx2(const Job& j, int64_t b, int64_t e) { dense_any<1, 6>(j, b, e); }
void dense_baseline(const Job& j, int64_t b, int64_t e) { dense_any<1, 3>(j, b, e); }
[[SKIFF_TARGET_AVX2]] void depthwise_avx2(const Job& j, int64_t b, int64_t e) { depthwise_any<4, 4>(j, b, e); }
void depthwise_baseline(const Job& j, int64_t b, int64_t e) { depthwise_any<2, 2>(j, b, e); }

/// The chain (no Sum step) over `count` floats, 8 vectors at a time, the tail through a
/// zero-padded vector.
[[gnu::always_inline]] inline void chain_run(const float* src, float* dst, int64_t count, const PostStep* chain,
                                             size_t chain_len) {
  constexpr int kRun = 8;
  int64_t i = 0;
  for (; i + kRun * 16 <= count; i += kRun * 16) {
    v16 v[kRun];
    #pragma GCC unroll 16
    for (int n = 0; n < kRun; ++n) v[n] = load(src + i + n * 16);
    apply_chain<kRun>(v, chain, chain_len, nullptr);
    #pragma GCC unroll 16
    for (int n = 0; n < kRun; ++n) store(dst + i + n * 16, v[n]);
  }
  for (; i < count; i += 16) {
    const int64_t n = std::min<int64_t>(16, count - i);
    float tmp[16] = {};
    std::memcpy(tmp, src + i, size_t(n) * sizeof(float));
    v16 v[1] = {load(tmp)};
    apply_chain<1>(v, chain, chain_len, nullptr);
    store(tmp, v[0]);
    std::memcpy(dst + i, tmp, size_t(n) * sizeof(float));
  }
}

using ChainFn = void (*)(const float*, float*, int64_t, const PostStep*, size_t);
[[SKIFF_TARGET_AVX512]] void chain_avx512(const float* s, float* d, int64_t n, const PostStep* c, size_t len) {
  chain_run(s, d, n, c, len);
}
[[SKIFF_TARGET_AVX2]] void chain_avx2(const float* s, float* d, int64_t n, const PostStep* c, size_t len) {
  chain_run(s, d, n, c, len);
}
void chain_baseline(const float* s, float* d, int64_t n, const PostStep* c, size_t len) {
  chain_run(s, d, n, c, len);
}

PointwiseImpl pointwise_impl(CpuIsa isa) {
  return for_isa<PointwiseImpl>(isa, {pointwise_avx512, 2, 12}, {pointwise_avx2, 1, 6}, {pointwise_baseline, 1, 3});
}

/// The dense loop of `isa` and its output-block group (OBT above).
PointwiseImpl dense_impl(CpuIsa isa) {
  return for_isa<PointwiseImpl>(isa, {dense_avx512, 2, 12}, {dense_avx2, 1, 6}, {dense_baseline, 1, 3});
}

/// Runs fn over [0, items) split evenly across the OpenMP threads; one thread for small work.
void run_split(RangeFn fn, const Job& j, int64_t items, double flops) {
  const int threads = num_threads();
  if (threads <= 1 || items < 2 || flops < 2e5) {
    fn(j, 0, items);
    return;
  }
#pragma omp parallel num_threads(threads)
  {
    const int64_t t = omp_get_thread_num(), n = omp_get_num_threads();
    fn(j, items * t / n, items * (t + 1) / n);
  }
}

}  // namespace

BlockedConvKind blocked_conv_kind(const Conv2dParams& p) {
  if (p.n <= 0 || p.c <= 0 || p.o <= 0 || p.oh <= 0 || p.ow <= 0) return BlockedConvKind::None;
  if (p.groups == 1 && p.kh == 1 && p.kw == 1 && p.sh == 1 && p.sw == 1 && p.ph == 0 && p.pw == 0)
    return BlockedConvKind::Pointwise;
  if (p.is_depthwise()) return BlockedConvKind::Depthwise;
  if (p.groups == 1 && p.c >= 16 && p.sh >= 1 && (p.sw == 1 || p.sw == 2)) return BlockedConvKind::Dense;
  return BlockedConvKind::None;
}

size_t blocked_conv_packed_floats(const Conv2dParams& p) {
  const int64_t out_blocks = ceil_div(p.o, 16);
  switch (blocked_conv_kind(p)) {
    case BlockedConvKind::Pointwise: return size_t(out_blocks * p.c * 16);
    case BlockedConvKind::Depthwise: return size_t(out_blocks * p.kh * p.kw * 16);
    case BlockedConvKind::Dense: return size_t(out_blocks * ceil_div(p.c, 16) * p.kh * p.kw * 256);
    case BlockedConvKind::None: break;
  }
  SKIFF_THROW(InternalError, "blocked_conv: no packed layout for this geometry (this is a bug)");
}

void pack_blocked_conv_weights(const Conv2dParams& p, const float* w, float* packed) {
  std::fill_n(packed, blocked_conv_packed_floats(p), 0.f);
  const int64_t taps = p.kh * p.kw;
  const BlockedConvKind kind = blocked_conv_kind(p);
  if (kind == BlockedConvKind::Dense) {
    const int64_t in_blocks = ceil_div(p.c, 16);
    for (int64_t o = 0; o < p.o; ++o)  // [O, C, kh, kw] -> [O / 16, C / 16, kh * kw, 16 (c), 16 (o)]
      for (int64_t c = 0; c < p.c; ++c)
        for (int64_t t = 0; t < taps; ++t)
          packed[((((o / 16) * in_blocks + c / 16) * taps + t) * 16 + c % 16) * 16 + o % 16] = w[(o * p.c + c) * taps + t];
  } else if (kind == BlockedConvKind::Pointwise) {
    for (int64_t o = 0; o < p.o; ++o)  // [O, C] -> [O / 16, C, 16]
      for (int64_t c = 0; c < p.c; ++c) packed[((o / 16) * p.c + c) * 16 + o % 16] = w[o * p.c + c];
  } else {
    for (int64_t c = 0; c < p.c; ++c)  // [C, 1, kh, kw] -> [C / 16, kh * kw, 16]
      for (int64_t t = 0; t < taps; ++t) packed[((c / 16) * taps + t) * 16 + c % 16] = w[c * taps + t];
  }
}

void run_blocked_conv(const Conv2dParams& p, const BlockedConvArgs& a, const std::vector<PostStep>& chain,
                      CpuIsa isa) {
  const BlockedConvKind kind = blocked_conv_kind(p);
  SKIFF_CHECK(kind != BlockedConvKind::None, "blocked_conv: geometry not served (this is a bug)");
  const int64_t out_blocks = ceil_div(p.o, 16), in_blocks = ceil_div(p.c, 16);
  std::vector<float> bias(size_t(out_blocks * 16), 0.f);
  if (a.bias) std::copy_n(a.bias, p.o, bias.begin());
  Job j{};
  j.src = a.src, j.weights = a.weights, j.bias = bias.data(), j.residual = a.residual, j.dst = a.dst;
  j.chain = chain.data(), j.chain_len = chain.size();
  const int64_t valid = p.o - (out_blocks - 1) * 16;
  for (int i = 0; i < 16; ++i) j.last_lanes[i] = i < valid ? -1 : 0;
  j.out_blocks = out_blocks;
  j.p = &p;
  if (kind == BlockedConvKind::Dense) {
    // Edge columns, whose windows reach into the left or right padding, run a pixel at a time at
    // about a third of a wide tile's speed. Where they are a noticeable share of a row (2 of 13
    // columns in NanoDet's deepest layers, +20% time), the input is copied with its zero columns
    // written out, and every column is interior. Per thread, a buffer kept between calls.
    Conv2dParams padded_p = p;
    const int64_t edges = std::min(ceil_div(p.pw, p.sw), p.ow) +
                          std::max<int64_t>(0, p.ow - 1 - (p.w - 1 + p.pw - (p.kw - 1) * p.dw) / p.sw);
    if (p.pw > 0 && edges * 20 >= p.ow) {
      thread_local std::vector<float> padded;
      padded_p.w = p.w + 2 * p.pw;
      padded_p.pw = 0;
      const int64_t rows = p.n * in_blocks * p.h, row = p.w * 16, padded_row = padded_p.w * 16;
      padded.resize(size_t(rows * padded_row));
      float* to = padded.data();
      for (int64_t r = 0; r < rows; ++r) {
        std::fill_n(to + r * padded_row, p.pw * 16, 0.f);
        std::copy_n(a.src + r * row, row, to + r * padded_row + p.pw * 16);
        std::fill_n(to + r * padded_row + p.pw * 16 + row, p.pw * 16, 0.f);
      }
      j.src = to;
      j.p = &padded_p;
    }
    const PointwiseImpl impl = dense_impl(isa);
    run_split(impl.fn, j, p.n * p.oh * ceil_div(out_blocks, impl.obt),
              2.0 * p.n * p.oh * p.ow * p.c * p.o * p.kh * p.kw);
    return;
  }
  if (kind == BlockedConvKind::Depthwise) {
    run_split(for_isa<RangeFn>(isa, depthwise_avx512, depthwise_avx2, depthwise_baseline), j, p.n * out_blocks * p.oh, 2.0 * p.n * p.c * p.oh * p.ow * p.kh * p.kw);
    return;
  }
  const int64_t plane = p.h * p.w;
  j.c = p.c;
  j.images = p.n, j.pixels = plane;
  j.x_image = in_blocks * plane * 16, j.x_blk = plane * 16;
  j.y_image = out_blocks * plane * 16, j.y_blk = plane * 16;
  const PointwiseImpl impl = pointwise_impl(isa);
  const int64_t items = j.images * ceil_div(out_blocks, impl.obt) * ceil_div(j.pixels, impl.r);
  run_split(impl.fn, j, items, 2.0 * p.n * plane * p.c * p.o);
}

void run_post_chain(const float* src, float* dst, int64_t count, const std::vector<PostStep>& chain, CpuIsa isa) {
  for (const PostStep& s : chain)
    SKIFF_CHECK(s.kind != PostOpKind::Sum, "run_post_chain: a Sum step needs a residual (this is a bug)");
  const ChainFn fn = for_isa<ChainFn>(isa, chain_avx512, chain_avx2, chain_baseline);
  constexpr int64_t kGrain = 1 << 14;  // floats per task: parallel only for large tensors
  const int threads = num_threads();
  const int64_t tasks = (count + kGrain - 1) / kGrain;
#pragma omp parallel for num_threads(threads) schedule(static) if (threads > 1 && tasks > 4)
  for (int64_t t = 0; t < tasks; ++t) {
    const int64_t begin = t * kGrain;
    fn(src + begin, dst + begin, std::min(kGrain, count - begin), chain.data(), chain.size());
  }
}

}  // namespace skiff::onednn
