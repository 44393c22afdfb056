// FFT ops against direct O(n^2) DFT sums in float64, round trips, gradients, threads, errors.
#include <cmath>
#include <complex>
#include <numbers>
#include <thread>

#include "framework/autograd/engine.h"
#include "framework/core/threading.h"
#include "tests/framework/ops/op_test_utils.h"

namespace skiff {
namespace {

using testing::expect_gradcheck;
using testing::expect_gradgradcheck;
using testing::rand_leaf;

// ---- reference ----------------------------------------------------------------------

Tensor resize_ref(const Tensor& x, int64_t dim, int64_t size) {
  const int64_t cur = x.shape()[dim];
  if (size == cur) return x;
  if (size < cur) return narrow(x, dim, 0, size);
  Shape pad = x.shape();
  pad[dim] = size - cur;
  return concat({x, zeros(pad, x.dtype())}, dim);
}

// Unnormalized DFT along one dim, sign -1 (forward) or +1, summed term by term.
Tensor dft_ref(const Tensor& x, int64_t dim, bool forward) {
  Tensor xc = contiguous(to(x, DType::Complex128));
  auto v = xc.to_vector<complex128>();
  const Shape s = xc.shape();
  const int64_t n = s[dim];
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < dim; ++d) outer *= s[d];
  for (int64_t d = dim + 1; d < int64_t(s.size()); ++d) inner *= s[d];
  std::vector<complex128> out(v.size());
  const double sign = forward ? -1.0 : 1.0;
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t i = 0; i < inner; ++i)
      for (int64_t k = 0; k < n; ++k) {
        complex128 acc = 0;
        for (int64_t t = 0; t < n; ++t) {
          const double ang = sign * 2 * std::numbers::pi * double((k * t) % n) / double(n);
          acc += v[size_t((o * n + t) * inner + i)] * complex128(std::cos(ang), std::sin(ang));
        }
        out[size_t((o * n + k) * inner + i)] = acc;
      }
  return from_vector(out, s);
}

double norm_scale(const std::string& norm, double n, bool forward) {
  if (norm == "ortho") return 1 / std::sqrt(n);
  return (norm == "forward") == forward ? 1 / n : 1.0;
}

// fftn of x (promoted to complex128) over dims with sizes.
Tensor fftn_ref(const Tensor& x0, const std::vector<int64_t>& dims, const std::vector<int64_t>& sizes,
                const std::string& norm, bool forward) {
  Tensor x = to(x0, DType::Complex128);
  double total = 1;
  for (size_t i = 0; i < dims.size(); ++i) {
    x = dft_ref(resize_ref(x, dims[i], sizes[i]), dims[i], forward);
    total *= double(sizes[i]);
  }
  return mul(x, scalar_tensor(norm_scale(norm, total, forward), DType::Complex128));
}

Tensor rfftn_ref(const Tensor& x, const std::vector<int64_t>& dims, const std::vector<int64_t>& sizes,
                 const std::string& norm) {
  Tensor full = fftn_ref(x, dims, sizes, norm, true);
  return narrow(full, dims.back(), 0, sizes.back() / 2 + 1);
}

// The real part of the inverse transform of the Hermitian extension along the last dim
// (entries k >= m are conj(X[n - k])), after a complex inverse over the other dims.
Tensor irfftn_ref(const Tensor& x0, const std::vector<int64_t>& dims, const std::vector<int64_t>& sizes,
                  const std::string& norm) {
  Tensor x = to(x0, DType::Complex128);
  double total = 1;
  for (size_t i = 0; i + 1 < dims.size(); ++i) {
    x = dft_ref(resize_ref(x, dims[i], sizes[i]), dims[i], false);
    total *= double(sizes[i]);
  }
  const int64_t last = dims.back(), n = sizes.back(), m = n / 2 + 1;
  total *= double(n);
  x = contiguous(resize_ref(x, last, m));
  Shape s = x.shape();
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < last; ++d) outer *= s[d];
  for (int64_t d = last + 1; d < int64_t(s.size()); ++d) inner *= s[d];
  auto v = x.to_vector<complex128>();
  std::vector<double> out(size_t(outer * n * inner));
  const double scale = norm_scale(norm, total, false);
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t i = 0; i < inner; ++i)
      for (int64_t t = 0; t < n; ++t) {
        complex128 acc = 0;
        for (int64_t k = 0; k < n; ++k) {
          complex128 xk = k < m ? v[size_t((o * m + k) * inner + i)] : std::conj(v[size_t((o * m + (n - k)) * inner + i)]);
          const double ang = 2 * std::numbers::pi * double((k * t) % n) / double(n);
          acc += xk * complex128(std::cos(ang), std::sin(ang));
        }
        out[size_t((o * n + t) * inner + i)] = acc.real() * scale;
      }
  s[last] = n;
  return from_vector(out, s);
}

