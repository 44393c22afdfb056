// Higher-order gradients: every backward formula is built from differentiable ops.
#include <gtest/gtest.h>

#include <cmath>

#include "framework/autograd/engine.h"
#include "framework/autograd/gradcheck.h"
#include "framework/core/rng.h"
#include "framework/ops/ops.h"

namespace skiff {

using autograd::grad;

// d/dx applied pointwise: outputs depend only on their own point, so the gradient
// of the sum is the vector of pointwise derivatives.
Tensor d(const Tensor& u, const Tensor& x) { return grad({sum(u)}, {x}, {}, /*create_graph=*/true)[0]; }

TEST(HigherOrderTest, FourthDerivativeOfSinIsSin) {
  Tensor x = linspace(-3, 3, 25, DType::Float64).set_requires_grad();
  Tensor u = sin(x);
  Tensor d4 = d(d(d(d(u, x), x), x), x);
  auto got = d4.to_vector<double>(), xs = x.to_vector<double>();
  for (size_t i = 0; i < xs.size(); ++i) EXPECT_NEAR(got[i], std::sin(xs[i]), 1e-12);
  Tensor d6 = d(d(d4, x), x);  // and beyond: 6th derivative = -sin
  auto g6 = d6.to_vector<double>();
  for (size_t i = 0; i < xs.size(); ++i) EXPECT_NEAR(g6[i], -std::sin(xs[i]), 1e-12);
}

Tensor biharmonic(const Tensor& u, const Tensor& x, const Tensor& y) {
  Tensor ux = d(u, x), uy = d(u, y);
  Tensor uxx = d(ux, x), uyy = d(uy, y);
  Tensor uxxxx = d(d(uxx, x), x), uxxyy = d(d(uxx, y), y), uyyyy = d(d(uyy, y), y);
  return add(add(uxxxx, mul(uxxyy, 2.0)), uyyyy);
}

TEST(HigherOrderTest, BiharmonicOfPolynomial) {
  manual_seed(3);
  Tensor x = rand({16}, DType::Float64).set_requires_grad();
  Tensor y = rand({16}, DType::Float64).set_requires_grad();
  // u = x^4 + x^2 y^2 + y^4 + 3x^3 y  ->  biharmonic = 24 + 2*4 + 24 + 0 = 56
  Tensor u = add(add(add(pow(x, 4.0), mul(mul(x, x), mul(y, y))), pow(y, 4.0)), mul(mul(pow(x, 3.0), y), 3.0));
  for (double v : biharmonic(u, x, y).to_vector<double>()) EXPECT_NEAR(v, 56.0, 1e-9);
}

// A small tanh MLP R^2 -> R written with broadcasting (no matmul needed).
struct TinyMlp {
  Tensor w1x, w1y, b1, w2;
  TinyMlp() {
    manual_seed(7);
    w1x = randn({1, 8}, DType::Float64);
    w1y = randn({1, 8}, DType::Float64);
    b1 = randn({1, 8}, DType::Float64);
    w2 = randn({1, 8}, DType::Float64, nullptr, 0.0, 0.5);
  }
  Tensor operator()(const Tensor& x, const Tensor& y) const {
    Tensor h = tanh(add(add(mul(unsqueeze(x, 1), w1x), mul(unsqueeze(y, 1), w1y)), b1));
    return sum(mul(h, w2), {1});
  }
};

TEST(HigherOrderTest, BiharmonicOfTanhMlpMatchesFiniteDifferences) {
  TinyMlp f;
  std::vector<double> px{0.1, -0.4, 0.7}, py{0.3, 0.2, -0.6};
  Tensor x = from_vector(px).set_requires_grad(), y = from_vector(py).set_requires_grad();
  auto got = biharmonic(f(x, y), x, y).to_vector<double>();
  // 13-point finite-difference stencil of the biharmonic (error O(h^2)), with one
  // Richardson step (4 fd(h/2) - fd(h)) / 3 to make it O(h^4).
  auto u = [&](double a, double b) { return f(from_vector<double>({a}), from_vector<double>({b})).item<double>(); };
  auto stencil = [&](double a, double b, double h) {
    double fd = 20 * u(a, b) - 8 * (u(a + h, b) + u(a - h, b) + u(a, b + h) + u(a, b - h)) +
                2 * (u(a + h, b + h) + u(a + h, b - h) + u(a - h, b + h) + u(a - h, b - h)) +
                (u(a + 2 * h, b) + u(a - 2 * h, b) + u(a, b + 2 * h) + u(a, b - 2 * h));
    return fd / (h * h * h * h);
  };
  for (size_t i = 0; i < px.size(); ++i) {
    double a = px[i], b = py[i];
    double fd = (4 * stencil(a, b, 1e-2) - stencil(a, b, 2e-2)) / 3;
    EXPECT_NEAR(got[i], fd, 1e-3 * std::max(1.0, std::abs(fd))) << "point " << i;
  }
}

TEST(HigherOrderTest, GradGradOfElementwiseOps) {
  manual_seed(11);
  Tensor a = add(rand({3}, DType::Float64), 0.5).set_requires_grad();
  Tensor b = add(rand({3}, DType::Float64), 0.5).set_requires_grad();
  auto fn = [](const std::vector<Tensor>& in) {
    return add(div(mul(tanh(in[0]), exp(in[1])), sqrt(in[1])), pow(in[0], in[1]));
  };
  auto r = autograd::gradgradcheck(fn, {a, b});
  EXPECT_TRUE(r.ok) << r.message;
}

}  // namespace skiff
