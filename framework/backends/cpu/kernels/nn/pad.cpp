// CPU padding kernels.
// constant_pad: fill the output with the value, then copy the input into its interior.
// pad (reflect / replicate): x is seen as [B, S_1..S_k] with the k padded dims last;
// each padded dim gets a table out index -> source index (reflect: mirror without
// repeating the edge; replicate: clamp), and every output row gathers through them.
// pad_backward scatters the gradient back through the same tables, accumulating in
// float (double for float64); it is split over the B leading slices only, whose
// writes are disjoint, so sums do not depend on the thread count.
// Layout: contiguous (inputs copied when not). Reference: hand-written padded
// values and naive loops in tests/framework/ops/nn/resample_test.cpp; exact.
#include <omp.h>

#include <vector>

#include "framework/backends/cpu/loops.h"

namespace skiff::cpu {
namespace {

void constant_pad_cpu(const KernelContext& c) {
  const Tensor& out = c.outputs[0];
  const Tensor& in = c.inputs[0];
  const auto& pads = c.attrs.get_ints("pads");
  // Nothing to write, and an empty output's strides may be saturated (contiguous_strides):
  // the offset below would overflow.
  if (out.numel() == 0) return;
  detail::fill(out, c.attrs.get_float("value"));
  int64_t offset = out.offset();
  for (size_t i = 0; i < pads.size() / 2; ++i) offset += pads[2 * i] * out.strides()[out.dim() - 1 - int64_t(i)];
  if (in.numel() > 0) detail::copy_into(detail::make_view(out, in.shape(), out.strides(), offset), in);
}

// Index tables of the padded dims, outermost first, over the padded (large) shape.
struct PadPlan {
  int64_t k = 0;                              ///< number of padded dims
  int64_t slices = 1;                         ///< B: product of leading dims
  std::vector<int64_t> small, large;          ///< sizes of the padded dims before / after padding
  std::vector<std::vector<int64_t>> source;   ///< per padded dim: large index -> small index
};

PadPlan make_pad_plan(const Shape& small, const std::vector<int64_t>& pads, bool reflect) {
  PadPlan p;
  p.k = int64_t(pads.size() / 2);
  const int64_t lead = small.size() - p.k;
  for (int64_t d = 0; d < lead; ++d) p.slices *= small[d];
  for (int64_t d = lead; d < small.size(); ++d) {
    const size_t pair = size_t(small.size() - 1 - d);
    const int64_t before = pads[2 * pair], after = pads[2 * pair + 1], n = small[d];
    p.small.push_back(n);
    p.large.push_back(n + before + after);
    std::vector<int64_t> src(size_t(n + before + after));
    for (int64_t o = 0; o < int64_t(src.size()); ++o) {
      int64_t i = o - before;
      if (reflect) {
        if (i < 0) i = -i;
        if (i >= n) i = 2 * (n - 1) - i;
      } else {
        i = std::clamp<int64_t>(i, 0, n - 1);
      }
      src[size_t(o)] = i;
    }
    p.source.push_back(std::move(src));
  }
  return p;
}

// Calls fn(large_offset, small_offset, last_table, row_len) for each row (innermost padded dim)
// of slice b.
template <typename Fn>
void for_each_pad_row(const PadPlan& p, int64_t b, Fn&& fn) {
  int64_t small_plane = 1, large_plane = 1;
  for (int64_t d = 0; d < p.k; ++d) {
    small_plane *= p.small[size_t(d)];
    large_plane *= p.large[size_t(d)];
  }
  const int64_t row_len = p.large[size_t(p.k - 1)];
  const int64_t rows = row_len == 0 ? 0 : large_plane / row_len;
  for (int64_t r = 0; r < rows; ++r) {
    int64_t rem = r, small_off = 0, small_stride = p.small[size_t(p.k - 1)];
    for (int64_t d = p.k - 2; d >= 0; --d) {
      const int64_t idx = rem % p.large[size_t(d)];
      rem /= p.large[size_t(d)];
      small_off += p.source[size_t(d)][size_t(idx)] * small_stride;
      small_stride *= p.small[size_t(d)];
    }
    fn(b * large_plane + r * row_len, b * small_plane + small_off, p.source[size_t(p.k - 1)].data(), row_len);
  }
}

bool parallel_slices(const PadPlan& p, int64_t work) {
  return p.slices > 1 && work >= kParallelGrain && num_threads() > 1 && !omp_in_parallel();
}

void pad_cpu(const KernelContext& c) {
  const Tensor x = c.inputs[0].is_contiguous() ? c.inputs[0] : detail::contiguous_copy(c.inputs[0]);
  const Tensor& out = c.outputs[0];
  const auto& pads = c.attrs.get_ints("pads");
  if (out.numel() == 0 || pads.empty()) {
    if (out.numel() > 0) detail::copy_into(out, x);
    return;
  }
  const PadPlan p = make_pad_plan(x.shape(), pads, c.attrs.get_string("mode") == "reflect");
  visit_dtype(x.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* src = static_cast<const T*>(x.data_ptr());
    T* dst = static_cast<T*>(out.data_ptr());
#pragma omp parallel for schedule(static) if (parallel_slices(p, out.numel()))
    for (int64_t b = 0; b < p.slices; ++b)
      for_each_pad_row(p, b, [&](int64_t large_off, int64_t small_off, const int64_t* table, int64_t n) {
        for (int64_t j = 0; j < n; ++j) dst[large_off + j] = src[small_off + table[j]];
      });
  });
}

void pad_backward_cpu(const KernelContext& c) {
  const Tensor g = c.inputs[0].is_contiguous() ? c.inputs[0] : detail::contiguous_copy(c.inputs[0]);
  const Tensor& gx = c.outputs[0];
  const auto& pads = c.attrs.get_ints("pads");
  if (gx.numel() == 0) return;
  if (pads.empty()) {
    detail::copy_into(gx, g);
    return;
  }
  const PadPlan p = make_pad_plan(gx.shape(), pads, c.attrs.get_string("mode") == "reflect");
  const int64_t small_plane = gx.numel() / p.slices;
  visit_floating(g.dtype(), "pad_backward", [&](auto tag) {
    using T = typename decltype(tag)::type;
    using A = acc_t<T>;
    const T* src = static_cast<const T*>(g.data_ptr());
    T* dst = static_cast<T*>(gx.data_ptr());
#pragma omp parallel for schedule(static) if (parallel_slices(p, g.numel()))
    for (int64_t b = 0; b < p.slices; ++b) {
      std::vector<A> acc(size_t(small_plane), A(0));
      const int64_t base = b * small_plane;
      for_each_pad_row(p, b, [&](int64_t large_off, int64_t small_off, const int64_t* table, int64_t n) {
        A* row = acc.data() + (small_off - base);
        for (int64_t j = 0; j < n; ++j) row[table[j]] += A(src[large_off + j]);
      });
      for (int64_t i = 0; i < small_plane; ++i) dst[base + i] = T(acc[size_t(i)]);
    }
  });
}

}  // namespace

SKIFF_REGISTER_KERNEL(constant_pad, CPU, "cpu", kAllTypes, 0, constant_pad_cpu);
SKIFF_REGISTER_KERNEL(pad, CPU, "cpu", kAllTypes, 0, pad_cpu);
SKIFF_REGISTER_KERNEL(pad_backward, CPU, "cpu", kFloatTypes, 0, pad_backward_cpu);

}  // namespace skiff::cpu