// Compares complex or real tensors element-wise, relative to the largest reference magnitude.
void expect_close(const Tensor& got, const Tensor& want, double rtol, const std::string& what) {
  ASSERT_EQ(got.shape(), want.shape()) << what;
  auto g = contiguous(to(got, DType::Complex128)).to_vector<complex128>();
  auto w = contiguous(to(want, DType::Complex128)).to_vector<complex128>();
  double scale = 1e-300;
  for (auto z : w) scale = std::max(scale, std::abs(z));
  for (size_t i = 0; i < g.size(); ++i)
    ASSERT_LE(std::abs(g[i] - w[i]), rtol * scale) << what << " at flat index " << i << ": got " << g[i].real()
                                                   << "+" << g[i].imag() << "i, want " << w[i].real() << "+"
                                                   << w[i].imag() << "i";
}

Tensor crandn(const Shape& s, DType t, uint64_t seed) {
  Generator g(seed);
  DType r = to_real(t);
  return complex(randn(s, r, &g), randn(s, r, &g));
}
Tensor rrandn(const Shape& s, DType t, uint64_t seed) {
  Generator g(seed);
  return randn(s, t, &g);
}

const char* const kNorms[] = {"backward", "ortho", "forward"};
const int64_t kSizes[] = {1, 2, 3, 5, 6, 7, 8, 12, 13, 16, 17};  // odd, even, prime, power of two

// ---- 1-D ----------------------------------------------------------------------------

TEST(FftTest, OneDimMatchesDirectSumForEverySizeAndNorm) {
  for (int64_t n : kSizes)
    for (const char* norm : kNorms)
      for (int64_t dim : {-1, 0}) {
        const Shape s = dim == -1 ? Shape{3, n} : Shape{n, 3};
        const int64_t d = dim == -1 ? 1 : 0;
        const std::string what = fmt::format("n={} norm={} dim={}", n, norm, dim);
        Tensor z = crandn(s, DType::Complex128, 10 + n);
        Tensor x = rrandn(s, DType::Float64, 20 + n);
        expect_close(fft(z, std::nullopt, dim, norm), fftn_ref(z, {d}, {n}, norm, true), 1e-12, "fft " + what);
        expect_close(ifft(z, std::nullopt, dim, norm), fftn_ref(z, {d}, {n}, norm, false), 1e-12, "ifft " + what);
        expect_close(fft(x, std::nullopt, dim, norm), fftn_ref(x, {d}, {n}, norm, true), 1e-12, "fft real " + what);
        expect_close(rfft(x, std::nullopt, dim, norm), rfftn_ref(x, {d}, {n}, norm), 1e-12, "rfft " + what);
        Tensor half = crandn(dim == -1 ? Shape{3, n / 2 + 1} : Shape{n / 2 + 1, 3}, DType::Complex128, 30 + n);
        expect_close(irfft(half, n, dim, norm), irfftn_ref(half, {d}, {n}, norm), 1e-12, "irfft " + what);
      }
}

TEST(FftTest, PadsAndTrimsToN) {
  Tensor z = crandn({2, 6}, DType::Complex128, 1);
  Tensor x = rrandn({2, 6}, DType::Float64, 2);
  for (int64_t n : {4, 9, 11}) {
    const std::string what = fmt::format("n={}", n);
    expect_close(fft(z, n), fftn_ref(z, {1}, {n}, "backward", true), 1e-12, "fft " + what);
    expect_close(ifft(z, n, -1, "ortho"), fftn_ref(z, {1}, {n}, "ortho", false), 1e-12, "ifft " + what);
    expect_close(rfft(x, n), rfftn_ref(x, {1}, {n}, "backward"), 1e-12, "rfft " + what);
    // irfft pads/trims its half-spectrum input (6 entries) to n / 2 + 1.
    expect_close(irfft(z, n, -1, "forward"), irfftn_ref(z, {1}, {n}, "forward"), 1e-12, "irfft " + what);
  }
  // irfft's default length is 2 (m - 1).
  EXPECT_EQ(irfft(z).shape(), (Shape{2, 10}));
  expect_close(irfft(z), irfftn_ref(z, {1}, {10}, "backward"), 1e-12, "irfft default n");
}

