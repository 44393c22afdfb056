#include "framework/backends/onednn/blocked_layout.h"

#include <algorithm>
#include <cstring>
#include <utility>

#include "framework/backends/onednn/v16.h"
#include "framework/core/threading.h"

namespace skiff::onednn {
namespace {

constexpr int64_t kBlock = 16;
using tag = dnnl::memory::format_tag;
using dt = dnnl::memory::data_type;

bool is_layout(const dnnl::memory::desc& d, tag t) {
  return d.dims().size() == 4 && d.data_type() == dt::f32 && d == dnnl::memory::desc(d.dims(), dt::f32, t);
}

// One row (n, channel block, y): 16 source rows of w floats <-> one blocked row of 16 * w.
// Channels past c are zero in the blocked layout (oneDNN's padding), so a conv reading
// the whole last block sees zeros.
[[gnu::always_inline]] inline void block_row_scalar(const float* src, float* dst, int64_t valid, int64_t plane,
                                                    int64_t x0, int64_t w) {
  for (int64_t k = 0; k < valid; ++k) {
    const float* s = src + k * plane;
    for (int64_t x = x0; x < w; ++x) dst[x * kBlock + k] = s[x];
  }
  for (int64_t k = valid; k < kBlock; ++k)
    for (int64_t x = x0; x < w; ++x) dst[x * kBlock + k] = 0.f;
}

[[gnu::always_inline]] inline void unblock_row_scalar(const float* src, float* dst, int64_t valid, int64_t plane,
                                                      int64_t x0, int64_t w) {
  for (int64_t k = 0; k < valid; ++k) {
    float* d = dst + k * plane;
    for (int64_t x = x0; x < w; ++x) d[x] = src[x * kBlock + k];
  }
}

// 16 x 16 tiles transposed in registers: 16 loads, 64 two-source shuffles and 16 stores per
// 256 floats, where the scalar loops above move one float per load and store.

// Rows r[i] and r[i + h] (i & h == 0) swap their off-diagonal h-wide blocks; after h = 8, 4,
// 2, 1 the tile is transposed (the recursive block-swap transpose).
template <int H, size_t... J>
constexpr m16 lo_mask(std::index_sequence<J...>) {
  return m16{((J & H) ? int32_t(16 + J - H) : int32_t(J))...};
}
template <int H, size_t... J>
constexpr m16 hi_mask(std::index_sequence<J...>) {
  return m16{((J & H) ? int32_t(16 + J) : int32_t(J + H))...};
}

#if defined(__clang__)
// clang has no __builtin_shuffle; its __builtin_shufflevector takes the same lanes as
// constant arguments (the fuzzing build, tests/fuzz, compiles with clang).
template <int H, size_t... J>
[[gnu::always_inline]] inline v16 shuffle_lo(v16 a, v16 b, std::index_sequence<J...>) {
  return __builtin_shufflevector(a, b, ((J & H) ? int(16 + J - H) : int(J))...);
}
template <int H, size_t... J>
[[gnu::always_inline]] inline v16 shuffle_hi(v16 a, v16 b, std::index_sequence<J...>) {
  return __builtin_shufflevector(a, b, ((J & H) ? int(16 + J) : int(J + H))...);
}
#endif

template <int H>
[[gnu::always_inline]] inline void swap_blocks(v16 (&r)[16]) {
#if !defined(__clang__)
  constexpr m16 lo = lo_mask<H>(std::make_index_sequence<16>());
  constexpr m16 hi = hi_mask<H>(std::make_index_sequence<16>());
#endif
  #pragma GCC unroll 16
  for (int i = 0; i < 16; ++i) {
    if (i & H) continue;
    const v16 a = r[i], b = r[i + H];
#if defined(__clang__)
    r[i] = shuffle_lo<H>(a, b, std::make_index_sequence<16>());
    r[i + H] = shuffle_hi<H>(a, b, std::make_index_sequence<16>());
#else
    r[i] = __builtin_shuffle(a, b, lo);
    r[i + H] = __builtin_shuffle(a, b, hi);
#endif
  }
}

[[gnu::always_inline]] inline void transpose16(v16 (&r)[16]) {
  swap_blocks<8>(r);
  swap_blocks<4>(r);
  swap_blocks<2>(r);
  swap_blocks<1>(r);
}

[[gnu::always_inline]] inline void block_row_tiles(const float* src, float* dst, int64_t valid, int64_t plane,
                                                   int64_t w) {
  int64_t x = 0;
  for (; x + kBlock <= w; x += kBlock) {
    v16 r[16];
    #pragma GCC unroll 16
    for (int k = 0; k < 16; ++k) r[k] = k < valid ? load(src + k * plane + x) : v16{};
    transpose16(r);
    #pragma GCC unroll 16
    for (int i = 0; i < 16; ++i) store(dst + (x + i) * kBlock, r[i]);
  }
  block_row_scalar(src, dst, valid, plane, x, w);
}

[[gnu::always_inline]] inline void unblock_row_tiles(const float* src, float* dst, int64_t valid, int64_t plane,
                                                     int64_t w) {
  int64_t x = 0;
  for (; x + kBlock <= w; x += kBlock) {
    v16 r[16];
    #pragma GCC unroll 16
    for (int i = 0; i < 16; ++i) r[i] = load(src + (x + i) * kBlock);
    transpose16(r);
    #pragma GCC unroll 16
    for (int k = 0; k < 16; ++k)
      if (k < valid) store(dst + k * plane + x, r[k]);
  }
  unblock_row_scalar(src, dst, valid, plane, x, w);
}

using RowFn = void (*)(const float*, float*, int64_t, int64_t, int64_t);
[[SKIFF_TARGET_AVX512]] void block_row_avx512(const float* s, float* d, int64_t valid, int64_t plane, int64_t w) {
  block_row_tiles(s, d, valid, plane, w);
}
[[SKIFF_TARGET_AVX512]] void unblock_row_avx512(const float* s, float* d, int64_t valid, int64_t plane, int64_t w) {
  unblock_row_tiles(s, d, valid, plane, w);
}
[[SKIFF_TARGET_AVX2]] void block_row_avx2(const float* s, float* d, int64_t valid, int64_t plane, int64_t w) {
  block_row_tiles(s, d, valid, plane, w);
}
[[SKIFF_TARGET_AVX2]] void unblock_row_avx2(const float* s, float* d, int64_t valid, int64_t plane, int64_t w) {
  unblock_row_tiles(s, d, valid, plane, w);
}
// Baseline SSE would split every shuffle into many: it keeps the scalar loops.
void block_row_baseline(const float* s, float* d, int64_t valid, int64_t plane, int64_t w) {
  block_row_scalar(s, d, valid, plane, 0, w);
}
void unblock_row_baseline(const float* s, float* d, int64_t valid, int64_t plane, int64_t w) {
  unblock_row_scalar(s, d, valid, plane, 0, w);
}

RowFn row_fn(bool block, CpuIsa isa) {
  return block ? for_isa<RowFn>(isa, block_row_avx512, block_row_avx2, block_row_baseline)
               : for_isa<RowFn>(isa, unblock_row_avx512, unblock_row_avx2, unblock_row_baseline);
}

}  // namespace

BlockedReorder blocked_reorder_kind(const dnnl::memory::desc& from, const dnnl::memory::desc& to) {
  if (from.dims() != to.dims()) return BlockedReorder::None;
  if (is_layout(from, tag::nchw) && is_layout(to, tag::nChw16c)) return BlockedReorder::Block;
  if (is_layout(from, tag::nChw16c) && is_layout(to, tag::nchw)) return BlockedReorder::Unblock;
  return BlockedReorder::None;
}

void run_blocked_reorder(BlockedReorder kind, const float* from, float* to, const dnnl::memory::dims& dims,
                         CpuIsa isa) {
  const int64_t n = dims[0], c = dims[1], h = dims[2], w = dims[3];
  const int64_t blocks = (c + kBlock - 1) / kBlock, plane = h * w, rows = n * blocks * h;
  const bool block = kind == BlockedReorder::Block;
  const RowFn row_fn_for_isa = row_fn(block, isa);
#pragma omp parallel for num_threads(num_threads()) schedule(static) if (rows * w * kBlock > 65536)
  for (int64_t row = 0; row < rows; ++row) {
    const int64_t y = row % h, cb = (row / h) % blocks, b = row / (h * blocks);
    const int64_t valid = std::min(kBlock, c - cb * kBlock);
    const int64_t plain = (b * c + cb * kBlock) * plane + y * w;  // first of the block's channel rows
    const int64_t blocked = row * w * kBlock;                     // rows are (b, cb, y) in order
    if (block) row_fn_for_isa(from + plain, to + blocked, valid, plane, w);
    else row_fn_for_isa(from + blocked, to + plain, valid, plane, w);
  }
}

}  // namespace skiff::onednn
