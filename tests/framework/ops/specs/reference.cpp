// Input makers and reference helpers for the op specs. References work on
// std::vector<double> (or complex<double>) read out with to_vector, so they share
// no code path with the kernels they check beyond the element copy.
#include "tests/framework/ops/specs/reference.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "framework/autograd/engine.h"
#include "framework/ops/ops.h"

namespace skiff::spec {

using cd = std::complex<double>;

std::vector<DType> operator+(std::vector<DType> a, const std::vector<DType>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

// ---- inputs -------------------------------------------------------------------------

Tensor make(const Shape& shape, DType dtype, Generator& gen, double lo, double hi) {
  if (is_floating(dtype)) return detail::cast(rand(shape, DType::Float64, &gen, lo, hi), dtype);
  if (is_complex(dtype)) {
    std::vector<cd> v(size_t(shape.numel()));
    for (auto& z : v) z = cd(lo + (hi - lo) * gen.uniform(), lo + (hi - lo) * gen.uniform());
    return tensor_of(v, shape, dtype);
  }
  if (dtype == DType::Bool) return detail::cast(randint(0, 2, shape, DType::Int64, &gen), DType::Bool);
  int64_t l = int64_t(std::ceil(lo)), h = int64_t(std::floor(hi));
  if (dtype == DType::UInt8) l = std::max<int64_t>(l, 0);
  return detail::cast(randint(l, std::max(h, l) + 1, shape, DType::Int64, &gen), dtype);
}

Tensor transposed(const Shape& shape, DType dtype, Generator& gen, double lo, double hi) {
  Shape s = shape;
  std::swap(s[s.size() - 1], s[s.size() - 2]);
  return transpose(make(s, dtype, gen, lo, hi), -1, -2);
}

Tensor stepped(const Shape& shape, DType dtype, Generator& gen, double lo, double hi) {
  Shape s = shape;
  s[s.size() - 1] *= 2;
  return slice(make(s, dtype, gen, lo, hi), -1, 0, s[s.size() - 1], 2);
}

Tensor permuted(const Shape& shape, DType dtype, Generator& gen, double lo, double hi) {
  std::vector<int64_t> rev(shape.begin(), shape.end()), dims;
  std::reverse(rev.begin(), rev.end());
  for (int64_t d = int64_t(shape.size()) - 1; d >= 0; --d) dims.push_back(d);
  return permute(make(Shape(rev), dtype, gen, lo, hi), dims);
}

Tensor expanded(const Shape& shape, DType dtype, Generator& gen, double lo, double hi) {
  Shape s = shape;
  s[0] = 1;
  return expand(make(s, dtype, gen, lo, hi), shape);
}

Tensors contiguous_copies(const Tensors& xs) {
  Tensors out;
  for (const auto& x : xs) out.push_back(x.defined() ? detail::contiguous_copy(x) : x);
  return out;
}

bool any_strided(const Tensors& xs) {
  return std::any_of(xs.begin(), xs.end(), [](const Tensor& x) { return x.defined() && !x.is_contiguous(); });
}

bool any_empty(const Tensors& xs) {
  return std::any_of(xs.begin(), xs.end(), [](const Tensor& x) { return x.defined() && x.numel() == 0; });
}

// ---- plain values -------------------------------------------------------------------

std::vector<double> values(const Tensor& x) {
  if (x.dtype() == DType::Bool) {
    std::vector<bool> b = x.to_vector<bool>();
    return {b.begin(), b.end()};
  }
  return x.to_vector<double>();
}

std::vector<cd> cvalues(const Tensor& x) { return x.to_vector<cd>(); }

// Integer results wrap modulo 2^bits (a double outside the range would make the
// conversion undefined behaviour).
static double wrap_int(double v, DType dtype) {
  int bits = dtype == DType::UInt8 || dtype == DType::Int8 ? 8 : dtype == DType::Int32 ? 32 : 0;
  if (bits == 0 || !std::isfinite(v)) return v;
  double m = std::ldexp(1.0, bits), w = std::fmod(std::trunc(v), m);
  if (w < 0) w += m;
  if (dtype != DType::UInt8 && w >= m / 2) w -= m;
  return w;
}

Tensor tensor_of(const std::vector<double>& v, const Shape& shape, DType dtype) {
  if (!is_integral(dtype)) return detail::cast(from_vector<double>(v, shape), dtype);
  std::vector<double> w = v;
  for (auto& e : w) e = wrap_int(e, dtype);
  return detail::cast(from_vector<double>(w, shape), dtype);
}

Tensor tensor_of(const std::vector<cd>& v, const Shape& shape, DType dtype) {
  return detail::cast(from_vector<cd>(v, shape), dtype);
}

std::vector<int64_t> unravel(int64_t i, const Shape& shape) {
  std::vector<int64_t> idx(shape.size());
  for (int64_t d = int64_t(shape.size()) - 1; d >= 0; --d) {
    idx[size_t(d)] = shape[size_t(d)] ? i % shape[size_t(d)] : 0;
    if (shape[size_t(d)]) i /= shape[size_t(d)];
  }
  return idx;
}

int64_t ravel(const std::vector<int64_t>& idx, const Shape& shape) {
  int64_t i = 0;
  for (size_t d = 0; d < size_t(shape.size()); ++d) i = i * shape[d] + idx[d];
  return i;
}

// ---- element-wise -------------------------------------------------------------------

Shape broadcast(const Shape& a, const Shape& b) {
  size_t n = std::max(a.size(), b.size());
  std::vector<int64_t> out(n);
  for (size_t i = 0; i < n; ++i) {
    int64_t da = i < n - a.size() ? 1 : a[i - (n - a.size())];
    int64_t db = i < n - b.size() ? 1 : b[i - (n - b.size())];
    SKIFF_CHECK_SHAPE(da == db || da == 1 || db == 1, "reference: shapes {} and {} do not broadcast", a, b);
    out[i] = da == 1 ? db : da;
  }
  return Shape(out);
}

namespace {

// Flat position in a (broadcast) input of the output element at idx.
int64_t source_index(const std::vector<int64_t>& idx, const Shape& in) {
  size_t lead = idx.size() - in.size();
  int64_t i = 0;
  for (size_t d = 0; d < size_t(in.size()); ++d) i = i * in[d] + (in[d] == 1 ? 0 : idx[lead + d]);
  return i;
}

}  // namespace

Tensor map1(const Tensor& x, const Scalar1& f, DType out) {
  std::vector<double> v = values(x);
  for (auto& e : v) e = f(e);
  return tensor_of(v, x.shape(), out);
}

Tensor map1c(const Tensor& x, const std::function<cd(cd)>& f, DType out) {
  std::vector<cd> v = cvalues(x);
  for (auto& e : v) e = f(e);
  return tensor_of(v, x.shape(), out);
}

Tensor map2(const Tensor& a, const Tensor& b, const Scalar2& f, DType out) {
  Shape s = broadcast(a.shape(), b.shape());
  std::vector<double> va = values(a), vb = values(b), r(size_t(s.numel()));
  for (int64_t i = 0; i < s.numel(); ++i) {
    auto idx = unravel(i, s);
    r[size_t(i)] = f(va[size_t(source_index(idx, a.shape()))], vb[size_t(source_index(idx, b.shape()))]);
  }
  return tensor_of(r, s, out);
}

Tensor map2c(const Tensor& a, const Tensor& b, const Complex2& f, DType out) {
  Shape s = broadcast(a.shape(), b.shape());
  std::vector<cd> va = cvalues(a), vb = cvalues(b), r(size_t(s.numel()));
  for (int64_t i = 0; i < s.numel(); ++i) {
    auto idx = unravel(i, s);
    r[size_t(i)] = f(va[size_t(source_index(idx, a.shape()))], vb[size_t(source_index(idx, b.shape()))]);
  }
  return tensor_of(r, s, out);
}

Tensor select3(const Tensor& c, const Tensor& a, const Tensor& b, DType out) {
  Shape s = broadcast(broadcast(c.shape(), a.shape()), b.shape());
  std::vector<double> vc = values(c);
  std::vector<cd> va = cvalues(a), vb = cvalues(b), r(size_t(s.numel()));
  for (int64_t i = 0; i < s.numel(); ++i) {
    auto idx = unravel(i, s);
    bool take_a = vc[size_t(source_index(idx, c.shape()))] != 0;
    r[size_t(i)] = take_a ? va[size_t(source_index(idx, a.shape()))] : vb[size_t(source_index(idx, b.shape()))];
  }
  return tensor_of(r, s, out);
}

Tensor index_map(const Tensor& x, const Shape& shape, const std::function<int64_t(const std::vector<int64_t>&)>& src,
                 DType out) {
  std::vector<cd> v = cvalues(x), r(size_t(shape.numel()));
  if (!is_complex(x.dtype())) {
    std::vector<double> re = values(x);
    for (size_t i = 0; i < re.size(); ++i) v[i] = re[i];
  }
  for (int64_t i = 0; i < shape.numel(); ++i) {
    int64_t j = src(unravel(i, shape));
    r[size_t(i)] = j < 0 ? cd(0) : v[size_t(j)];
  }
  if (is_complex(out)) return tensor_of(r, shape, out);
  std::vector<double> re;
  for (const auto& z : r) re.push_back(z.real());
  return tensor_of(re, shape, out);
}

double post_step(const PostStep& s, double x, double residual) {
  switch (s.kind) {
    case PostOpKind::Relu: return x > 0 ? x : 0;
    case PostOpKind::LeakyRelu: return x >= 0 ? x : double(s.alpha) * x;
    case PostOpKind::Clip: return std::min(std::max(x, double(s.alpha)), double(s.beta));
    case PostOpKind::HardSwish: return x * std::min(std::max(x + 3, 0.0), 6.0) / 6;
    case PostOpKind::Linear: return double(s.alpha) * x + double(s.beta);
    case PostOpKind::Logistic: return 1 / (1 + std::exp(-x));
    case PostOpKind::Swish: return x / (1 + std::exp(-double(s.alpha) * x));
    case PostOpKind::Sum: return x + residual;
  }
  return NAN;
}

Tensor block_channels_ref(const Tensor& x, DType out) {
  const Shape& s = x.shape();
  const int64_t blocks = (s[1] + kChannelBlock - 1) / kChannelBlock;
  return index_map(x, {s[0], blocks, s[2], s[3], kChannelBlock}, [&](const std::vector<int64_t>& i) -> int64_t {
    const int64_t c = i[1] * kChannelBlock + i[4];
    return c < s[1] ? ravel({i[0], c, i[2], i[3]}, s) : -1;
  }, out);
}

Tensor unblock_channels_ref(const Tensor& x, int64_t channels, DType out) {
  const Shape& s = x.shape();
  return index_map(x, {s[0], channels, s[2], s[3]}, [&](const std::vector<int64_t>& i) {
    return ravel({i[0], i[1] / kChannelBlock, i[2], i[3], i[1] % kChannelBlock}, s);
  }, out);
}

// ---- reductions ---------------------------------------------------------------------

int64_t wrap_dim(int64_t d, int64_t ndim) { return d < 0 ? d + ndim : d; }

Tensor reducec(const Tensor& x, std::vector<int64_t> dims, bool keepdim,
               const std::function<cd(const std::vector<cd>&)>& f, DType out) {
  const Shape& s = x.shape();
  std::vector<bool> reduced(s.size(), dims.empty());
  // A 0-d tensor has one implicit dim (0 or -1, as in PyTorch): reducing it is the identity.
  if (s.size() == 0) dims.clear();
  for (int64_t d : dims) reduced[size_t(wrap_dim(d, int64_t(s.size())))] = true;
  std::vector<int64_t> kept_shape, out_shape;
  for (size_t d = 0; d < size_t(s.size()); ++d) {
    if (!reduced[d]) kept_shape.push_back(s[d]);
    if (!reduced[d] || keepdim) out_shape.push_back(reduced[d] ? 1 : s[d]);
  }
  Shape ks(kept_shape);
  std::vector<std::vector<cd>> groups(size_t(ks.numel()));
  std::vector<cd> v = cvalues(x);
  if (!is_complex(x.dtype())) {
    std::vector<double> r = values(x);
    for (size_t i = 0; i < r.size(); ++i) v[i] = r[i];
  }
  for (int64_t i = 0; i < s.numel(); ++i) {
    auto idx = unravel(i, s);
    std::vector<int64_t> k;
    for (size_t d = 0; d < size_t(s.size()); ++d)
      if (!reduced[d]) k.push_back(idx[d]);
    groups[size_t(ravel(k, ks))].push_back(v[size_t(i)]);
  }
  std::vector<cd> r;
  for (const auto& g : groups) r.push_back(f(g));
  if (is_complex(out)) return tensor_of(r, Shape(out_shape), out);
  std::vector<double> re;
  for (const auto& z : r) re.push_back(z.real());
  return tensor_of(re, Shape(out_shape), out);
}

Tensor reduce(const Tensor& x, std::vector<int64_t> dims, bool keepdim,
              const std::function<double(const std::vector<double>&)>& f, DType out) {
  return reducec(x, std::move(dims), keepdim, [&f](const std::vector<cd>& g) {
    std::vector<double> re;
    for (const auto& z : g) re.push_back(z.real());
    return cd(f(re));
  }, out);
}

// ---- gradients ----------------------------------------------------------------------

Tensor numeric_vjp(const RunFn& forward, const Tensors& inputs, int which, const Tensor& g, int out, double eps) {
  Tensors in;
  for (const auto& t : inputs)
    in.push_back(t.defined() && is_floating(t.dtype()) ? detail::cast(detail::contiguous_copy(t), DType::Float64)
                                                       : t);
  in[size_t(which)] = detail::contiguous_copy(in[size_t(which)]);
  double* p = in[size_t(which)].data<double>();
  std::vector<double> gv = values(g), grad(size_t(in[size_t(which)].numel()));
  auto dot = [&] {
    std::vector<double> y = values(forward(in)[size_t(out)]);
    double acc = 0;
    for (size_t i = 0; i < y.size(); ++i) acc += y[i] * gv[i];
    return acc;
  };
  NoGradGuard no_grad;
  for (size_t i = 0; i < grad.size(); ++i) {
    double keep = p[i];
    p[i] = keep + eps;
    double up = dot();
    p[i] = keep - eps;
    double down = dot();
    p[i] = keep;
    grad[i] = (up - down) / (2 * eps);
  }
  return from_vector<double>(grad, in[size_t(which)].shape());
}

// ---- comparison ---------------------------------------------------------------------

std::pair<double, double> tolerance(DType dtype) {
  switch (dtype) {
    case DType::Float64:
    case DType::Complex128: return {1e-10, 1e-9};
    case DType::Float32:
    case DType::Complex64: return {2e-5, 2e-5};
    case DType::Float16: return {2e-3, 4e-3};
    case DType::BFloat16: return {2e-2, 2e-2};
    default: return {0, 0};  // integers and bool: exact
  }
}

std::string compare(const Tensor& actual, const Tensor& expected, double atol, double rtol) {
  if (!actual.defined() || !expected.defined())
    return actual.defined() == expected.defined() ? "" : "one of actual/expected is undefined";
  if (actual.shape() != expected.shape())
    return fmt::format("shape {} != expected {}", actual.shape(), expected.shape());
  if (actual.dtype() != expected.dtype())
    return fmt::format("dtype {} != expected {}", dtype_name(actual.dtype()), dtype_name(expected.dtype()));
  std::vector<cd> a = cvalues(actual), e = cvalues(expected);
  if (!is_complex(actual.dtype())) {
    std::vector<double> ar = values(actual), er = values(expected);
    for (size_t i = 0; i < ar.size(); ++i) a[i] = ar[i], e[i] = er[i];
  }
  for (size_t i = 0; i < a.size(); ++i) {
    auto bad = [&](double x, double y) {
      if (std::isnan(x) || std::isnan(y)) return std::isnan(x) != std::isnan(y);
      if (std::isinf(y)) return x != y;
      return !(std::abs(x - y) <= atol + rtol * std::abs(y));
    };
    if (bad(a[i].real(), e[i].real()) || bad(a[i].imag(), e[i].imag()))
      return fmt::format("at {} (flat {}): got {}{:+}i, expected {}{:+}i (atol {}, rtol {})",
                         unravel(int64_t(i), actual.shape()), i, a[i].real(), a[i].imag(), e[i].real(),
                         e[i].imag(), atol, rtol);
  }
  return "";
}

std::string compare_all(const Tensors& actual, const Tensors& expected, double scale) {
  if (actual.size() < expected.size())
    return fmt::format("{} outputs, expected {}", actual.size(), expected.size());
  for (size_t i = 0; i < expected.size(); ++i) {
    auto [atol, rtol] = tolerance(expected[i].defined() ? expected[i].dtype() : DType::Float64);
    std::string m = compare(actual[i], expected[i], atol * scale, rtol * scale);
    if (!m.empty()) return fmt::format("output {}: {}", i, m);
  }
  return "";
}

}  // namespace skiff::spec