TEST(FftTest, Complex64AndFloat32) {
  Tensor z = crandn({4, 12}, DType::Complex64, 3);
  Tensor x = rrandn({4, 15}, DType::Float32, 4);
  Tensor y = fft(z);
  EXPECT_EQ(y.dtype(), DType::Complex64);
  expect_close(y, fftn_ref(z, {1}, {12}, "backward", true), 1e-5, "fft c64");
  Tensor r = rfft(x);
  EXPECT_EQ(r.dtype(), DType::Complex64);
  EXPECT_EQ(r.shape(), (Shape{4, 8}));
  expect_close(r, rfftn_ref(x, {1}, {15}, "backward"), 1e-5, "rfft f32");
  Tensor back = irfft(r, 15);
  EXPECT_EQ(back.dtype(), DType::Float32);
  expect_close(back, x, 1e-5, "irfft(rfft) f32");
  // Integer input computes in float32 / complex64.
  EXPECT_EQ(fft(arange(8)).dtype(), DType::Complex64);
  EXPECT_EQ(rfft(arange(8)).dtype(), DType::Complex64);
}

// ---- several dims -----------------------------------------------------------------

TEST(FftTest, TwoAndNDims) {
  Tensor z = crandn({4, 3, 5}, DType::Complex128, 5);
  Tensor x = rrandn({4, 3, 6}, DType::Float64, 6);
  for (const char* norm : kNorms) {
    const std::string what = norm;
    expect_close(fft2(z, {}, {-2, -1}, norm), fftn_ref(z, {1, 2}, {3, 5}, norm, true), 1e-12, "fft2 " + what);
    expect_close(ifft2(z, {}, {0, 2}, norm), fftn_ref(z, {0, 2}, {4, 5}, norm, false), 1e-12, "ifft2 " + what);
    expect_close(fftn(z, {}, {}, norm), fftn_ref(z, {0, 1, 2}, {4, 3, 5}, norm, true), 1e-12, "fftn " + what);
    expect_close(ifftn(z, {}, {}, norm), fftn_ref(z, {0, 1, 2}, {4, 3, 5}, norm, false), 1e-12, "ifftn " + what);
    expect_close(rfft2(x, {}, {-2, -1}, norm), rfftn_ref(x, {1, 2}, {3, 6}, norm), 1e-12, "rfft2 " + what);
    // The halved dim is the last one listed, whichever it is.
    expect_close(rfftn(x, {}, {2, 0}, norm), rfftn_ref(x, {2, 0}, {6, 4}, norm), 1e-12, "rfftn " + what);
    expect_close(irfft2(z, {3, 7}, {-2, -1}, norm), irfftn_ref(z, {1, 2}, {3, 7}, norm), 1e-12, "irfft2 " + what);
    expect_close(irfftn(z, {}, {0, 1, 2}, norm), irfftn_ref(z, {0, 1, 2}, {4, 3, 8}, norm), 1e-12, "irfftn " + what);
  }
  // Sizes: padding one dim, trimming another; s alone picks the last len(s) dims.
  expect_close(fft2(z, {5, 2}), fftn_ref(z, {1, 2}, {5, 2}, "backward", true), 1e-12, "fft2 s");
  expect_close(fftn(z, {2, 7}), fftn_ref(z, {1, 2}, {2, 7}, "backward", true), 1e-12, "fftn s");
  expect_close(rfftn(x, {-1, 9}), rfftn_ref(x, {1, 2}, {3, 9}, "backward"), 1e-12, "rfftn s");
  expect_close(irfftn(z, {6, 4}, {0, 2}), irfftn_ref(z, {0, 2}, {6, 4}, "backward"), 1e-12, "irfftn s");
  EXPECT_EQ(rfft2(x).shape(), (Shape{4, 3, 4}));
}

