// Specs of the complex-number ops (real, imag, conj, angle, complex) and of the
// three FFT ops (fft_c2c, fft_r2c, fft_c2r) behind fft/ifft/rfft/irfft and their
// 2-D / N-D forms. The FFT reference is the O(n^2) DFT sum, one dim at a time.
#include <cmath>

#include "framework/ops/ops.h"
#include "tests/framework/ops/specs/op_spec.h"
#include "tests/framework/ops/specs/reference.h"

namespace skiff::spec {
namespace {

using cd = std::complex<double>;
using V = std::vector<int64_t>;
constexpr double kPi = 3.141592653589793;

std::vector<cd> as_complex(const Tensor& x) {
  if (is_complex(x.dtype())) return cvalues(x);
  std::vector<double> r = values(x);
  return {r.begin(), r.end()};
}

// ---- complex-number ops --------------------------------------------------------------------

OpSpec part_spec(std::string op, std::function<Tensor(const Tensor&)> fn, std::function<cd(cd)> f, bool real_out,
                 bool grad) {
  OpSpec s{.op = op, .dtypes = kComplex, .grad = grad};
  s.samples = [fn, f, real_out](DType t, Generator& g) {
    std::vector<Sample> v;
    DType out = real_out ? to_real(t) : t;
    for (auto& [note, x] : std::vector<std::pair<std::string, Tensor>>{{"[5,13]", make({5, 13}, t, g)},
                                                                      {"transposed", transposed({3, 4}, t, g)},
                                                                      {"expanded", expanded({2, 3}, t, g)},
                                                                      {"0-d", make({}, t, g)},
                                                                      {"empty", make({0, 2}, t, g)}})
      v.push_back({.note = note, .inputs = {x}, .run = [fn](const Tensors& in) { return Tensors{fn(in[0])}; },
                   .ref = [f, out](const Tensors& in) { return Tensors{map1c(in[0], f, out)}; }});
    // Complex inputs cannot be gradchecked directly: a float64 pair goes through complex().
    if (t == DType::Complex128)
      v.push_back({.note = "of complex(re, im), float64 leaves", .inputs = {make({2, 3}, DType::Float64, g), make({2, 3}, DType::Float64, g)},
                   .run = [fn](const Tensors& in) { return Tensors{fn(complex(in[0], in[1]))}; },
                   .ref = [f, out](const Tensors& in) {
                     std::vector<double> re = values(in[0]), im = values(in[1]);
                     std::vector<cd> z;
                     for (size_t i = 0; i < re.size(); ++i) z.push_back(f(cd(re[i], im[i])));
                     return Tensors{tensor_of(z, in[0].shape(), out)};
                   }});
    return v;
  };
  return s;
}

SKIFF_OP_SPEC(part_spec("real", [](const Tensor& z) { return real(z); }, [](cd z) { return cd(z.real()); }, true, true));
OpSpec imag_spec() {
  OpSpec s = part_spec("imag", [](const Tensor& z) { return imag(z); }, [](cd z) { return cd(z.imag()); }, true, true);
  s.errors = [] {
    return std::vector<ErrorCase>{throws_<TypeError>("real input", "imag", [] { imag(zeros({2})); })};
  };
  return s;
}
SKIFF_OP_SPEC(imag_spec());
SKIFF_OP_SPEC(part_spec("conj", [](const Tensor& z) { return conj(z); }, [](cd z) { return std::conj(z); }, false, true));
// angle = atan2(im, re); its gradient is undefined at 0, which random samples avoid.
SKIFF_OP_SPEC(part_spec("angle", [](const Tensor& z) { return angle(z); }, [](cd z) { return cd(std::arg(z)); }, true,
                        true));

// complex(re, im) broadcasts and pairs float32 -> complex64, float64 -> complex128.
OpSpec complex_spec() {
  OpSpec s{.op = "complex", .dtypes = kF32F64, .grad = true};
  s.samples = [](DType t, Generator& g) {
    auto run = [](const Tensors& in) { return Tensors{complex(in[0], in[1])}; };
    auto ref = [t](const Tensors& in) {
      return Tensors{map2c(in[0], in[1], [](cd a, cd b) { return cd(a.real(), b.real()); }, to_complex(t))};
    };
    return std::vector<Sample>{
        {.note = "[3,4]", .inputs = {make({3, 4}, t, g), make({3, 4}, t, g)}, .run = run, .ref = ref},
        {.note = "broadcast [3,1] x [4]", .inputs = {make({3, 1}, t, g), make({4}, t, g)}, .run = run, .ref = ref},
        {.note = "transposed x stepped", .inputs = {transposed({3, 4}, t, g), stepped({3, 4}, t, g)}, .run = run,
         .ref = ref},
        {.note = "empty", .inputs = {make({0, 2}, t, g), make({2}, t, g)}, .run = run, .ref = ref}};
  };
  s.errors = [] {
    return std::vector<ErrorCase>{
        throws_<TypeError>("mixed precision", "complex", [] { complex(zeros({2}), zeros({2}, DType::Float64)); }),
        throws_<TypeError>("integer parts", "complex", [] { complex(zeros({2}, DType::Int32), zeros({2}, DType::Int32)); })};
  };
  return s;
}
SKIFF_OP_SPEC(complex_spec());

// ---- FFT --------------------------------------------------------------------------------

// The DFT of every line along dim, zero-padded / trimmed to n first, with sign -1
// (forward) or +1 (inverse), times `scale`.
std::vector<cd> dft_dim(const std::vector<cd>& v, Shape& s, int64_t dim, int64_t n, int sign, double scale) {
  Shape os = s;
  os[size_t(dim)] = n;
  std::vector<cd> out(size_t(os.numel()));
  const int64_t m = s[size_t(dim)];
  for (int64_t i = 0; i < os.numel(); ++i) {
    V o = unravel(i, os);
    cd acc = 0;
    for (int64_t tt = 0; tt < std::min(n, m); ++tt) {
      V p = o;
      p[size_t(dim)] = tt;
      acc += v[size_t(ravel(p, s))] * std::polar(1.0, sign * 2 * kPi * double(o[size_t(dim)] * tt % n) / double(n));
    }
    out[size_t(i)] = acc * scale;
  }
  s = os;
  return out;
}

double norm_scale(const std::string& norm, int64_t n, bool inverse) {
  if (norm == "ortho") return 1 / std::sqrt(double(n));
  return (norm == "forward") != inverse ? 1 / double(n) : 1.0;
}

struct Fft {
  V dims;           ///< transformed dims
  V sizes;          ///< signal size per dim (-1: the input's)
  std::string norm = "backward";
  bool inverse = false;
};

// c2c over several dims.
Tensor ref_c2c(const Tensor& x, const Fft& f, DType out) {
  Shape s = x.shape();
  std::vector<cd> v = as_complex(x);
  for (size_t i = 0; i < f.dims.size(); ++i) {
    int64_t d = wrap_dim(f.dims[i], x.dim()), n = f.sizes[i] < 0 ? s[size_t(d)] : f.sizes[i];
    v = dft_dim(v, s, d, n, f.inverse ? 1 : -1, norm_scale(f.norm, n, f.inverse));
  }
  return tensor_of(v, s, out);
}

// r2c: the full transform, then the non-negative frequencies of the last dim.
Tensor ref_r2c(const Tensor& x, const Fft& f, DType out) {
  Tensor full = ref_c2c(x, f, DType::Complex128);
  int64_t d = wrap_dim(f.dims.back(), x.dim());
  return detail::cast(detail::contiguous_copy(slice(full, d, 0, full.shape()[size_t(d)] / 2 + 1)), out);
}

// c2r: inverse c2c over all but the last dim, then the Hermitian completion of the
// last dim (imaginary parts of the 0 and n/2 terms ignored) and its inverse DFT.
Tensor ref_c2r(const Tensor& x, const Fft& f, DType out) {
  Fft head = f;
  head.inverse = true;
  head.dims.pop_back();
  head.sizes.pop_back();
  Tensor y = head.dims.empty() ? detail::cast(x, DType::Complex128) : ref_c2c(x, head, DType::Complex128);
  int64_t d = wrap_dim(f.dims.back(), x.dim()), m = y.shape()[size_t(d)];
  int64_t n = f.sizes.back() < 0 ? 2 * (m - 1) : f.sizes.back();
  Shape s = y.shape(), fs = s;
  fs[size_t(d)] = n;
  std::vector<cd> v = cvalues(y), full(size_t(fs.numel()));
  for (int64_t i = 0; i < fs.numel(); ++i) {
    V o = unravel(i, fs);
    int64_t k = o[size_t(d)], src = k <= n / 2 ? k : n - k;
    V p = o;
    p[size_t(d)] = src;
    cd z = src < m ? v[size_t(ravel(p, s))] : cd(0);
    if (src == 0 || (n % 2 == 0 && src == n / 2)) z = cd(z.real(), 0);
    full[size_t(i)] = k <= n / 2 ? z : std::conj(z);
  }
  std::vector<cd> r = dft_dim(full, fs, d, n, 1, norm_scale(f.norm, n, true));
  // The scale of the other (already inverted) dims came with head; the last dim's here.
  std::vector<double> re;
  for (auto& z : r) re.push_back(z.real());
  return tensor_of(re, fs, out);
}

Sample fft_sample(std::string note, Tensors in, std::function<Tensor(const Tensor&)> fn,
                  std::function<Tensor(const Tensor&)> ref) {
  return {.note = std::move(note), .inputs = std::move(in),
          .run = [fn](const Tensors& x) { return Tensors{fn(x.size() == 2 ? complex(x[0], x[1]) : x[0])}; },
          .ref = [ref](const Tensors& x) {
            if (x.size() == 2) {
              std::vector<double> re = values(x[0]), im = values(x[1]);
              std::vector<cd> z;
              for (size_t i = 0; i < re.size(); ++i) z.push_back(cd(re[i], im[i]));
              return Tensors{ref(tensor_of(z, x[0].shape(), DType::Complex128))};
            }
            return Tensors{ref(x[0])};
          },
          .tol_scale = 8};
}

OpSpec fft_c2c_spec() {
  // The transforms are linear: their second-order checks are the gradchecks of the
  // transforms their backward runs (c2c <-> c2c, r2c <-> c2r).
  OpSpec s{.op = "fft_c2c", .dtypes = kComplex, .grad = true};
  s.samples = [](DType t, Generator& g) {
    std::vector<Sample> v{
        fft_sample("fft [3,8]", {make({3, 8}, t, g)}, [](auto& x) { return fft(x); },
                   [t](auto& x) { return ref_c2c(x, {.dims = {-1}, .sizes = {-1}}, t); }),
        fft_sample("ifft n 6 (trim) ortho dim 0", {make({7, 2}, t, g)}, [](auto& x) { return ifft(x, 6, 0, "ortho"); },
                   [t](auto& x) { return ref_c2c(x, {.dims = {0}, .sizes = {6}, .norm = "ortho", .inverse = true}, t); }),
        fft_sample("fft2 [2,4,5] norm forward", {make({2, 4, 5}, t, g)},
                   [](auto& x) { return fft2(x, {}, {-2, -1}, "forward"); },
                   [t](auto& x) { return ref_c2c(x, {.dims = {-2, -1}, .sizes = {-1, -1}, .norm = "forward"}, t); }),
        fft_sample("fftn padded s (4,6)", {make({3, 5}, t, g)}, [](auto& x) { return fftn(x, {4, 6}); },
                   [t](auto& x) { return ref_c2c(x, {.dims = {0, 1}, .sizes = {4, 6}}, t); }),
        fft_sample("ifftn transposed", {transposed({4, 6}, t, g)}, [](auto& x) { return ifftn(x); },
                   [t](auto& x) { return ref_c2c(x, {.dims = {0, 1}, .sizes = {-1, -1}, .inverse = true}, t); }),
        fft_sample("fft empty batch", {make({0, 4}, t, g)}, [](auto& x) { return fft(x); },
                   [t](auto& x) { return ref_c2c(x, {.dims = {-1}, .sizes = {-1}}, t); })};
    if (t == DType::Complex128)  // float64 leaves for the gradchecks
      v.push_back(fft_sample("fft of complex(re, im)", {make({2, 5}, DType::Float64, g), make({2, 5}, DType::Float64, g)},
                             [](auto& x) { return fft(x); },
                             [t](auto& x) { return ref_c2c(x, {.dims = {-1}, .sizes = {-1}}, t); }));
    return v;
  };
  s.errors = [] {
    return std::vector<ErrorCase>{
        throws_<IndexError>("dim out of range", "fft", [] { fft(zeros({4}, DType::Complex64), std::nullopt, 1); }),
        throws_<ValueError>("n = 0", "fft", [] { fft(zeros({4}, DType::Complex64), 0); }),
        throws_<ValueError>("unknown norm", "fft", [] { fft(zeros({4}, DType::Complex64), std::nullopt, -1, "twice"); }),
        throws_<IndexError>("repeated dim", "fft2", [] { fft2(zeros({4, 4}, DType::Complex64), {}, {0, 0}); })};
  };
  return s;
}
SKIFF_OP_SPEC(fft_c2c_spec());

OpSpec fft_r2c_spec() {
  OpSpec s{.op = "fft_r2c", .dtypes = kF32F64, .grad = true};
  s.samples = [](DType t, Generator& g) {
    DType c = to_complex(t);
    return std::vector<Sample>{
        fft_sample("rfft [3,8]", {make({3, 8}, t, g)}, [](auto& x) { return rfft(x); },
                   [c](auto& x) { return ref_r2c(x, {.dims = {-1}, .sizes = {-1}}, c); }),
        fft_sample("rfft n 10 (pad) forward", {make({2, 7}, t, g)}, [](auto& x) { return rfft(x, 10, -1, "forward"); },
                   [c](auto& x) { return ref_r2c(x, {.dims = {-1}, .sizes = {10}, .norm = "forward"}, c); }),
        fft_sample("rfft2 [2,4,5] ortho", {make({2, 4, 5}, t, g)}, [](auto& x) { return rfft2(x, {}, {-2, -1}, "ortho"); },
                   [c](auto& x) { return ref_r2c(x, {.dims = {-2, -1}, .sizes = {-1, -1}, .norm = "ortho"}, c); }),
        fft_sample("rfftn stepped", {stepped({3, 6}, t, g)}, [](auto& x) { return rfftn(x); },
                   [c](auto& x) { return ref_r2c(x, {.dims = {0, 1}, .sizes = {-1, -1}}, c); }),
        fft_sample("rfft empty batch", {make({0, 6}, t, g)}, [](auto& x) { return rfft(x); },
                   [c](auto& x) { return ref_r2c(x, {.dims = {-1}, .sizes = {-1}}, c); })};
  };
  s.errors = [] {
    return std::vector<ErrorCase>{throws_<TypeError>("complex input", "rfft", [] { rfft(zeros({4}, DType::Complex64)); })};
  };
  return s;
}
SKIFF_OP_SPEC(fft_r2c_spec());

OpSpec fft_c2r_spec() {
  OpSpec s{.op = "fft_c2r", .dtypes = kComplex, .grad = true};
  s.samples = [](DType t, Generator& g) {
    DType r = to_real(t);
    std::vector<Sample> v{
        fft_sample("irfft [3,5] -> 8", {make({3, 5}, t, g)}, [](auto& x) { return irfft(x); },
                   [r](auto& x) { return ref_c2r(x, {.dims = {-1}, .sizes = {-1}}, r); }),
        fft_sample("irfft n 7 (odd) ortho", {make({2, 4}, t, g)}, [](auto& x) { return irfft(x, 7, -1, "ortho"); },
                   [r](auto& x) { return ref_c2r(x, {.dims = {-1}, .sizes = {7}, .norm = "ortho"}, r); }),
        fft_sample("irfft2 [2,4,3]", {make({2, 4, 3}, t, g)}, [](auto& x) { return irfft2(x); },
                   [r](auto& x) { return ref_c2r(x, {.dims = {-2, -1}, .sizes = {-1, -1}}, r); }),
        fft_sample("irfftn transposed s (5,6)", {transposed({5, 4}, t, g)}, [](auto& x) { return irfftn(x, {5, 6}); },
                   [r](auto& x) { return ref_c2r(x, {.dims = {0, 1}, .sizes = {5, 6}}, r); }),
        fft_sample("irfft empty batch", {make({0, 4}, t, g)}, [](auto& x) { return irfft(x); },
                   [r](auto& x) { return ref_c2r(x, {.dims = {-1}, .sizes = {-1}}, r); })};
    if (t == DType::Complex128)
      v.push_back(fft_sample("irfft of complex(re, im)", {make({2, 4}, DType::Float64, g), make({2, 4}, DType::Float64, g)},
                             [](auto& x) { return irfft(x); },
                             [r](auto& x) { return ref_c2r(x, {.dims = {-1}, .sizes = {-1}}, r); }));
    return v;
  };
  s.errors = [] {
    return std::vector<ErrorCase>{
        throws_<ValueError>("n = 0", "irfft", [] { irfft(zeros({4}, DType::Complex64), 0); }),
        throws_<ValueError>("s and dims lengths differ", "irfftn",
                            [] { irfftn(zeros({4, 4}, DType::Complex64), {4}, {0, 1}); })};
  };
  return s;
}
SKIFF_OP_SPEC(fft_c2r_spec());

}  // namespace
}  // namespace skiff::spec
