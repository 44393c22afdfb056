// Complex-tensor ops: values against std::complex, dtypes, errors, and gradients checked
// over real and imaginary parts (the convention documented in ops/fft/complex.h).
#include <cmath>
#include <complex>

#include "framework/autograd/engine.h"
#include "tests/framework/ops/op_test_utils.h"

namespace skiff {
namespace {

using testing::expect_allclose;
using testing::expect_gradcheck;
using testing::rand_leaf;

const std::vector<complex128> kValues{{1.5, -2.0}, {0.0, 0.0}, {-3.0, 0.5}, {0.25, 4.0}, {-1.0, -1.0}, {2.0, 0.0}};

Tensor sample(DType t = DType::Complex128) { return to(from_vector(kValues, {2, 3}), t); }

TEST(ComplexTest, PartsMatchStdComplex) {
  Tensor z = sample();
  auto re = real(z).to_vector<double>(), im = imag(z).to_vector<double>(), a = abs(z).to_vector<double>(),
       ang = angle(z).to_vector<double>();
  auto cj = conj(z).to_vector<complex128>();
  for (size_t i = 0; i < kValues.size(); ++i) {
    EXPECT_EQ(re[i], kValues[i].real());
    EXPECT_EQ(im[i], kValues[i].imag());
    EXPECT_DOUBLE_EQ(a[i], std::abs(kValues[i]));
    EXPECT_DOUBLE_EQ(ang[i], std::arg(kValues[i]));
    EXPECT_EQ(cj[i], std::conj(kValues[i]));
  }
  EXPECT_EQ(real(z).dtype(), DType::Float64);
  EXPECT_EQ(abs(sample(DType::Complex64)).dtype(), DType::Float32);
  EXPECT_EQ(angle(sample(DType::Complex64)).dtype(), DType::Float32);
  EXPECT_EQ(imag(sample(DType::Complex64)).shape(), (Shape{2, 3}));
  // real() of a real tensor is the tensor itself; conj() too.
  Tensor x = from_vector<double>({-2.0, 0.0, 3.0});
  EXPECT_TRUE(real(x).is_same(x));
  EXPECT_TRUE(conj(x).is_same(x));
  EXPECT_EQ(angle(x).to_vector<double>(), (std::vector<double>{M_PI, 0.0, 0.0}));
  // Non-contiguous input.
  Tensor zt = transpose(sample(), 0, 1);
  EXPECT_EQ(real(zt).to_vector<double>(), (std::vector<double>{1.5, 0.25, 0.0, -1.0, -3.0, 2.0}));
}

TEST(ComplexTest, ComplexAndPolarBuildValues) {
  Tensor re = from_vector<double>({1.0, -2.0, 0.5}, {3, 1});
  Tensor im = from_vector<double>({3.0, 4.0}, {1, 2});
  Tensor z = complex(re, im);
  EXPECT_EQ(z.dtype(), DType::Complex128);
  EXPECT_EQ(z.shape(), (Shape{3, 2}));
  EXPECT_EQ(z.to_vector<complex128>()[3], complex128(-2.0, 4.0));
  EXPECT_EQ(complex(zeros({2}), ones({2})).dtype(), DType::Complex64);
  Tensor p = polar(from_vector<double>({2.0, 1.0}), from_vector<double>({M_PI / 2, M_PI}));
  auto v = p.to_vector<complex128>();
  EXPECT_NEAR(std::abs(v[0] - complex128(0.0, 2.0)), 0.0, 1e-15);
  EXPECT_NEAR(std::abs(v[1] - complex128(-1.0, 0.0)), 0.0, 1e-15);
}

TEST(ComplexTest, ArithmeticAndMatmul) {
  Tensor a = sample(), b = add(sample(), scalar_tensor(complex128(0.5, 0.25), DType::Complex128));
  auto va = a.to_vector<complex128>(), vb = b.to_vector<complex128>();
  auto prod = mul(a, b).to_vector<complex128>(), quot = div(a, b).to_vector<complex128>();
  for (size_t i = 0; i < va.size(); ++i) {
    EXPECT_EQ(prod[i], va[i] * vb[i]);
    EXPECT_NEAR(std::abs(quot[i] - va[i] / vb[i]), 0.0, 1e-15);
  }
  // Real operands promote.
  EXPECT_EQ(mul(a, from_vector<double>({2.0, 1.0, 0.5})).dtype(), DType::Complex128);
  // [2, 3] x [3, 2] against the direct sum, transposed (non-contiguous) right operand.
  for (DType t : {DType::Complex64, DType::Complex128}) {
    Tensor x = to(a, t), y = transpose(to(b, t), 0, 1);
    Tensor m = matmul(x, y);
    EXPECT_EQ(m.dtype(), t);
    auto got = m.to_vector<complex128>();
    for (int i = 0; i < 2; ++i)
      for (int j = 0; j < 2; ++j) {
        complex128 acc = 0;
        for (int k = 0; k < 3; ++k) acc += va[size_t(i * 3 + k)] * vb[size_t(j * 3 + k)];
        EXPECT_NEAR(std::abs(got[size_t(i * 2 + j)] - acc), 0.0, 1e-5) << dtype_name(t);
      }
  }
  // Batched with broadcasting.
  Tensor bx = to(reshape(concat({a, b}), {2, 2, 3}), DType::Complex128);
  Tensor by = transpose(b, 0, 1);
  expect_allclose(real(select(matmul(bx, by), 0, 1)), real(matmul(b, by)), 1e-12);
}

TEST(ComplexTest, Errors) {
  EXPECT_THROW(imag(zeros({2})), TypeError);
  EXPECT_THROW(complex(zeros({2}), zeros({2}, DType::Float64)), TypeError);
  EXPECT_THROW(complex(zeros({2}, DType::Int64), zeros({2}, DType::Int64)), TypeError);
  EXPECT_THROW(polar(zeros({2}, DType::Float16), zeros({2}, DType::Float16)), TypeError);
  try {
    imag(zeros({2}));
    FAIL();
  } catch (const TypeError& e) {
    EXPECT_NE(std::string(e.what()).find("imag:"), std::string::npos) << e.what();
  }
}

// ---- gradients over real and imaginary parts ---------------------------------------------

Tensor parts(const Tensor& y) {
  if (!is_complex(y.dtype())) return reshape(y, {-1});
  return concat({reshape(real(y), {-1}), reshape(imag(y), {-1})});
}

TEST(ComplexGradTest, UnaryOps) {
  using F = Tensor (*)(const Tensor&);
  for (auto [name, f] : std::vector<std::pair<const char*, F>>{{"real", real}, {"imag", imag}, {"conj", conj},
                                                                {"abs", abs}, {"angle", angle}}) {
    SCOPED_TRACE(name);
    // Values in [0.2, 1] keep away from z = 0, where abs and angle are not differentiable.
    std::vector<Tensor> in{rand_leaf({2, 3}, 1, 0.2, 1.0), rand_leaf({2, 3}, 2, -1.0, 1.0)};
    expect_gradcheck([f = f](const std::vector<Tensor>& x) { return parts(f(complex(x[0], x[1]))); }, in);
  }
  // abs at z = 0 has gradient 0 (PyTorch's choice).
  Tensor re = zeros({1}, DType::Float64).set_requires_grad(), im = zeros({1}, DType::Float64).set_requires_grad();
  Tensor y = abs(complex(re, im));
  auto g = autograd::grad({y}, {re, im}, {ones({1}, DType::Float64)});
  EXPECT_EQ(g[0].item<double>(), 0.0);
  EXPECT_EQ(g[1].item<double>(), 0.0);
}

TEST(ComplexGradTest, BuildersAndBinaryOps) {
  expect_gradcheck([](const std::vector<Tensor>& x) { return parts(complex(x[0], x[1])); },
                   {rand_leaf({3, 1}, 3), rand_leaf({1, 2}, 4)});
  expect_gradcheck([](const std::vector<Tensor>& x) { return parts(polar(x[0], x[1])); },
                   {rand_leaf({4}, 5, 0.5, 2.0), rand_leaf({4}, 6, -3.0, 3.0)});
  using B = Tensor (*)(const Tensor&, const Tensor&);
  for (auto [name, f] : std::vector<std::pair<const char*, B>>{
           {"add", [](const Tensor& a, const Tensor& b) { return add(a, b); }},
           {"sub", [](const Tensor& a, const Tensor& b) { return sub(a, b); }},
           {"mul", [](const Tensor& a, const Tensor& b) { return mul(a, b); }},
           {"div", [](const Tensor& a, const Tensor& b) { return div(a, b); }},
           {"matmul", [](const Tensor& a, const Tensor& b) { return matmul(a, transpose(b, 0, 1)); }}}) {
    SCOPED_TRACE(name);
    // Complex with complex (broadcasting for the element-wise ops: b is [1, 3]).
    const bool mm = std::string(name) == "matmul";
    const Shape sb = mm ? Shape{4, 3} : Shape{1, 3};
    std::vector<Tensor> in{rand_leaf({2, 3}, 7), rand_leaf({2, 3}, 8), rand_leaf(sb, 9, 0.5, 1.5),
                           rand_leaf(sb, 10, 0.5, 1.5)};
    expect_gradcheck([f = f](const std::vector<Tensor>& x) { return parts(f(complex(x[0], x[1]), complex(x[2], x[3]))); },
                     in);
    // Real with complex: the real operand receives the real part of its gradient.
    std::vector<Tensor> mixed{rand_leaf({2, 3}, 11), rand_leaf(sb, 12, 0.5, 1.5), rand_leaf(sb, 13, 0.5, 1.5)};
    expect_gradcheck([f = f](const std::vector<Tensor>& x) { return parts(f(x[0], complex(x[1], x[2]))); }, mixed);
  }
}

TEST(ComplexGradTest, SecondOrder) {
  testing::expect_gradgradcheck(
      [](const std::vector<Tensor>& x) {
        Tensor z = complex(x[0], x[1]);
        return parts(mul(abs(z), div(mul(z, conj(z)), add(z, 3.0))));
      },
      {rand_leaf({3}, 20, 0.2, 1.0), rand_leaf({3}, 21)});
}

}  // namespace
}  // namespace skiff