TEST(FftTest, NonContiguousInputs) {
  Tensor base = crandn({6, 10}, DType::Complex128, 7);
  Tensor tz = transpose(base, 0, 1);                // [10, 6], strides (1, 10)
  Tensor sz = slice(base, 1, 1, 10, 2);             // [6, 5], step 2
  expect_close(fft(tz), fftn_ref(contiguous(tz), {1}, {6}, "backward", true), 1e-12, "fft transposed");
  expect_close(fft(tz, std::nullopt, 0), fftn_ref(contiguous(tz), {0}, {10}, "backward", true), 1e-12,
               "fft transposed dim 0");
  expect_close(fft2(sz), fftn_ref(contiguous(sz), {0, 1}, {6, 5}, "backward", true), 1e-12, "fft2 sliced");
  Tensor xr = transpose(rrandn({7, 9}, DType::Float64, 8), 0, 1);
  expect_close(rfft(xr), rfftn_ref(contiguous(xr), {1}, {7}, "backward"), 1e-12, "rfft transposed");
  expect_close(rfft2(xr), rfftn_ref(contiguous(xr), {0, 1}, {9, 7}, "backward"), 1e-12, "rfft2 transposed");
  Tensor hz = transpose(crandn({5, 4}, DType::Complex128, 9), 0, 1);  // [4, 5]
  expect_close(irfft(hz, 8), irfftn_ref(contiguous(hz), {1}, {8}, "backward"), 1e-12, "irfft transposed");
  // Broadcast (stride 0) input.
  Tensor ex = expand(rrandn({1, 8}, DType::Float64, 10), {3, 8});
  expect_close(rfft(ex), rfftn_ref(contiguous(ex), {1}, {8}, "backward"), 1e-12, "rfft expanded");
}

TEST(FftTest, RoundTrips) {
  for (int64_t n : {5, 8, 13, 16}) {
    Tensor x = rrandn({3, n}, DType::Float64, 40 + n);
    expect_close(irfft(rfft(x), n), x, 1e-12, fmt::format("irfft(rfft) n={}", n));
    expect_close(irfft(rfft(x, std::nullopt, -1, "ortho"), n, -1, "ortho"), x, 1e-12, "ortho");
    Tensor z = crandn({3, n}, DType::Complex128, 50 + n);
    expect_close(ifft(fft(z, std::nullopt, -1, "forward"), std::nullopt, -1, "forward"), z, 1e-12, "ifft(fft)");
  }
  Tensor x = rrandn({2, 5, 7}, DType::Float64, 60);
  expect_close(irfftn(rfftn(x, {}, {0, 2}), {2, 7}, {0, 2}), x, 1e-12, "irfftn(rfftn)");
  expect_close(irfft2(rfft2(x), {5, 7}), x, 1e-12, "irfft2(rfft2)");
  Tensor z = crandn({3, 4, 5}, DType::Complex128, 61);
  expect_close(ifftn(fftn(z)), z, 1e-12, "ifftn(fftn)");
}

TEST(FftTest, ThreadsGiveTheSameResult) {
  // Big enough to be cut into per-thread chunks (kParallelGrain outputs).
  Tensor x = rrandn({6, 5, 64, 40}, DType::Float32, 70);
  Tensor z = crandn({6, 5, 64, 40}, DType::Complex64, 71);
  const int saved = num_threads();
  set_num_threads(1);
  Tensor r1 = rfft2(x), c1 = fft(z, std::nullopt, 1), i1 = irfft2(c1, {64, 40}, {2, 3}, "ortho");
  set_num_threads(2);
  Tensor r2 = rfft2(x), c2 = fft(z, std::nullopt, 1), i2 = irfft2(c2, {64, 40}, {2, 3}, "ortho");
  set_num_threads(saved);
  expect_close(r2, r1, 1e-6, "rfft2 threads");
  expect_close(c2, c1, 1e-6, "fft dim 1 threads");
  expect_close(i2, i1, 1e-6, "irfft2 threads");
  expect_close(select(r1, 0, 5), rfftn_ref(select(x, 0, 5), {1, 2}, {64, 40}, "backward"), 1e-5, "rfft2 vs ref");
}

