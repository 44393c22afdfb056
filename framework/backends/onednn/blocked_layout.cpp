#include "framework/backends/onednn/blocked_layout.h"

#include <algorithm>

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
void block_row(const float* src, float* dst, int64_t valid, int64_t plane, int64_t w) {
  for (int64_t k = 0; k < valid; ++k) {
    const float* s = src + k * plane;
    for (int64_t x = 0; x < w; ++x) dst[x * kBlock + k] = s[x];
  }
  for (int64_t k = valid; k < kBlock; ++k)
    for (int64_t x = 0; x < w; ++x) dst[x * kBlock + k] = 0.f;
}

void unblock_row(const float* src, float* dst, int64_t valid, int64_t plane, int64_t w) {
  for (int64_t k = 0; k < valid; ++k) {
    float* d = dst + k * plane;
    for (int64_t x = 0; x < w; ++x) d[x] = src[x * kBlock + k];
  }
}

}  // namespace

BlockedReorder blocked_reorder_kind(const dnnl::memory::desc& from, const dnnl::memory::desc& to) {
  if (from.dims() != to.dims()) return BlockedReorder::None;
  if (is_layout(from, tag::nchw) && is_layout(to, tag::nChw16c)) return BlockedReorder::Block;
  if (is_layout(from, tag::nChw16c) && is_layout(to, tag::nchw)) return BlockedReorder::Unblock;
  return BlockedReorder::None;
}

void run_blocked_reorder(BlockedReorder kind, const float* from, float* to, const dnnl::memory::dims& dims) {
  const int64_t n = dims[0], c = dims[1], h = dims[2], w = dims[3];
  const int64_t blocks = (c + kBlock - 1) / kBlock, plane = h * w, rows = n * blocks * h;
  const bool block = kind == BlockedReorder::Block;
#pragma omp parallel for num_threads(num_threads()) schedule(static) if (rows * w * kBlock > 65536)
  for (int64_t row = 0; row < rows; ++row) {
    const int64_t y = row % h, cb = (row / h) % blocks, b = row / (h * blocks);
    const int64_t valid = std::min(kBlock, c - cb * kBlock);
    const int64_t plain = (b * c + cb * kBlock) * plane + y * w;  // first of the block's channel rows
    const int64_t blocked = row * w * kBlock;                     // rows are (b, cb, y) in order
    if (block) block_row(from + plain, to + blocked, valid, plane, w);
    else unblock_row(from + blocked, to + plain, valid, plane, w);
  }
}

}  // namespace skiff::onednn
