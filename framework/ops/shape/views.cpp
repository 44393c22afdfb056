// View ops: reshape, permute, slice, expand, diagonal (+ their backward helpers).
#include <algorithm>
#include <numeric>

#include "framework/ops/common.h"
#include "framework/ops/elementwise/binary.h"
#include "framework/ops/reduce/reduce.h"
#include "framework/ops/shape/shape_ops.h"

namespace skiff {
namespace {

Shape shape_attr(const Attrs& a, const char* name) { return Shape(a.get_ints(name)); }

// ---- reshape (input must be contiguous; the wrapper makes it so) ----
std::vector<Tensor> reshape_view(const std::vector<Tensor>& in, const Attrs& a) {
  Shape s = shape_attr(a, "shape");
  return {detail::make_view(in[0], s, contiguous_strides(s), in[0].offset())};
}
std::vector<Tensor> reshape_backward(BackwardContext& ctx) {
  return {reshape(ctx.grad(), ctx.input_meta(0).shape)};
}
const OpDef kReshape{.name = "reshape", .view = reshape_view, .backward = reshape_backward};
SKIFF_REGISTER_OP(kReshape);

// ---- permute ----
std::vector<Tensor> permute_view(const std::vector<Tensor>& in, const Attrs& a) {
  const auto& dims = a.get_ints("dims");
  Shape s, st;
  for (int64_t d : dims) {
    s.push_back(in[0].shape()[d]);
    st.push_back(in[0].strides()[d]);
  }
  return {detail::make_view(in[0], s, st, in[0].offset())};
}
std::vector<Tensor> permute_backward(BackwardContext& ctx) {
  const auto& dims = ctx.attrs().get_ints("dims");
  std::vector<int64_t> inv(dims.size());
  for (size_t i = 0; i < dims.size(); ++i) inv[size_t(dims[i])] = int64_t(i);
  return {permute(ctx.grad(), inv)};
}
const OpDef kPermute{.name = "permute", .view = permute_view, .backward = permute_backward};
SKIFF_REGISTER_OP(kPermute);

// ---- slice (normalized start/end/step attrs) ----
std::vector<Tensor> slice_view(const std::vector<Tensor>& in, const Attrs& a) {
  int64_t dim = a.get_int("dim"), start = a.get_int("start"), end = a.get_int("end"), step = a.get_int("step");
  Shape s = in[0].shape(), st = in[0].strides();
  s[dim] = end > start ? (end - start + step - 1) / step : 0;
  st[dim] *= step;
  return {detail::make_view(in[0], s, st, in[0].offset() + start * in[0].strides()[dim])};
}
Tensor slice_backward_fn(const Tensor& grad, const Shape& input_shape, const Attrs& a);
std::vector<Tensor> slice_backward(BackwardContext& ctx) {
  return {slice_backward_fn(ctx.grad(), ctx.input_meta(0).shape, ctx.attrs())};
}
const OpDef kSlice{.name = "slice", .view = slice_view, .backward = slice_backward};
SKIFF_REGISTER_OP(kSlice);

// slice_backward: zeros of the input shape with grad written into the slice.
std::vector<TensorMeta> slice_backward_infer(const std::vector<Tensor>& in, const Attrs& a) {
  return {{shape_attr(a, "input_shape"), in[0].dtype()}};
}
std::vector<Tensor> slice_backward_backward(BackwardContext& ctx) {
  const Attrs& a = ctx.attrs();
  return {slice(ctx.grad(), a.get_int("dim"), a.get_int("start"), a.get_int("end"), a.get_int("step"))};
}
const OpDef kSliceBackward{.name = "slice_backward", .infer = slice_backward_infer,
                           .backward = slice_backward_backward};
SKIFF_REGISTER_OP(kSliceBackward);

Tensor slice_backward_fn(const Tensor& grad, const Shape& input_shape, const Attrs& a) {
  Attrs b = a;
  b.set("input_shape", input_shape.vec());
  return call_op1(kSliceBackward, {grad}, b);
}

// ---- expand ----
std::vector<Tensor> expand_view(const std::vector<Tensor>& in, const Attrs& a) {
  Shape s = shape_attr(a, "shape");
  Shape st;
  st.resize(s.size());
  int64_t lead = s.size() - in[0].dim();
  for (int64_t d = 0; d < s.size(); ++d) {
    if (d < lead) { st[d] = 0; continue; }
    st[d] = in[0].shape()[d - lead] == 1 && s[d] != 1 ? 0 : in[0].strides()[d - lead];
  }
  return {detail::make_view(in[0], s, st, in[0].offset())};
}
std::vector<Tensor> expand_backward(BackwardContext& ctx) { return {sum_to(ctx.grad(), ctx.input_meta(0).shape)}; }
const OpDef kExpand{.name = "expand", .view = expand_view, .backward = expand_backward};
SKIFF_REGISTER_OP(kExpand);

// ---- diagonal ----
std::vector<Tensor> diagonal_view(const std::vector<Tensor>& in, const Attrs& a) {
  int64_t off = a.get_int("offset"), d1 = a.get_int("dim1"), d2 = a.get_int("dim2");
  const Tensor& x = in[0];
  int64_t n1 = x.shape()[d1], n2 = x.shape()[d2];
  int64_t len = off >= 0 ? std::max<int64_t>(0, std::min(n1, n2 - off)) : std::max<int64_t>(0, std::min(n1 + off, n2));
  int64_t start = len == 0 ? 0 : (off >= 0 ? off * x.strides()[d2] : -off * x.strides()[d1]);
  Shape s, st;
  for (int64_t d = 0; d < x.dim(); ++d)
    if (d != d1 && d != d2) { s.push_back(x.shape()[d]); st.push_back(x.strides()[d]); }
  s.push_back(len);
  st.push_back(x.strides()[d1] + x.strides()[d2]);
  return {detail::make_view(x, s, st, x.offset() + start)};
}
std::vector<TensorMeta> diagonal_backward_infer(const std::vector<Tensor>& in, const Attrs& a) {
  return {{shape_attr(a, "input_shape"), in[0].dtype()}};
}
std::vector<Tensor> diagonal_backward_backward(BackwardContext& ctx) {
  const Attrs& a = ctx.attrs();
  return {diagonal(ctx.grad(), a.get_int("offset"), a.get_int("dim1"), a.get_int("dim2"))};
}
const OpDef kDiagonalBackward{.name = "diagonal_backward", .infer = diagonal_backward_infer,
                              .backward = diagonal_backward_backward};
SKIFF_REGISTER_OP(kDiagonalBackward);
std::vector<Tensor> diagonal_backward(BackwardContext& ctx) {
  Attrs b = ctx.attrs();
  b.set("input_shape", ctx.input_meta(0).shape.vec());
  return {call_op1(kDiagonalBackward, {ctx.grad()}, b)};
}
const OpDef kDiagonal{.name = "diagonal", .view = diagonal_view, .backward = diagonal_backward};
SKIFF_REGISTER_OP(kDiagonal);

// ---- copies and casts ----
std::vector<Tensor> identity_backward(BackwardContext& ctx) { return {ctx.grad()}; }
const OpDef kCopy{.name = "copy", .infer = infer_same_as_input, .backward = identity_backward};
SKIFF_REGISTER_OP(kCopy);

std::vector<TensorMeta> cast_infer(const std::vector<Tensor>& in, const Attrs& a) {
  return {{in[0].shape(), a.get_dtype("dtype")}};
}
std::vector<Tensor> cast_backward(BackwardContext& ctx) {
  DType src = ctx.input_meta(0).dtype;
  if (!is_differentiable(src)) return {Tensor()};
  return {to(ctx.grad(), src)};
}
const OpDef kCast{.name = "cast", .infer = cast_infer, .backward = cast_backward};
SKIFF_REGISTER_OP(kCast);

// ---- squeeze/unsqueeze of one dim: keeps any strides (a true view) ----
std::vector<Tensor> restride_view(const std::vector<Tensor>& in, const Attrs& a) {
  Shape s = in[0].shape(), st = in[0].strides();
  if (a.has("drop")) {
    s.erase(a.get_int("drop"));
    st.erase(a.get_int("drop"));
  } else {
    int64_t d = a.get_int("insert");
    int64_t stride = d < in[0].dim() ? in[0].strides()[d] * in[0].shape()[d] : 1;
    s.insert(d, 1);
    st.insert(d, stride);
  }
  return {detail::make_view(in[0], s, st, in[0].offset())};
}
const OpDef kRestride{.name = "restride", .view = restride_view, .backward = reshape_backward};
SKIFF_REGISTER_OP(kRestride);

}  // namespace

// ---- public functions ----------------------------------------------------------------

Tensor reshape(const Tensor& x, const Shape& shape) {
  Shape s = shape;
  int64_t infer_at = -1, known = 1;
  for (int64_t d = 0; d < s.size(); ++d) {
    if (s[d] == -1) {
      SKIFF_CHECK_SHAPE(infer_at < 0, "reshape: only one dimension can be -1, got {}", shape);
      infer_at = d;
    } else {
      SKIFF_CHECK_SHAPE(s[d] >= 0, "reshape: invalid size {} in {}", s[d], shape);
      // Target shapes come from model files: a product past int64 is an error, not a wrap.
      SKIFF_CHECK_SHAPE(!__builtin_mul_overflow(known, s[d], &known), "reshape: cannot reshape {} ({} elements) to {}",
                        x.shape(), x.numel(), shape);
    }
  }
  if (infer_at >= 0) {
    SKIFF_CHECK_SHAPE(known != 0 && x.numel() % known == 0, "reshape: cannot reshape {} ({} elements) to {}",
                      x.shape(), x.numel(), shape);
    s[infer_at] = x.numel() / known;
  }
  SKIFF_CHECK_SHAPE(s.numel() == x.numel(), "reshape: cannot reshape {} ({} elements) to {}", x.shape(),
                    x.numel(), shape);
  if (s == x.shape()) return x;
  Tensor c = contiguous(x);
  return call_op1(kReshape, {c}, {{"shape", s.vec()}});
}

Tensor flatten(const Tensor& x, int64_t start_dim, int64_t end_dim) {
  if (x.dim() == 0) return reshape(x, {1});
  int64_t s = wrap_dim(start_dim, x.dim(), "flatten"), e = wrap_dim(end_dim, x.dim(), "flatten");
  SKIFF_CHECK_INDEX(s <= e, "flatten: start_dim {} is after end_dim {}", start_dim, end_dim);
  Shape out;
  for (int64_t d = 0; d < s; ++d) out.push_back(x.shape()[d]);
  int64_t m = 1;
  for (int64_t d = s; d <= e; ++d) m *= x.shape()[d];
  out.push_back(m);
  for (int64_t d = e + 1; d < x.dim(); ++d) out.push_back(x.shape()[d]);
  return reshape(x, out);
}

Tensor permute(const Tensor& x, const std::vector<int64_t>& dims) {
  SKIFF_CHECK_INDEX(int64_t(dims.size()) == x.dim(), "permute: expected {} dims for a tensor of shape {}, got {}",
                    x.dim(), x.shape(), dims.size());
  std::vector<int64_t> d(dims.size());
  std::vector<bool> seen(dims.size(), false);
  for (size_t i = 0; i < dims.size(); ++i) {
    d[i] = wrap_dim(dims[i], x.dim(), "permute");
    SKIFF_CHECK_INDEX(!seen[size_t(d[i])], "permute: dimension {} repeated in [{}]", d[i], fmt::join(dims, ", "));
    seen[size_t(d[i])] = true;
  }
  bool identity = true;
  for (size_t i = 0; i < d.size(); ++i) identity &= d[i] == int64_t(i);
  if (identity) return x;
  return call_op1(kPermute, {x}, {{"dims", d}});
}

Tensor transpose(const Tensor& x, int64_t dim0, int64_t dim1) {
  std::vector<int64_t> dims(size_t(x.dim()));
  std::iota(dims.begin(), dims.end(), 0);
  std::swap(dims[size_t(wrap_dim(dim0, x.dim(), "transpose"))], dims[size_t(wrap_dim(dim1, x.dim(), "transpose"))]);
  return permute(x, dims);
}

Tensor t(const Tensor& x) {
  SKIFF_CHECK_SHAPE(x.dim() <= 2, "t: expected a tensor with at most 2 dims, got shape {}", x.shape());
  return x.dim() < 2 ? x : transpose(x, 0, 1);
}

Tensor slice(const Tensor& x, int64_t dim, int64_t start, int64_t end, int64_t step) {
  SKIFF_CHECK_SHAPE(x.dim() > 0, "slice: cannot slice a 0-d tensor");
  dim = wrap_dim(dim, x.dim(), "slice");
  SKIFF_CHECK(step > 0, "slice: step must be positive, got {}", step);
  int64_t n = x.shape()[dim];
  auto clampi = [n](int64_t v) { return v < 0 ? std::max<int64_t>(0, v + n) : std::min(v, n); };
  start = clampi(start);
  end = std::max(start, clampi(end));
  if (start == 0 && end == n && step == 1) return x;
  return call_op1(kSlice, {x}, {{"dim", dim}, {"start", start}, {"end", end}, {"step", step}});
}

Tensor narrow(const Tensor& x, int64_t dim, int64_t start, int64_t length) {
  dim = wrap_dim(dim, x.dim(), "narrow");
  int64_t n = x.shape()[dim];
  if (start < 0) start += n;
  SKIFF_CHECK_INDEX(start >= 0 && length >= 0 && start + length <= n,
                    "narrow: range [{}, {}) out of bounds for dim {} of size {}", start, start + length, dim, n);
  return slice(x, dim, start, start + length);
}

Tensor select(const Tensor& x, int64_t dim, int64_t index) {
  dim = wrap_dim(dim, x.dim(), "select");
  int64_t n = x.shape()[dim];
  SKIFF_CHECK_INDEX(index >= -n && index < n, "select: index {} out of range for dim {} of size {} (shape {})",
                    index, dim, n, x.shape());
  if (index < 0) index += n;
  return squeeze(narrow(x, dim, index, 1), dim);
}

Tensor expand(const Tensor& x, const Shape& shape) {
  SKIFF_CHECK_SHAPE(shape.size() >= x.dim(), "expand: target {} has fewer dims than input {}", shape, x.shape());
  Shape s = shape;
  int64_t lead = s.size() - x.dim();
  for (int64_t d = 0; d < s.size(); ++d) {
    int64_t src = d < lead ? 1 : x.shape()[d - lead];
    if (s[d] == -1) {
      SKIFF_CHECK_SHAPE(d >= lead, "expand: -1 is not allowed for new leading dims in {}", shape);
      s[d] = src;
    }
    SKIFF_CHECK_SHAPE(src == s[d] || src == 1, "expand: cannot expand {} to {} (dim {}: {} vs {})", x.shape(),
                      shape, d, src, s[d]);
  }
  if (s == x.shape()) return x;
  return call_op1(kExpand, {x}, {{"shape", s.vec()}});
}

Tensor squeeze(const Tensor& x) {
  Shape s;
  for (int64_t d : x.shape())
    if (d != 1) s.push_back(d);
  return reshape(x, s);
}

Tensor squeeze(const Tensor& x, int64_t dim) {
  if (x.dim() == 0) return x;
  dim = wrap_dim(dim, x.dim(), "squeeze");
  if (x.shape()[dim] != 1) return x;
  return call_op1(kRestride, {x}, {{"drop", dim}});
}

Tensor unsqueeze(const Tensor& x, int64_t dim) {
  dim = wrap_dim(dim, x.dim() + 1, "unsqueeze");
  return call_op1(kRestride, {x}, {{"insert", dim}});
}

Tensor diagonal(const Tensor& x, int64_t offset, int64_t dim1, int64_t dim2) {
  SKIFF_CHECK_SHAPE(x.dim() >= 2, "diagonal: expected at least 2 dims, got shape {}", x.shape());
  dim1 = wrap_dim(dim1, x.dim(), "diagonal");
  dim2 = wrap_dim(dim2, x.dim(), "diagonal");
  SKIFF_CHECK_INDEX(dim1 != dim2, "diagonal: dim1 and dim2 must differ, both are {}", dim1);
  return call_op1(kDiagonal, {x}, {{"offset", offset}, {"dim1", dim1}, {"dim2", dim2}});
}

Tensor contiguous(const Tensor& x) { return x.is_contiguous() ? x : call_op1(kCopy, {x}); }
Tensor clone(const Tensor& x) { return call_op1(kCopy, {x}); }

Tensor to(const Tensor& x, DType dtype) {
  if (x.dtype() == dtype) return x;
  return call_op1(kCast, {x}, {{"dtype", dtype}});
}

Tensor detach(const Tensor& x) { return detail::make_view(x, x.shape(), x.strides(), x.offset()); }

}  // namespace skiff