TEST(FftTest, ConcurrentCallersShareThePlanCache) {
  // Several threads planning and running the same and different sizes at once.
  std::vector<Tensor> inputs, expected;
  for (int64_t n : {16, 17, 24, 31}) {
    inputs.push_back(rrandn({3, n}, DType::Float64, 80 + n));
    expected.push_back(rfftn_ref(inputs.back(), {1}, {n}, "backward"));
  }
  std::vector<std::string> failures(8);
  std::vector<std::thread> pool;
  for (size_t t = 0; t < failures.size(); ++t)
    pool.emplace_back([&, t] {
      for (int rep = 0; rep < 20; ++rep) {
        const size_t i = (t + size_t(rep)) % inputs.size();
        Tensor got = rfft(inputs[i]);
        double err = amax(abs(sub(got, expected[i]))).item<double>();
        if (err > 1e-9) failures[t] = fmt::format("thread {} size {}: error {}", t, inputs[i].shape()[1], err);
      }
    });
  for (auto& th : pool) th.join();
  for (const auto& f : failures) EXPECT_TRUE(f.empty()) << f;
}

// ---- gradients ----------------------------------------------------------------------

// Real view of a (possibly complex) output: real parts then imaginary parts.
Tensor parts(const Tensor& y) {
  if (!is_complex(y.dtype())) return reshape(y, {-1});
  return concat({reshape(real(y), {-1}), reshape(imag(y), {-1})});
}
using Fn = std::function<Tensor(const Tensor&)>;
// Gradcheck over the real and imaginary parts of a complex input.
void complex_gradcheck(const Fn& f, const Shape& s, uint64_t seed, bool second_order = false) {
  auto fn = [f](const std::vector<Tensor>& in) { return parts(f(complex(in[0], in[1]))); };
  std::vector<Tensor> in{rand_leaf(s, seed), rand_leaf(s, seed + 1)};
  expect_gradcheck(fn, in);
  if (second_order) expect_gradgradcheck(fn, in);
}
void real_gradcheck(const Fn& f, const Shape& s, uint64_t seed, bool second_order = false) {
  auto fn = [f](const std::vector<Tensor>& in) { return parts(f(in[0])); };
  std::vector<Tensor> in{rand_leaf(s, seed)};
  expect_gradcheck(fn, in);
  if (second_order) expect_gradgradcheck(fn, in);
}

TEST(FftGradTest, OneDim) {
  for (const char* norm : kNorms) {
    SCOPED_TRACE(norm);
    const std::string nm = norm;
    for (int64_t n : {5, 6}) {
      SCOPED_TRACE(n);
      complex_gradcheck([&](const Tensor& z) { return fft(z, std::nullopt, -1, nm); }, {2, n}, 1);
      complex_gradcheck([&](const Tensor& z) { return ifft(z, n + 2, -1, nm); }, {2, n}, 3);
      real_gradcheck([&](const Tensor& x) { return fft(x, n - 1, 0, nm); }, {n, 2}, 5);
      real_gradcheck([&](const Tensor& x) { return rfft(x, std::nullopt, -1, nm); }, {2, n}, 7);
      real_gradcheck([&](const Tensor& x) { return rfft(x, n + 3, -1, nm); }, {2, n}, 9);
      // irfft of a non-Hermitian input: the ignored imaginary parts get zero gradient.
      complex_gradcheck([&](const Tensor& z) { return irfft(z, 2 * n - 3, -1, nm); }, {2, n}, 11);
      complex_gradcheck([&](const Tensor& z) { return irfft(z, 2 * n - 2, -1, nm); }, {2, n}, 13);
      complex_gradcheck([&](const Tensor& z) { return irfft(z, n, -1, nm); }, {2, n}, 15);
    }
  }
}

TEST(FftGradTest, SeveralDims) {
  complex_gradcheck([](const Tensor& z) { return fft2(z); }, {2, 3, 4}, 21);
  complex_gradcheck([](const Tensor& z) { return ifft2(z, {4, 2}, {0, 2}, "ortho"); }, {3, 2, 3}, 23);
  complex_gradcheck([](const Tensor& z) { return fftn(z, {}, {}, "forward"); }, {2, 3, 2}, 25);
  complex_gradcheck([](const Tensor& z) { return ifftn(z, {3, 3}); }, {2, 2, 4}, 27);
  real_gradcheck([](const Tensor& x) { return rfft2(x); }, {2, 3, 5}, 29);
  real_gradcheck([](const Tensor& x) { return rfftn(x, {4, 4}, {0, 2}, "ortho"); }, {3, 2, 4}, 31);
  complex_gradcheck([](const Tensor& z) { return irfft2(z); }, {2, 3, 3}, 33);
  complex_gradcheck([](const Tensor& z) { return irfftn(z, {2, 3, 5}, {}, "forward"); }, {3, 2, 3}, 35);
}

