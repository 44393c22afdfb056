#include "framework/optim/lbfgs.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>

#include "framework/autograd/engine.h"
#include "framework/core/threading.h"
#include "framework/ops/ops.h"

namespace skiff::optim {
namespace {

/// Rosenbrock f(x, y) = (1 - x)^2 + 100 (y - x^2)^2 with an analytic gradient.
struct Rosenbrock {
  Tensor x;
  int evals = 0;
  double operator()() {
    ++evals;
    auto v = x.to_vector<double>();
    const double a = v[0], b = v[1];
    x.set_grad(from_vector<double>({-2 * (1 - a) - 400 * a * (b - a * a), 200 * (b - a * a)}));
    return (1 - a) * (1 - a) + 100 * (b - a * a) * (b - a * a);
  }
};

TEST(LBFGSTest, StrongWolfeSolvesRosenbrock) {
  Rosenbrock f{from_vector<double>({-1.5, 2.0}).set_requires_grad()};
  LBFGS opt({f.x}, {.lr = 1.0, .max_iter = 500, .tolerance_grad = 1e-12, .tolerance_change = 1e-16,
                    .history_size = 10, .strong_wolfe = true});
  opt.step([&] { return f(); });
  auto v = f.x.to_vector<double>();
  EXPECT_NEAR(v[0], 1.0, 1e-6);
  EXPECT_NEAR(v[1], 1.0, 1e-6);
  EXPECT_EQ(opt.func_evals(), f.evals);
  EXPECT_LT(opt.n_iter(), 200);
}

TEST(LBFGSTest, LeastSquaresFitReachesExactSolution) {
  // Overdetermined consistent system: b = A w*, so the minimiser of |A w - b|^2 is w*.
  Generator* gen = nullptr;
  Tensor A = randn({30, 4}, DType::Float64, gen);
  Tensor w_star = from_vector<double>({0.5, -1.25, 2.0, 3.5}, {4, 1});
  Tensor b = matmul(A, w_star);
  Tensor w = zeros({4, 1}, DType::Float64).set_requires_grad();
  Tensor bias = zeros({1}, DType::Float64).set_requires_grad();
  LBFGS opt({w, bias}, {.max_iter = 100, .tolerance_grad = 1e-12, .tolerance_change = 1e-20,
                        .strong_wolfe = true});
  auto closure = [&] {
    opt.zero_grad();
    Tensor r = sub(add(matmul(A, w), bias), b);
    Tensor loss = sum(mul(r, r));
    backward(loss);
    return loss.item<double>();
  };
  opt.step(closure);
  auto got = w.to_vector<double>(), want = w_star.to_vector<double>();
  for (size_t i = 0; i < got.size(); ++i) EXPECT_NEAR(got[i], want[i], 1e-8) << i;
  EXPECT_NEAR(bias.item<double>(), 0.0, 1e-8);
}

TEST(LBFGSTest, FixedStepWithoutLineSearchConvergesOnQuadratic) {
  // f = 0.5 * sum a_i (x_i - c_i)^2; L-BFGS with unit steps after the first is exact on
  // quadratics once the curvature pairs span the space.
  Tensor x = from_vector<double>({0.0, 0.0, 0.0}).set_requires_grad();
  const std::vector<double> a = {1.0, 2.0, 4.0}, c = {1.0, -1.0, 0.5};
  auto closure = [&] {
    auto v = x.to_vector<double>();
    std::vector<double> g(3);
    double f = 0;
    for (int i = 0; i < 3; ++i) g[i] = a[i] * (v[i] - c[i]), f += 0.5 * a[i] * (v[i] - c[i]) * (v[i] - c[i]);
    x.set_grad(from_vector<double>(g));
    return f;
  };
  LBFGS opt({x}, {.lr = 1.0, .max_iter = 50, .tolerance_grad = 1e-12, .tolerance_change = 1e-20});
  opt.step(closure);
  auto v = x.to_vector<double>();
  for (int i = 0; i < 3; ++i) EXPECT_NEAR(v[i], c[i], 1e-8) << i;
}

TEST(LBFGSTest, StateDictResumesIdentically) {
  auto make = [] { return Rosenbrock{from_vector<double>({-1.2, 1.0}).set_requires_grad()}; };
  LBFGSOptions o{.max_iter = 5, .history_size = 4, .strong_wolfe = true};
  Rosenbrock f1 = make();
  LBFGS a({f1.x}, o);
  a.step([&] { return f1(); });
  Rosenbrock f2{from_vector<double>(f1.x.to_vector<double>()).set_requires_grad()};
  LBFGS b({f2.x}, o);
  b.load_state_dict(OptimizerState::from_tensor_map(a.state_dict().to_tensor_map()));
  EXPECT_EQ(b.n_iter(), a.n_iter());
  a.step([&] { return f1(); });
  b.step([&] { return f2(); });
  EXPECT_EQ(f1.x.to_vector<double>(), f2.x.to_vector<double>());
}

TEST(LBFGSTest, RequiresClosureAndOneGroup) {
  Tensor x = zeros({2}, DType::Float64).set_requires_grad();
  LBFGS opt({x});
  EXPECT_THROW(opt.step(nullptr), ValueError);
  EXPECT_THROW(LBFGS({x}, {.lr = 0}), ValueError);
  EXPECT_THROW(LBFGS({x}, {.history_size = 0}), ValueError);
}

TEST(LBFGSTest, BitIdenticalForAnyThreadCount) {
  const int64_t n = 2 * kParallelGrain + 5;
  Tensor a = rand({n}, DType::Float32, nullptr, 0.5, 2.0);
  auto run = [&](int threads) {
    const int prev = num_threads();
    set_num_threads(threads);
    Tensor x = zeros({n}, DType::Float32).set_requires_grad();
    LBFGS opt({x}, {.max_iter = 5, .strong_wolfe = true});
    opt.step([&] {
      // f = 0.5 * sum a (x - 1)^2 with the gradient written by a serial loop.
      const float* xv = x.data<float>();
      const float* av = a.data<float>();
      Tensor g = empty({n}, DType::Float32);
      float* gv = g.data<float>();
      double f = 0;
      for (int64_t i = 0; i < n; ++i) gv[i] = av[i] * (xv[i] - 1), f += 0.5 * av[i] * (xv[i] - 1) * (xv[i] - 1);
      x.set_grad(g);
      return f;
    });
    set_num_threads(prev);
    return x;
  };
  Tensor x1 = run(1), x4 = run(4);
  EXPECT_EQ(std::memcmp(x1.data_ptr(), x4.data_ptr(), x1.nbytes()), 0);
}

}  // namespace
}  // namespace skiff::optim
