// FFT op definitions: three primitives (complex->complex, real->complex half spectrum,
// complex half spectrum->real) with their adjoints as backward, and the torch.fft-style
// wrappers (fft.h) that promote, pad/trim and pick the scale.
#include "framework/ops/fft/fft.h"

#include <cmath>

#include "framework/ops/common.h"
#include "framework/ops/elementwise/binary.h"
#include "framework/ops/fft/complex.h"
#include "framework/ops/shape/shape_ops.h"

namespace skiff {
namespace {

// ---- primitives -------------------------------------------------------------------
// Attrs: "dims" (transformed dims, in order; the last one is halved for r2c/c2r),
// "scale" (multiplies the unnormalized sum), "forward" (c2c: sign of the exponent),
// "last_size" (c2r: length of the real output along dims.back()).

Tensor fft_c2c(const Tensor& x, const std::vector<int64_t>& dims, double scale, bool forward);
Tensor fft_r2c(const Tensor& x, const std::vector<int64_t>& dims, double scale);
Tensor fft_c2r(const Tensor& x, const std::vector<int64_t>& dims, double scale, int64_t last_size);

std::vector<TensorMeta> c2c_infer(const std::vector<Tensor>& in, const Attrs&) {
  SKIFF_ASSERT(is_complex(in[0].dtype()), "fft_c2c called with {}", dtype_name(in[0].dtype()));
  return {{in[0].shape(), in[0].dtype()}};
}
std::vector<TensorMeta> r2c_infer(const std::vector<Tensor>& in, const Attrs& a) {
  SKIFF_ASSERT(in[0].dtype() == DType::Float32 || in[0].dtype() == DType::Float64, "fft_r2c called with {}",
               dtype_name(in[0].dtype()));
  Shape s = in[0].shape();
  const int64_t last = a.get_ints("dims").back();
  s[last] = s[last] / 2 + 1;
  return {{s, to_complex(in[0].dtype())}};
}
std::vector<TensorMeta> c2r_infer(const std::vector<Tensor>& in, const Attrs& a) {
  SKIFF_ASSERT(is_complex(in[0].dtype()), "fft_c2r called with {}", dtype_name(in[0].dtype()));
  Shape s = in[0].shape();
  const int64_t last = a.get_ints("dims").back(), n = a.get_int("last_size");
  SKIFF_ASSERT(s[last] == n / 2 + 1, "fft_c2r: input size {} along dim {} for output size {}", s[last], last, n);
  s[last] = n;
  return {{s, to_real(in[0].dtype())}};
}

// (s F)^H = s F^H, and F^H is the unnormalized transform with the other sign.
std::vector<Tensor> c2c_backward(BackwardContext& c) {
  return {fft_c2c(c.grad(), c.attrs().get_ints("dims"), c.attrs().get_float("scale"), !c.attrs().get_bool("forward"))};
}
// r2c keeps frequencies 0..m-1 of the full transform: its adjoint zero-fills the rest,
// runs the inverse-sign transform, and keeps the real part (the input was real).
std::vector<Tensor> r2c_backward(BackwardContext& c) {
  const auto& dims = c.attrs().get_ints("dims");
  const int64_t last = dims.back();
  const int64_t n = c.input_meta(0).shape[last];
  Tensor g = c.grad();
  const int64_t m = g.shape()[last];
  if (n > m) {
    Shape pad = g.shape();
    pad[last] = n - m;
    g = concat({g, zeros(pad, g.dtype())}, last);
  }
  return {real(fft_c2c(g, dims, c.attrs().get_float("scale"), false))};
}
// c2r reads entries 1..n-m (those whose conjugates fill the negative frequencies)
// twice: its adjoint is r2c with those entries doubled.
std::vector<Tensor> c2r_backward(BackwardContext& c) {
  const auto& dims = c.attrs().get_ints("dims");
  const int64_t last = dims.back();
  const Tensor& g = c.grad();
  Tensor gi = fft_r2c(g, dims, c.attrs().get_float("scale"));
  const int64_t n = g.shape()[last], m = gi.shape()[last];
  if (n - m > 0) {
    std::vector<double> w(size_t(m), 1.0);
    for (int64_t k = 1; k <= n - m; ++k) w[size_t(k)] = 2.0;
    Shape ws(std::vector<int64_t>(size_t(g.dim() - last), 1));
    ws[0] = m;
    gi = mul(gi, to(from_vector(w, ws), g.dtype()));
  }
  return {gi};
}

const OpDef kFftC2C{.name = "fft_c2c", .infer = c2c_infer, .backward = c2c_backward};
const OpDef kFftR2C{.name = "fft_r2c", .infer = r2c_infer, .backward = r2c_backward};
const OpDef kFftC2R{.name = "fft_c2r", .infer = c2r_infer, .backward = c2r_backward};
SKIFF_REGISTER_OP(kFftC2C);
SKIFF_REGISTER_OP(kFftR2C);
SKIFF_REGISTER_OP(kFftC2R);

Tensor fft_c2c(const Tensor& x, const std::vector<int64_t>& dims, double scale, bool forward) {
  return call_op1(kFftC2C, {x}, {{"dims", dims}, {"scale", scale}, {"forward", forward}});
}
Tensor fft_r2c(const Tensor& x, const std::vector<int64_t>& dims, double scale) {
  return call_op1(kFftR2C, {x}, {{"dims", dims}, {"scale", scale}});
}
Tensor fft_c2r(const Tensor& x, const std::vector<int64_t>& dims, double scale, int64_t last_size) {
  return call_op1(kFftC2R, {x}, {{"dims", dims}, {"scale", scale}, {"last_size", last_size}});
}

// ---- wrappers ---------------------------------------------------------------------

enum class Kind { C2C, R2C, C2R };

// float32/float64 stay; complex stays; everything else computes in float32.
Tensor promote_real(const Tensor& x) {
  if (x.dtype() == DType::Float32 || x.dtype() == DType::Float64 || is_complex(x.dtype())) return x;
  return to(x, DType::Float32);
}

double scale_for(const std::string& norm, double n, bool forward, const char* op) {
  if (norm == "backward") return forward ? 1.0 : 1.0 / n;
  if (norm == "forward") return forward ? 1.0 / n : 1.0;
  if (norm == "ortho") return 1.0 / std::sqrt(n);
  SKIFF_THROW(ValueError, "{}: expected norm \"backward\", \"forward\" or \"ortho\", got \"{}\"", op, norm);
}

// Zero-pads or trims (from the end) dim to `size`.
Tensor resize_dim(const Tensor& x, int64_t dim, int64_t size) {
  const int64_t cur = x.shape()[dim];
  if (size == cur) return x;
  if (size < cur) return narrow(x, dim, 0, size);
  Shape pad = x.shape();
  pad[dim] = size - cur;
  return concat({x, zeros(pad, x.dtype())}, dim);
}

// One entry point for every public transform. `sizes[i]` is the signal size for
// dims[i] (-1: the input's size, or 2 (m - 1) for the last dim of a c2r).
Tensor transform(const char* op, const Tensor& x0, std::vector<int64_t> dims, std::vector<int64_t> sizes,
                 const std::string& norm, Kind kind, bool forward) {
  Tensor x = promote_real(x0);
  SKIFF_CHECK_INDEX(x.dim() > 0, "{}: expected a tensor with at least 1 dim, got a 0-d tensor", op);
  if (kind == Kind::R2C)
    SKIFF_CHECK_DTYPE(!is_complex(x.dtype()), "{}: expected a real input, got {}", op, dtype_name(x.dtype()));
  SKIFF_CHECK_INDEX(!dims.empty() && int64_t(dims.size()) <= x.dim(),
                    "{}: expected 1 to {} dims for an input of shape {}, got {}", op, x.dim(), x.shape(), dims.size());
  for (auto& d : dims) {
    const int64_t orig = d;
    SKIFF_CHECK_INDEX(d >= -x.dim() && d < x.dim(), "{}: dim {} is out of range for an input of shape {}", op, orig,
                      x.shape());
    d = d < 0 ? d + x.dim() : d;
  }
  for (size_t i = 0; i < dims.size(); ++i)
    for (size_t j = 0; j < i; ++j)
      SKIFF_CHECK_INDEX(dims[i] != dims[j], "{}: dims must be distinct, got dim {} twice (shape {})", op, dims[i],
                        x.shape());
  SKIFF_ASSERT(sizes.size() == dims.size(), "{}: {} sizes for {} dims", op, sizes.size(), dims.size());
  for (size_t i = 0; i < dims.size(); ++i) {
    if (sizes[i] == -1) {
      sizes[i] = x.shape()[dims[i]];
      if (kind == Kind::C2R && i + 1 == dims.size()) sizes[i] = 2 * (sizes[i] - 1);
    }
    SKIFF_CHECK(sizes[i] >= 1, "{}: expected a positive signal size along dim {}, got {} (input shape {})", op,
                dims[i], sizes[i], x.shape());
  }
  double total = 1.0;
  for (int64_t s : sizes) total *= double(s);
  const double scale = scale_for(norm, total, forward, op);

  if (kind != Kind::R2C && !is_complex(x.dtype())) x = to(x, to_complex(x.dtype()));
  for (size_t i = 0; i < dims.size(); ++i) {
    const bool halved = kind == Kind::C2R && i + 1 == dims.size();
    x = resize_dim(x, dims[i], halved ? sizes[i] / 2 + 1 : sizes[i]);
  }
  switch (kind) {
    case Kind::C2C: return fft_c2c(x, dims, scale, forward);
    case Kind::R2C: return fft_r2c(x, dims, scale);
    case Kind::C2R: return fft_c2r(x, dims, scale, sizes.back());
  }
  return {};
}

Tensor one_dim(const char* op, const Tensor& x, std::optional<int64_t> n, int64_t dim, const std::string& norm,
               Kind kind, bool forward) {
  if (n) SKIFF_CHECK(*n >= 1, "{}: expected a positive signal size n, got {}", op, *n);
  return transform(op, x, {dim}, {n ? *n : -1}, norm, kind, forward);
}

Tensor n_dim(const char* op, const Tensor& x, std::vector<int64_t> s, std::vector<int64_t> dims,
             const std::string& norm, Kind kind, bool forward) {
  if (dims.empty()) {
    const int64_t count = s.empty() ? x.dim() : int64_t(s.size());
    SKIFF_CHECK_INDEX(count <= x.dim(), "{}: got {} sizes for an input of shape {}", op, count, x.shape());
    for (int64_t d = x.dim() - count; d < x.dim(); ++d) dims.push_back(d);
  }
  if (s.empty()) s.assign(dims.size(), -1);
  SKIFF_CHECK(s.size() == dims.size(), "{}: expected as many sizes as dims, got s of length {} and {} dims", op,
              s.size(), dims.size());
  for (int64_t v : s) SKIFF_CHECK(v == -1 || v >= 1, "{}: expected positive signal sizes (or -1), got {}", op, v);
  return transform(op, x, dims, s, norm, kind, forward);
}

Tensor two_dim(const char* op, const Tensor& x, const std::vector<int64_t>& s, const std::vector<int64_t>& dims,
               const std::string& norm, Kind kind, bool forward) {
  SKIFF_CHECK(dims.size() == 2, "{}: expected 2 dims, got {}", op, dims.size());
  return n_dim(op, x, s, dims, norm, kind, forward);
}

}  // namespace

Tensor fft(const Tensor& x, std::optional<int64_t> n, int64_t dim, const std::string& norm) {
  return one_dim("fft", x, n, dim, norm, Kind::C2C, true);
}
Tensor ifft(const Tensor& x, std::optional<int64_t> n, int64_t dim, const std::string& norm) {
  return one_dim("ifft", x, n, dim, norm, Kind::C2C, false);
}
Tensor rfft(const Tensor& x, std::optional<int64_t> n, int64_t dim, const std::string& norm) {
  return one_dim("rfft", x, n, dim, norm, Kind::R2C, true);
}
Tensor irfft(const Tensor& x, std::optional<int64_t> n, int64_t dim, const std::string& norm) {
  return one_dim("irfft", x, n, dim, norm, Kind::C2R, false);
}

Tensor fft2(const Tensor& x, const std::vector<int64_t>& s, const std::vector<int64_t>& dims, const std::string& norm) {
  return two_dim("fft2", x, s, dims, norm, Kind::C2C, true);
}
Tensor ifft2(const Tensor& x, const std::vector<int64_t>& s, const std::vector<int64_t>& dims, const std::string& norm) {
  return two_dim("ifft2", x, s, dims, norm, Kind::C2C, false);
}
Tensor rfft2(const Tensor& x, const std::vector<int64_t>& s, const std::vector<int64_t>& dims, const std::string& norm) {
  return two_dim("rfft2", x, s, dims, norm, Kind::R2C, true);
}
Tensor irfft2(const Tensor& x, const std::vector<int64_t>& s, const std::vector<int64_t>& dims,
              const std::string& norm) {
  return two_dim("irfft2", x, s, dims, norm, Kind::C2R, false);
}

Tensor fftn(const Tensor& x, const std::vector<int64_t>& s, const std::vector<int64_t>& dims, const std::string& norm) {
  return n_dim("fftn", x, s, dims, norm, Kind::C2C, true);
}
Tensor ifftn(const Tensor& x, const std::vector<int64_t>& s, const std::vector<int64_t>& dims, const std::string& norm) {
  return n_dim("ifftn", x, s, dims, norm, Kind::C2C, false);
}
Tensor rfftn(const Tensor& x, const std::vector<int64_t>& s, const std::vector<int64_t>& dims, const std::string& norm) {
  return n_dim("rfftn", x, s, dims, norm, Kind::R2C, true);
}
Tensor irfftn(const Tensor& x, const std::vector<int64_t>& s, const std::vector<int64_t>& dims,
              const std::string& norm) {
  return n_dim("irfftn", x, s, dims, norm, Kind::C2R, false);
}

}  // namespace skiff
