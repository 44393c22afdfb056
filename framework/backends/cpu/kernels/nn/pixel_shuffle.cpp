// CPU pixel_shuffle: for each output row (n, c, h*rh + i), the rw source planes of block row i
// are interleaved into it, reading each source row once and in order. Rows are independent, so
// they split across threads. Any dtype (a permutation moves bytes); the input is made contiguous.
// Reference: the reshape/permute composite in tests/framework/ops/nn/resample_test.cpp; exact.
#include "framework/backends/cpu/loops.h"
#include "framework/core/threading.h"

namespace skiff::cpu {
namespace {

template <size_t Bytes>
struct Element {
  unsigned char b[Bytes];
};

template <typename T>
void shuffle_rows(const T* in, T* out, int64_t planes, int64_t h, int64_t w, int64_t rh, int64_t rw) {
  const int64_t rows = planes * h * rh, ow = w * rw;
#pragma omp parallel for num_threads(num_threads()) schedule(static) if (rows * ow > 32768)
  for (int64_t row = 0; row < rows; ++row) {
    const int64_t c = row / (h * rh), y = row % (h * rh), sy = y / rh, i = y % rh;
    T* dst = out + row * ow;
    for (int64_t j = 0; j < rw; ++j) {
      const T* src = in + ((c * rh + i) * rw + j) * h * w + sy * w;
      for (int64_t x = 0; x < w; ++x) dst[x * rw + j] = src[x];
    }
  }
}

void pixel_shuffle_cpu(const KernelContext& c) {
  const Tensor x = c.inputs[0].is_contiguous() ? c.inputs[0] : detail::contiguous_copy(c.inputs[0]);
  Tensor& y = c.outputs[0];
  const int64_t rh = c.attrs.get_int("rh"), rw = c.attrs.get_int("rw");
  const int64_t planes = y.size(0) * y.size(1), h = x.size(2), w = x.size(3);
  auto run = [&](auto element) {
    using E = decltype(element);
    shuffle_rows(static_cast<const E*>(x.data_ptr()), static_cast<E*>(y.data_ptr()), planes, h, w, rh, rw);
  };
  switch (x.itemsize()) {
    case 1: run(Element<1>{}); break;
    case 2: run(Element<2>{}); break;
    case 4: run(Element<4>{}); break;
    case 8: run(Element<8>{}); break;
    case 16: run(Element<16>{}); break;
    default: SKIFF_THROW(NotImplementedError, "pixel_shuffle: no CPU kernel for {}", dtype_name(x.dtype()));
  }
}

SKIFF_REGISTER_KERNEL(pixel_shuffle, CPU, "cpu", kAllTypes, 0, pixel_shuffle_cpu);

}  // namespace
}  // namespace skiff::cpu
