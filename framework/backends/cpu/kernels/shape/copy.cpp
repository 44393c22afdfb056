// CPU kernels for layout ops: copy/cast (strided copy with conversion), the
// scatter-style backward of slice and diagonal, and concat.
#include <cstring>

#include "framework/backends/cpu/loops.h"

namespace skiff::cpu {
namespace {

void copy_cpu(const KernelContext& c) { detail::copy_into(c.outputs[0], c.inputs[0]); }

// Zero the output, then write grad into the view the forward op took.
void slice_backward_cpu(const KernelContext& c) {
  const Tensor& out = c.outputs[0];
  std::memset(out.data_ptr(), 0, size_t(out.nbytes()));
  int64_t dim = c.attrs.get_int("dim"), start = c.attrs.get_int("start"), step = c.attrs.get_int("step");
  Shape st = out.strides();
  st[dim] *= step;
  Tensor v = detail::make_view(out, c.inputs[0].shape(), st, out.offset() + start * out.strides()[dim]);
  detail::copy_into(v, c.inputs[0]);
}

void diagonal_backward_cpu(const KernelContext& c) {
  const Tensor& out = c.outputs[0];
  std::memset(out.data_ptr(), 0, size_t(out.nbytes()));
  int64_t off = c.attrs.get_int("offset"), d1 = c.attrs.get_int("dim1"), d2 = c.attrs.get_int("dim2");
  int64_t len = c.inputs[0].shape().back();
  if (len == 0) return;
  Shape st;
  for (int64_t d = 0; d < out.dim(); ++d)
    if (d != d1 && d != d2) st.push_back(out.strides()[d]);
  st.push_back(out.strides()[d1] + out.strides()[d2]);
  int64_t start = off >= 0 ? off * out.strides()[d2] : -off * out.strides()[d1];
  detail::copy_into(detail::make_view(out, c.inputs[0].shape(), st, out.offset() + start), c.inputs[0]);
}

void concat_cpu(const KernelContext& c) {
  const Tensor& out = c.outputs[0];
  int64_t dim = c.attrs.get_int("dim"), at = 0;
  for (const Tensor& in : c.inputs) {
    int64_t n = in.shape()[dim];
    Shape s = out.shape();
    s[dim] = n;
    detail::copy_into(detail::make_view(out, s, out.strides(), out.offset() + at * out.strides()[dim]), in);
    at += n;
  }
}

}  // namespace

SKIFF_REGISTER_KERNEL(copy, CPU, "cpu", kAllTypes, 0, copy_cpu);
SKIFF_REGISTER_KERNEL(cast, CPU, "cpu", kAllTypes, 0, copy_cpu);
SKIFF_REGISTER_KERNEL(slice_backward, CPU, "cpu", kAllTypes, 0, slice_backward_cpu);
SKIFF_REGISTER_KERNEL(diagonal_backward, CPU, "cpu", kAllTypes, 0, diagonal_backward_cpu);
SKIFF_REGISTER_KERNEL(concat, CPU, "cpu", kAllTypes, 0, concat_cpu);

}  // namespace skiff::cpu