TEST(FftGradTest, SecondOrder) {
  complex_gradcheck([](const Tensor& z) { return mul(fft(z), fft(z)); }, {5}, 41, true);
  real_gradcheck([](const Tensor& x) { return abs(rfft(mul(x, x))); }, {6}, 43, true);
  complex_gradcheck([](const Tensor& z) { auto y = irfft(z, 7); return mul(y, y); }, {4}, 45, true);
}

// ---- the example in docs/framework.md ("FFT and complex tensors") ---------------------

TEST(FftGuideTest, SpectraAndGradients) {
  // --- guide: fft ---
  manual_seed(0);
  Tensor x = randn({8, 256});                         // 8 real signals
  Tensor X = rfft(x);                                 // [8, 129] complex64
  Tensor power = square(abs(X));                      // [8, 129] float32
  Tensor back = irfft(X, 256);                        // x again, up to rounding
  Tensor img = randn({2, 32, 32}).set_requires_grad();
  Tensor loss = sum(abs(fft2(img, {}, {-2, -1}, "ortho")));
  backward(loss);                                     // img.grad(): [2, 32, 32] float32
  Tensor z = polar(ones({3}), from_vector<float>({0.0f, 1.5708f, 3.1416f}));  // e^{i theta}
  // --- end ---
  EXPECT_EQ(X.shape(), (Shape{8, 129}));
  EXPECT_EQ(X.dtype(), DType::Complex64);
  EXPECT_EQ(power.dtype(), DType::Float32);
  expect_close(back, x, 1e-5, "guide round trip");
  EXPECT_EQ(img.grad().shape(), (Shape{2, 32, 32}));
  EXPECT_EQ(img.grad().dtype(), DType::Float32);
  EXPECT_NEAR(real(z).to_vector<float>()[2], -1.0f, 1e-4);
}

// ---- errors -------------------------------------------------------------------------

template <typename E, typename F>
void expect_error(F f, const std::string& op) {
  try {
    f();
    FAIL() << "expected an error naming " << op;
  } catch (const E& e) {
    EXPECT_NE(std::string(e.what()).find(op + ":"), std::string::npos) << e.what();
  }
}

TEST(FftTest, ErrorsNameTheOp) {
  Tensor x = zeros({4, 6});
  Tensor z = zeros({4, 6}, DType::Complex64);
  expect_error<IndexError>([&] { fft(x, std::nullopt, 2); }, "fft");
  expect_error<IndexError>([&] { ifft(x, std::nullopt, -3); }, "ifft");
  expect_error<ValueError>([&] { rfft(x, 0); }, "rfft");
  expect_error<ValueError>([&] { irfft(zeros({4, 1}, DType::Complex64)); }, "irfft");  // default n = 0
  expect_error<TypeError>([&] { rfft(z); }, "rfft");
  expect_error<TypeError>([&] { rfft2(z); }, "rfft2");
  expect_error<ValueError>([&] { fft(x, std::nullopt, -1, "sideways"); }, "fft");
  expect_error<IndexError>([&] { fft2(x, {}, {1, 1}); }, "fft2");
  expect_error<IndexError>([&] { rfftn(x, {}, {0, -2}); }, "rfftn");
  expect_error<ValueError>([&] { ifft2(x, {4, 4}, {0}); }, "ifft2");
  expect_error<ValueError>([&] { fftn(x, {4}, {0, 1}); }, "fftn");
  expect_error<ValueError>([&] { irfftn(z, {4, -5}); }, "irfftn");
  expect_error<IndexError>([&] { fftn(x, {2, 2, 2}); }, "fftn");
  expect_error<IndexError>([&] { fft(scalar_tensor(1.0)); }, "fft");
  expect_error<IndexError>([&] { irfft2(zeros({4})); }, "irfft2");
}

}  // namespace
}  // namespace skiff
